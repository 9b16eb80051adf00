import { insertUsageRows, stampKeyUses, type UsageRow } from '../src/core/usage';

/** How long a usage row may wait in the outbox, so rows of busy moments travel to D1 together. */
export const USAGE_FLUSH_MS = 500;
const BATCH = 100;

/**
 * Usage rows and key uses on their way to D1, kept in the wallet's own SQLite in the same transaction
 * as the money movement they describe, then written to D1 in batches by the wallet's alarm. One D1
 * write per batch instead of one per call, and a row is never lost: it leaves the outbox only once D1
 * has it. Key uses keep only each key's latest time, so 1,000 calls of a key are one `last_used_at` write.
 */
export class UsageOutbox {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`
      CREATE TABLE IF NOT EXISTS usage_outbox (id TEXT PRIMARY KEY, row TEXT NOT NULL, queued_at INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS key_use_outbox (key_id TEXT PRIMARY KEY, used_at INTEGER NOT NULL, queued_at INTEGER NOT NULL);
    `);
  }

  /** Queues rows in one statement, in their order: a message's hundred rows cost one insert, not a hundred. */
  add(rows: readonly UsageRow[]): void {
    if (rows.length === 0) return;
    this.sql.exec("INSERT OR IGNORE INTO usage_outbox (id, row, queued_at) SELECT value ->> '$.id', value, ? FROM json_each(?) ORDER BY key", Date.now(), JSON.stringify(rows));
  }

  useKey(keyId: string, at: number): void {
    this.sql.exec(
      `INSERT INTO key_use_outbox (key_id, used_at, queued_at) VALUES (?, ?, ?)
       ON CONFLICT (key_id) DO UPDATE SET used_at = MAX(used_at, excluded.used_at)`,
      keyId, at, Date.now(),
    );
  }

  /** Whether a usage row queued before `at` (real time) still waits for D1. */
  waitsSince(at: number): boolean {
    const oldest = this.sql.exec<{ queued_at: number }>('SELECT queued_at FROM usage_outbox ORDER BY rowid LIMIT 1').toArray()[0];
    return oldest !== undefined && oldest.queued_at < at;
  }

  /** When the oldest waiting entry is due, or null when the outbox is empty. */
  dueAt(): number | null {
    // The first row in insertion order (rowid) is the oldest: one step down the table's b-tree, not a scan.
    const oldest = this.sql
      .exec<{ at: number | null }>(
        'SELECT MIN(at) AS at FROM (SELECT (SELECT queued_at FROM usage_outbox ORDER BY rowid LIMIT 1) AS at UNION ALL SELECT (SELECT queued_at FROM key_use_outbox ORDER BY rowid LIMIT 1))',
      )
      .one().at;
    return oldest === null ? null : oldest + USAGE_FLUSH_MS;
  }

  /**
   * Writes every waiting row to D1, a batch at a time, oldest first; a failed batch stays for the alarm's
   * retry. Each batch is read in rowid (insertion) order, so it costs the batch, not a sort of the whole
   * outbox: a backlog while D1 lags drains in linear time.
   */
  async flush(db: D1Database): Promise<void> {
    for (;;) {
      const waiting = this.sql.exec<{ id: string; row: string }>('SELECT id, row FROM usage_outbox ORDER BY rowid LIMIT ?', BATCH).toArray();
      if (waiting.length === 0) break;
      await insertUsageRows(db, `[${waiting.map((entry) => entry.row).join(',')}]`).run();
      this.sql.exec(`DELETE FROM usage_outbox WHERE id IN (${waiting.map(() => '?').join(', ')})`, ...waiting.map((entry) => entry.id));
    }
    for (;;) {
      const uses = this.sql.exec<{ key_id: string; used_at: number }>('SELECT key_id, used_at FROM key_use_outbox ORDER BY rowid LIMIT ?', BATCH).toArray();
      if (uses.length === 0) return;
      await stampKeyUses(db, JSON.stringify(uses.map((use) => [use.key_id, new Date(use.used_at).toISOString()]))).run();
      // A newer use that arrived during the write stays queued: only the uses just written leave.
      const written = this.sql.exec(
        "DELETE FROM key_use_outbox WHERE (key_id, used_at) IN (SELECT value ->> '$[0]', value ->> '$[1]' FROM json_each(?)) RETURNING key_id",
        JSON.stringify(uses.map((use) => [use.key_id, use.used_at])),
      ).toArray().length;
      // Every one was used again meanwhile (keys in constant use): the next alarm writes them, this one stops.
      if (written === 0) return;
    }
  }
}
