import type { CreditMovement } from '../src/services/webhooks/announce';

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
   * Remembers `available` as said; a rise re-arms both events. A movement said moves the count on, so the next
   * movement's events have ids of their own, while an alarm retried before this ran says the same ids again.
   */
  reported(available: number, movement: CreditMovement | null): void {
    const watch = this.row();
    const rose = watch.reported_units !== null && available > watch.reported_units;
    const exhausted = movement?.exhausted ? 1 : rose ? 0 : watch.exhausted;
    this.sql.exec('UPDATE credit_watch SET reported_units = ?, exhausted = ?, refused = 0, said = said + ?', available, exhausted, movement ? 1 : 0);
  }

  private row(): WatchRow {
    const row = this.sql.exec<WatchRow>('SELECT organization_id, reported_units, exhausted, refused, said FROM credit_watch').one();
    this.started = row.organization_id !== null && row.reported_units !== null;
    return row;
  }
}
