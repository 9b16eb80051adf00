import { insertUsage, type UsageRow } from '../src/core/usage';

/** How long a usage row may wait in the outbox, so rows of busy moments travel to D1 together. */
export const USAGE_FLUSH_MS = 500;
const BATCH = 100;

/**
 * Usage rows on their way to D1, kept in the wallet's own SQLite in the same transaction as the money
 * movement they describe, then written to D1 in batches by the wallet's alarm. One D1 write per batch
 * instead of one per call, and a row is never lost: it leaves the outbox only once D1 has it.
 */
export class UsageOutbox {
  constructor(private readonly sql: SqlStorage) {
    sql.exec('CREATE TABLE IF NOT EXISTS usage_outbox (id TEXT PRIMARY KEY, row TEXT NOT NULL, queued_at INTEGER NOT NULL)');
  }

  add(row: UsageRow): void {
    this.sql.exec('INSERT OR IGNORE INTO usage_outbox (id, row, queued_at) VALUES (?, ?, ?)', row.id, JSON.stringify(row), Date.now());
  }

  /** When the oldest waiting row is due, or null when the outbox is empty. */
  dueAt(): number | null {
    const oldest = this.sql.exec<{ at: number | null }>('SELECT MIN(queued_at) AS at FROM usage_outbox').one().at;
    return oldest === null ? null : oldest + USAGE_FLUSH_MS;
  }

  /** Writes every waiting row to D1, a batch at a time; a failed batch stays for the alarm's retry. */
  async flush(db: D1Database): Promise<void> {
    for (;;) {
      const waiting = this.sql.exec<{ id: string; row: string }>('SELECT id, row FROM usage_outbox ORDER BY queued_at LIMIT ?', BATCH).toArray();
      if (waiting.length === 0) return;
      await db.batch(waiting.map((entry) => insertUsage(db, JSON.parse(entry.row) as UsageRow)));
      for (const entry of waiting) this.sql.exec('DELETE FROM usage_outbox WHERE id = ?', entry.id);
    }
  }
}
