import { clock } from '../src/core/clock';
import { centsFromUnits } from '../src/core/money';
import type { CreditMovement } from '../src/services/webhooks/announce';
import type { CreditAudience } from '../src/services/webhooks/endpoints';

/**
 * How long the wallet trusts what it read of who hears of its credits. Every change through the API tells it at
 * once (`forgetAudience`); this bounds how long one it was not told of (a failed call) goes unseen.
 */
export const CREDIT_AUDIENCE_FRESH_MS = 10 * 60_000;

interface AudienceRow extends Record<string, SqlStorageValue> {
  thresholds: string | null;
  exhausted: number;
  read_at: number | null;
  generation: number;
}

interface WatchRow extends Record<string, SqlStorageValue> {
  organization_id: string | null;
  reported_units: number | null;
  exhausted: number;
  refused: number;
  said: number;
}

/**
 * What the wallet last told webhook endpoints about its balance, so credits.low is sent once per fall
 * below a threshold and credits.exhausted once per exhaustion: both are said again only after the balance
 * has risen (a top-up, a new period). Kept in the wallet's own SQLite; read by its alarm, off every call's path.
 */
export class CreditWatch {
  /**
   * Seen set (organization and starting balance) in a committed read: neither goes back to null, so
   * `beforeCharges` has nothing left to do. Learned outside any message's transaction, which could roll back.
   */
  private started = false;

  constructor(private readonly sql: SqlStorage) {
    sql.exec(`
      CREATE TABLE IF NOT EXISTS credit_watch (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        organization_id TEXT,
        reported_units INTEGER,
        exhausted INTEGER NOT NULL DEFAULT 0,
        refused INTEGER NOT NULL DEFAULT 0,
        said INTEGER NOT NULL DEFAULT 0
      );
      INSERT OR IGNORE INTO credit_watch (id) VALUES (1);
      CREATE TABLE IF NOT EXISTS credit_audience (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        thresholds TEXT,
        exhausted INTEGER NOT NULL DEFAULT 0,
        read_at INTEGER,
        generation INTEGER NOT NULL DEFAULT 0
      );
      INSERT OR IGNORE INTO credit_audience (id) VALUES (1);
    `);
    // Wallets made before the count of movements said was kept.
    if (!sql.exec<{ name: string }>('PRAGMA table_info(credit_watch)').toArray().some((column) => column.name === 'said')) {
      sql.exec('ALTER TABLE credit_watch ADD COLUMN said INTEGER NOT NULL DEFAULT 0');
    }
  }

  /**
   * Before charges are applied: the wallet learns whose it is from the usage rows its workspaces report,
   * and the first time, the balance those charges start from, so a fall in the very first batch counts.
   */
  beforeCharges(organizationId: string, availableUnits: number): void {
    if (this.started) return;
    this.sql.exec(
      'UPDATE credit_watch SET organization_id = COALESCE(organization_id, ?), reported_units = COALESCE(reported_units, ?)',
      organizationId, availableUnits,
    );
  }

  /** A call was refused 402 INSUFFICIENT_CREDITS: the balance is exhausted for that call, whatever it reads. */
  refusedForCredits(): void {
    this.sql.exec('UPDATE credit_watch SET refused = 1');
  }

  /** What there is to announce now that the balance is `available`, or null (nothing fell, nothing ran out). */
  movement(balance: { subscriptionUnits: number; purchasedUnits: number }): CreditMovement | null {
    const watch = this.row();
    const available = balance.subscriptionUnits + balance.purchasedUnits;
    if (!watch.organization_id || watch.reported_units === null) return null;
    const exhausted = !watch.exhausted && (available <= 0 || watch.refused === 1);
    if (available >= watch.reported_units && !exhausted) return null;
    return { organizationId: watch.organization_id, seq: watch.said, fromUnits: watch.reported_units, toUnits: available, exhausted, ...balance };
  }

  /**
   * Remembers `available` as said; a rise re-arms both events. A movement said, and a rise, move the count on, so
   * the next movement's events have ids of their own, while an alarm retried before this ran says the same ids
   * again. A rise must too: an alarm stopped after telling some endpoints of a fall, then a top-up before its retry
   * (which finds no movement), then a second fall would otherwise reuse the first fall's ids, and the endpoints
   * told of the first would not hear of the second.
   */
  reported(available: number, movement: CreditMovement | null): void {
    const watch = this.row();
    const rose = watch.reported_units !== null && available > watch.reported_units;
    const exhausted = movement?.exhausted ? 1 : rose ? 0 : watch.exhausted;
    this.sql.exec('UPDATE credit_watch SET reported_units = ?, exhausted = ?, refused = 0, said = said + ?', available, exhausted, movement || rose ? 1 : 0);
  }

  /**
   * Whether anyone is to hear of `movement`: an endpoint whose credits.low threshold it crossed, or one that wants
   * credits.exhausted when it says so. Read from the endpoints once per CREDIT_AUDIENCE_FRESH_MS, or after a change
   * (`forgetAudience`), instead of at every alarm whose balance fell (about two a second under steady calls).
   */
  async anyoneToTell(movement: CreditMovement, read: () => Promise<CreditAudience>): Promise<boolean> {
    const audience = await this.audience(read);
    if (movement.exhausted && audience.exhausted) return true;
    const [from, to] = [centsFromUnits(movement.fromUnits), centsFromUnits(movement.toUnits)];
    return audience.thresholdsCents.some((threshold) => from >= threshold && to < threshold);
  }

  /** An endpoint was added, changed or removed: read the audience again. A read under way when told is not kept. */
  forgetAudience(): void {
    this.sql.exec('UPDATE credit_audience SET thresholds = NULL, read_at = NULL, generation = generation + 1');
  }

  private async audience(read: () => Promise<CreditAudience>): Promise<CreditAudience> {
    const row = this.sql.exec<AudienceRow>('SELECT thresholds, exhausted, read_at, generation FROM credit_audience').one();
    const now = clock.now();
    if (row.thresholds !== null && row.read_at !== null && now - row.read_at < CREDIT_AUDIENCE_FRESH_MS) {
      return { thresholdsCents: JSON.parse(row.thresholds) as number[], exhausted: row.exhausted === 1 };
    }
    const audience = await read();
    this.sql.exec(
      'UPDATE credit_audience SET thresholds = ?, exhausted = ?, read_at = ? WHERE generation = ?',
      JSON.stringify(audience.thresholdsCents), audience.exhausted ? 1 : 0, now, row.generation,
    );
    return audience;
  }

  private row(): WatchRow {
    const row = this.sql.exec<WatchRow>('SELECT organization_id, reported_units, exhausted, refused, said FROM credit_watch').one();
    this.started = row.organization_id !== null && row.reported_units !== null;
    return row;
  }
}
