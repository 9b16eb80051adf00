import { DurableObject } from 'cloudflare:workers';
import { clock } from '../src/core/clock';
import type { ObjectBindings } from '../src/core/object-bindings';
import type { ClaimAnswer, IdempotencyStoreProtocol } from '../src/core/protocols/idempotency';
import { LEDGER_DETAIL_MS } from './ledger-summaries';

/** How long a key protects its call: a retry within this long of the first call is answered from here. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
/**
 * What one workspace keeps in answers at most. Past it, new calls are still protected from a second
 * charge (their key and digest are kept) but their answers are not, so no workspace can fill the object.
 */
export const KEPT_BYTES_PER_WORKSPACE = 100 * 1024 * 1024;
/** Expired keys deleted per claim or alarm: the work of a purge stays bounded, the rest waits for the next. */
const PURGE_BATCH = 500;

type State = 'running' | 'answered' | 'unkept';

interface KeyRow extends Record<string, SqlStorageValue> {
  digest: string;
  state: State;
  running_until: number;
  expires_at: number;
  answer: string | null;
  answer_bytes: number;
  call_id: string | null;
  cost_units: number;
  began_at: number | null;
}

/**
 * One per workspace, reached only by calls that carry an idempotency key (the workspace's gate, on every
 * call's path, is left alone). Each method runs with no `await`, so a claim is atomic: of ten
 * simultaneous calls with one key, exactly one is told to run.
 */
export class IdempotencyStore extends DurableObject<ObjectBindings> implements IdempotencyStoreProtocol {
  /** Bytes of answers kept now: the sum of the table's answered rows, kept in step and stored (`kept_bytes`). */
  private keptBytes: number;
  private alarmAt: number | null = null;

  constructor(ctx: DurableObjectState, env: ObjectBindings) {
    super(ctx, env);
    // An alarm set before a restart is kept, so a claim does not push it later.
    void ctx.blockConcurrencyWhile(async () => {
      this.alarmAt = await ctx.storage.getAlarm();
    });
    const sql = ctx.storage.sql;
    sql.exec(`CREATE TABLE IF NOT EXISTS idempotency_keys (
      key TEXT PRIMARY KEY,
      digest TEXT NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('running', 'answered', 'unkept')),
      running_until INTEGER NOT NULL,
      expires_at INTEGER NOT NULL,
      answer TEXT,
      answer_bytes INTEGER NOT NULL DEFAULT 0,
      call_id TEXT,
      cost_units INTEGER NOT NULL DEFAULT 0,
      began_at INTEGER
    )`);
    // Stores made before call ids and charges were kept get the columns; their running claims lapse as before.
    const columns = new Set(sql.exec<{ name: string }>('PRAGMA table_info(idempotency_keys)').toArray().map((column) => column.name));
    if (!columns.has('call_id')) sql.exec('ALTER TABLE idempotency_keys ADD COLUMN call_id TEXT');
    if (!columns.has('cost_units')) sql.exec('ALTER TABLE idempotency_keys ADD COLUMN cost_units INTEGER NOT NULL DEFAULT 0');
    if (!columns.has('began_at')) sql.exec('ALTER TABLE idempotency_keys ADD COLUMN began_at INTEGER');
    sql.exec('CREATE INDEX IF NOT EXISTS idempotency_keys_by_expiry ON idempotency_keys (expires_at)');
    // The sum is stored as it moves, so a start reads one row, not every key of the day (a data job's items are
    // keys too: a 100,000-item job left 100,000 rows to sum at each start). A store made before it sums them once.
    sql.exec('CREATE TABLE IF NOT EXISTS kept_bytes (id INTEGER PRIMARY KEY CHECK (id = 1), bytes INTEGER NOT NULL)');
    const stored = sql.exec<{ bytes: number }>('SELECT bytes FROM kept_bytes').toArray()[0];
    this.keptBytes = stored?.bytes ?? sql.exec<{ kept: number }>("SELECT COALESCE(SUM(answer_bytes), 0) AS kept FROM idempotency_keys WHERE state = 'answered'").one().kept;
    if (!stored) this.storeKeptBytes();
  }

  /**
   * The first call with a key claims it for `runningForMs` (its time limit and the hold's grace: past
   * that, a call still unanswered is dead and its money was given back). A retry learns what became of it.
   * A claim taken over from a dead call keeps that call's id: a process killed after the gate stored the
   * charge and before `complete` left a charge under that id, which the wallet and D1 then count once. The
   * wallet matches ids only for its detail window (`LEDGER_DETAIL_MS`), so a takeover of a call begun half of
   * that ago or more is marked `lateTakeover`, for the caller to look for the call's charge first. The call
   * began when its id was first claimed, whatever takeovers came since (`began_at`): a takeover that died
   * too leaves the first call's charge as old as it was.
   */
  claim(key: string, digest: string, runningForMs: number, callId: string): ClaimAnswer {
    const now = clock.now();
    this.purge(now);
    const found = this.rowOf(key);
    const row = found && found.expires_at > now ? found : undefined;
    // Expired, and past the purge's batch: the claim below replaces it, so its answer leaves the sum now (a replaced
    // row's bytes would otherwise stay counted for good, stored with the sum).
    if (found && !row) this.forget([found]);
    if (row) {
      if (row.digest !== digest) return { kind: 'mismatch' };
      if (row.state === 'answered') return { kind: 'replay', answer: row.answer! };
      if (row.state === 'unkept') return { kind: 'unkept', answerBytes: row.answer_bytes, costUnits: row.cost_units };
      if (row.running_until > now) return { kind: 'running', lapsesInMs: row.running_until - now };
    }
    const expiresAt = now + IDEMPOTENCY_WINDOW_MS;
    const id = row?.call_id ?? callId;
    // Rows from before `began_at` was kept began when their key was last claimed.
    const began = row ? (row.began_at ?? row.expires_at - IDEMPOTENCY_WINDOW_MS) : now;
    // A lapsed first call begun half the wallet's detail window ago or more: its capture may be folded by now.
    const lateTakeover = row !== undefined && now - began >= LEDGER_DETAIL_MS / 2;
    this.ctx.storage.sql.exec(
      `INSERT OR REPLACE INTO idempotency_keys (key, digest, state, running_until, expires_at, answer, answer_bytes, call_id, began_at)
       VALUES (?, ?, 'running', ?, ?, NULL, 0, ?, ?)`,
      key,
      digest,
      now + runningForMs,
      expiresAt,
      id,
      began,
    );
    this.alarmNoLaterThan(Date.now() + (expiresAt - now));
    return { kind: 'claimed', callId: id, ...(lateTakeover ? { lateTakeover } : {}) };
  }

  /**
   * Keeps a success's answer for the retries to come, or, when it is null (over the per-answer bound)
   * or the workspace keeps too much already, only that it succeeded and what it was charged. Answers
   * whether the answer was kept.
   */
  complete(key: string, digest: string, answer: string | null, answerBytes: number, costUnits: number): boolean {
    const row = this.rowOf(key);
    if (!row || row.expires_at <= clock.now() || row.digest !== digest || row.state !== 'running') return false;
    const kept = answer !== null && this.keptBytes + answerBytes <= KEPT_BYTES_PER_WORKSPACE;
    this.ctx.storage.sql.exec(
      'UPDATE idempotency_keys SET state = ?, answer = ?, answer_bytes = ?, cost_units = ? WHERE key = ?',
      kept ? 'answered' : 'unkept',
      kept ? answer : null,
      answerBytes,
      costUnits,
      key,
    );
    if (kept) {
      this.keptBytes += answerBytes;
      this.storeKeptBytes();
    }
    return kept;
  }

  /**
   * A call that failed gives its key back: failures cost nothing, so the retry runs afresh, as a new call. With
   * `keepCall`, the retry of a dead call that was a success, it gives back only its turn: the claim lapses now,
   * and the next retry takes it over as this one did, with the first call's id and age (`claim`).
   */
  release(key: string, digest: string, keepCall = false): void {
    const sql = this.ctx.storage.sql;
    if (keepCall) sql.exec("UPDATE idempotency_keys SET running_until = ? WHERE key = ? AND digest = ? AND state = 'running'", clock.now(), key, digest);
    else sql.exec("DELETE FROM idempotency_keys WHERE key = ? AND digest = ? AND state = 'running'", key, digest);
  }

  /** Deletes what expired, so a workspace that stops sending keys does not keep their answers. */
  override alarm(): void {
    this.alarmAt = null;
    const now = clock.now();
    this.purge(now);
    const next = this.ctx.storage.sql.exec<{ next: number | null }>('SELECT MIN(expires_at) AS next FROM idempotency_keys').one().next;
    if (next !== null) this.alarmNoLaterThan(Date.now() + Math.max(0, next - now));
  }

  /** The key's row, expired or not (a purge takes expired rows a batch at a time): each caller reads `expires_at`. */
  private rowOf(key: string): KeyRow | undefined {
    return this.ctx.storage.sql
      .exec<KeyRow>('SELECT digest, state, running_until, expires_at, answer, answer_bytes, call_id, cost_units, began_at FROM idempotency_keys WHERE key = ?', key)
      .toArray()[0];
  }

  private purge(now: number): void {
    this.forget(
      this.ctx.storage.sql
        .exec<{ state: State; answer_bytes: number }>(
          `DELETE FROM idempotency_keys WHERE key IN (SELECT key FROM idempotency_keys WHERE expires_at <= ? LIMIT ${PURGE_BATCH})
           RETURNING state, answer_bytes`,
          now,
        )
        .toArray(),
    );
  }

  /** Takes the answers of deleted rows out of the sum. */
  private forget(deleted: Array<{ state: State; answer_bytes: number }>): void {
    const answered = deleted.filter((row) => row.state === 'answered');
    if (answered.length === 0) return;
    for (const row of answered) this.keptBytes -= row.answer_bytes;
    this.storeKeptBytes();
  }

  /** Stores the sum in the same turn as the change that moved it: both are in the turn's one transaction. */
  private storeKeptBytes(): void {
    this.ctx.storage.sql.exec('INSERT INTO kept_bytes (id, bytes) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET bytes = excluded.bytes', this.keptBytes);
  }

  private alarmNoLaterThan(at: number): void {
    if (this.alarmAt !== null && this.alarmAt <= at) return;
    this.alarmAt = at;
    void this.ctx.storage.setAlarm(at);
  }
}
