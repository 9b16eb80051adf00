import { DurableObject } from 'cloudflare:workers';
import { clock } from '../src/core/clock';
import type { Env } from '../src/core/config';
import type { Delivery } from '../src/core/webhook-delivery';
import { eventBody, type WebhookEvent } from '../src/core/webhook-events';
import type { WebhookSenderProtocol } from '../src/core/protocols/webhook-sender';
import { ATTEMPT_TIME_LIMIT_MS, MAX_ATTEMPTS, retryDelay } from '../src/services/webhooks/retry-schedule';
import { attemptDelivery, type AttemptResult } from '../src/services/webhooks/signed-delivery';
import { logEvent } from '../src/core/log';

/** Deliveries kept per endpoint for GET .../deliveries; older finished ones are dropped. */
const KEPT_DELIVERIES = 200;
/** Deliveries sent at once by one alarm; the rest wait for the next. */
const BATCH = 10;
/** A delivery being attempted is not due again until its attempt must have ended. */
const CLAIM_MS = ATTEMPT_TIME_LIMIT_MS + 5_000;

interface DeliveryRow extends Record<string, SqlStorageValue> {
  event_id: string;
  endpoint_id: string;
  type: string;
  body: string;
  state: Delivery['state'];
  reason: string | null;
  created_at: number;
  next_at: number | null;
  attempts: number;
}

interface AttemptRow extends Record<string, SqlStorageValue> {
  event_id: string;
  attempt: number;
  at: number;
  status: number | null;
  error: string | null;
  duration_ms: number;
}

/**
 * One per webhook endpoint: the events waiting to be delivered to it, each attempt and its outcome, and
 * the retries, driven by this object's alarm (times on the injectable clock). A delivery is sent until a
 * 2xx comes back or MAX_ATTEMPTS have failed; the event id stays the same on every attempt.
 */
export class WebhookSender extends DurableObject<Env> implements WebhookSenderProtocol {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(`
      CREATE TABLE IF NOT EXISTS deliveries (
        event_id TEXT PRIMARY KEY,
        endpoint_id TEXT NOT NULL,
        type TEXT NOT NULL,
        body TEXT NOT NULL,
        state TEXT NOT NULL,
        reason TEXT,
        created_at INTEGER NOT NULL,
        next_at INTEGER,
        attempts INTEGER NOT NULL DEFAULT 0
      );
      CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (next_at) WHERE state = 'pending';
      -- The newest first, for the list; and the finished ones newest first, for the prune after every event. Without
      -- them each event read and sorted every delivery, and an endpoint down for a day gathers all of its events.
      CREATE INDEX IF NOT EXISTS deliveries_by_time ON deliveries (created_at);
      CREATE INDEX IF NOT EXISTS deliveries_finished ON deliveries (created_at) WHERE state != 'pending';
      CREATE TABLE IF NOT EXISTS attempts (
        event_id TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        at INTEGER NOT NULL,
        status INTEGER,
        error TEXT,
        duration_ms INTEGER NOT NULL,
        PRIMARY KEY (event_id, attempt)
      );
    `);
  }

  /** Whether this endpoint has the event: pending, or among the last KEPT_DELIVERIES that ended. */
  has(eventId: string): boolean {
    return this.sql.exec('SELECT 1 FROM deliveries WHERE event_id = ?', eventId).toArray().length > 0;
  }

  /** Queues an event for delivery right away (by the alarm, off the caller's path). An event already queued here is not queued twice. */
  enqueue(endpointId: string, event: WebhookEvent): void {
    if (this.insert(endpointId, event, 'pending', null)) this.schedule();
  }

  /** Records an event that will not be sent (the cap), so the endpoint's owner sees it was not. */
  skip(endpointId: string, event: WebhookEvent, reason: string): void {
    this.insert(endpointId, event, 'skipped', reason);
  }

  /** Queues an event and makes its first attempt now, answering how it went (the test call). A failure is retried like any other. */
  async sendNow(endpointId: string, event: WebhookEvent): Promise<Delivery> {
    this.insert(endpointId, event, 'pending', null);
    const row = this.row(event.id)!;
    await this.attempt(row);
    this.schedule();
    return this.deliveryOf(this.row(event.id)!);
  }

  /** The newest deliveries first, each with its attempts. */
  deliveries(limit = 25): Delivery[] {
    return this.sql
      .exec<DeliveryRow>('SELECT * FROM deliveries ORDER BY created_at DESC, rowid DESC LIMIT ?', limit)
      .toArray()
      .map((row) => this.deliveryOf(row));
  }

  /** The endpoint was deleted: nothing more is sent, nothing is kept. */
  async forget(): Promise<void> {
    this.sql.exec('DELETE FROM attempts; DELETE FROM deliveries;');
    await this.ctx.storage.deleteAlarm();
  }

  /** Sends what is due, then sets the alarm for the next delivery due. */
  override async alarm(): Promise<void> {
    const due = this.sql
      .exec<DeliveryRow>("SELECT * FROM deliveries WHERE state = 'pending' AND next_at <= ? ORDER BY next_at LIMIT ?", clock.now(), BATCH)
      .toArray();
    await Promise.all(due.map((row) => this.attempt(row)));
    this.schedule();
  }

  private insert(endpointId: string, event: WebhookEvent, state: Delivery['state'], reason: string | null): boolean {
    const now = clock.now();
    const inserted = this.sql
      .exec(
        `INSERT OR IGNORE INTO deliveries (event_id, endpoint_id, type, body, state, reason, created_at, next_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING event_id`,
        event.id, endpointId, event.type, eventBody(event), state, reason, now, state === 'pending' ? now : null,
      )
      .toArray();
    this.prune();
    return inserted.length > 0;
  }

  /**
   * One attempt of a delivery. It is claimed first (its next time moved past the attempt's time limit),
   * so an alarm that fires meanwhile does not send it twice; the outcome then sets its next time or ends it.
   */
  private async attempt(row: DeliveryRow): Promise<void> {
    this.sql.exec('UPDATE deliveries SET next_at = ? WHERE event_id = ?', clock.now() + CLAIM_MS, row.event_id);
    // The alarm before the request: should the object be reset while it waits (a deploy), the claim's end retries it.
    this.schedule();
    const started = Date.now();
    const at = clock.now();
    let result: AttemptResult;
    try {
      result = await attemptDelivery(this.env, row.endpoint_id, row.event_id, row.body);
    } catch (error) {
      result = { gone: false, status: null, error: `The attempt could not be made (${String(error)}).` };
    }
    if (result.gone) {
      await this.forget();
      return;
    }
    const attempt = row.attempts + 1;
    this.sql.exec(
      'INSERT OR REPLACE INTO attempts (event_id, attempt, at, status, error, duration_ms) VALUES (?, ?, ?, ?, ?, ?)',
      row.event_id, attempt, at, result.status, result.error, Date.now() - started,
    );
    const delivered = result.error === null;
    const delay = delivered ? null : retryDelay(attempt);
    const state: Delivery['state'] = delivered ? 'delivered' : delay === null ? 'failed' : 'pending';
    const reason = state === 'failed' ? `Gave up after ${MAX_ATTEMPTS} attempts.` : null;
    this.sql.exec(
      'UPDATE deliveries SET attempts = ?, state = ?, reason = ?, next_at = ? WHERE event_id = ?',
      attempt, state, reason, delay === null ? null : clock.now() + delay, row.event_id,
    );
    logEvent(delivered ? 'info' : state === 'failed' ? 'error' : 'warn', 'webhook.delivery', {
      endpointId: row.endpoint_id,
      eventId: row.event_id,
      attempt,
      status: result.status,
      state,
      ms: Date.now() - started,
      ...(result.error ? { error: result.error } : {}),
    });
  }

  /** Sets the alarm for the earliest pending delivery, converting its time on the clock to the platform's. */
  private schedule(): void {
    const next = this.sql.exec<{ at: number | null }>("SELECT MIN(next_at) AS at FROM deliveries WHERE state = 'pending'").one().at;
    if (next === null) {
      void this.ctx.storage.deleteAlarm();
      return;
    }
    void this.ctx.storage.setAlarm(Date.now() + Math.max(0, next - clock.now()));
  }

  private prune(): void {
    this.sql.exec(
      `DELETE FROM attempts WHERE event_id IN (SELECT event_id FROM deliveries WHERE state != 'pending' ORDER BY created_at DESC, rowid DESC LIMIT -1 OFFSET ?)`,
      KEPT_DELIVERIES,
    );
    this.sql.exec(
      `DELETE FROM deliveries WHERE event_id IN (SELECT event_id FROM deliveries WHERE state != 'pending' ORDER BY created_at DESC, rowid DESC LIMIT -1 OFFSET ?)`,
      KEPT_DELIVERIES,
    );
  }

  private row(eventId: string): DeliveryRow | undefined {
    return this.sql.exec<DeliveryRow>('SELECT * FROM deliveries WHERE event_id = ?', eventId).toArray()[0];
  }

  private deliveryOf(row: DeliveryRow): Delivery {
    const attempts = this.sql.exec<AttemptRow>('SELECT * FROM attempts WHERE event_id = ? ORDER BY attempt', row.event_id).toArray();
    return {
      id: row.event_id,
      type: row.type,
      state: row.state,
      reason: row.reason,
      createdAt: new Date(row.created_at).toISOString(),
      // A claimed delivery's next time is its claim, not a plan: shown once the attempt has ended.
      nextAttemptAt: row.state === 'pending' && row.next_at !== null ? new Date(row.next_at).toISOString() : null,
      payload: row.body,
      attempts: attempts.map((attempt) => ({
        attempt: attempt.attempt,
        at: new Date(attempt.at).toISOString(),
        status: attempt.status,
        error: attempt.error,
        durationMs: attempt.duration_ms,
      })),
    };
  }
}
