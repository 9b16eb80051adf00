import { insertUsageRows, stampKeyUses, type UsageRow } from '../src/core/usage';

/** How long a usage row may wait in the outbox, so rows of busy moments travel to D1 together. */
export const USAGE_FLUSH_MS = 500;
/** Usage rows written to D1 in one statement: queued lots are taken whole until this many are gathered. */
const ROWS_PER_WRITE = 100;
const KEY_USES_PER_WRITE = 100;

/**
 * Usage rows and key uses on their way to D1, kept in the wallet's own SQLite in the same transaction
 * as the money movement they describe, then written to D1 in batches by the wallet's alarm. One D1
 * write per batch instead of one per call, and a row is never lost: it leaves the outbox only once D1
 * has it. A gate's message queues its rows as one lot, the JSON text D1's insert reads, so a call's row
 * costs the wallet no row of its own, neither written nor deleted (D1's insert ignores an id it has, so a
 * row queued twice lands once). Key uses keep only each key's latest time, so 1,000 calls of a key are one
 * `last_used_at` write.
 */
export class UsageOutbox {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`
      CREATE TABLE IF NOT EXISTS usage_lots (seq INTEGER PRIMARY KEY, rows TEXT NOT NULL, count INTEGER NOT NULL, queued_at INTEGER NOT NULL, ledger_seq INTEGER);
      CREATE TABLE IF NOT EXISTS key_use_outbox (key_id TEXT PRIMARY KEY, used_at INTEGER NOT NULL, queued_at INTEGER NOT NULL);
    `);
    // Lots queued before `ledger_seq` was kept have none: no capture is taken for landed while one of them waits.
    if (!sql.exec<{ name: string }>('PRAGMA table_info(usage_lots)').toArray().some((column) => column.name === 'ledger_seq')) {
      sql.exec('ALTER TABLE usage_lots ADD COLUMN ledger_seq INTEGER');
    }
    // A wallet from before lots kept a row each (`usage_outbox`): what still waits there becomes the first lot,
    // its rows joined as they were queued, unparsed (a row D1 would refuse is refused there, not here).
    const older = sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'usage_outbox'").toArray().length > 0;
    if (older) {
      sql.exec(`
        INSERT INTO usage_lots (seq, rows, count, queued_at)
          SELECT 0, '[' || rows || ']', count, queued_at
            FROM (SELECT group_concat(row, ',') AS rows, COUNT(*) AS count, MIN(queued_at) AS queued_at FROM (SELECT row, queued_at FROM usage_outbox ORDER BY rowid))
           WHERE count > 0;
        DROP TABLE usage_outbox;
      `);
    }
  }

  /**
   * Queues rows as one lot, in their order: a message's hundred rows cost one row here, not a hundred. The lot
   * keeps the wallet's last ledger entry as it is queued (`ledger_seq`), before the captures of the same
   * message are written: every capture up to it had its rows queued in an earlier lot.
   */
  add(rows: readonly UsageRow[]): void {
    if (rows.length === 0) return;
    this.sql.exec(
      'INSERT INTO usage_lots (rows, count, queued_at, ledger_seq) VALUES (?, ?, ?, COALESCE((SELECT MAX(seq) FROM ledger), 0))',
      JSON.stringify(rows), rows.length, Date.now(),
    );
  }

  useKey(keyId: string, at: number): void {
    this.sql.exec(
      `INSERT INTO key_use_outbox (key_id, used_at, queued_at) VALUES (?, ?, ?)
       ON CONFLICT (key_id) DO UPDATE SET used_at = MAX(used_at, excluded.used_at)`,
      keyId, at, Date.now(),
    );
  }

  /**
   * The last ledger entry whose usage rows have all reached D1: lots leave in order, so it is the one the
   * oldest waiting lot was queued after (0 when that lot is older than the bound kept); null when none waits.
   * Read in the ledger's own order, not by the clock, so a capture is never taken for landed while its row waits.
   */
  landedThrough(): number | null {
    const oldest = this.sql.exec<{ bound: number | null }>('SELECT ledger_seq AS bound FROM usage_lots ORDER BY seq LIMIT 1').toArray()[0];
    return oldest === undefined ? null : (oldest.bound ?? 0);
  }

  /** When the oldest waiting entry is due, or null when the outbox is empty. */
  dueAt(): number | null {
    // The first row in insertion order is the oldest: one step down the table's b-tree, not a scan.
    const oldest = this.sql
      .exec<{ at: number | null }>(
        'SELECT MIN(at) AS at FROM (SELECT (SELECT queued_at FROM usage_lots ORDER BY seq LIMIT 1) AS at UNION ALL SELECT (SELECT queued_at FROM key_use_outbox ORDER BY rowid LIMIT 1))',
      )
      .one().at;
    return oldest === null ? null : oldest + USAGE_FLUSH_MS;
  }

  /**
   * Writes every waiting row to D1, oldest first, in statements of about ROWS_PER_WRITE rows (whole lots: a
   * lot is never split, so one statement carries at most a message's rows more); a failed write stays for
   * the alarm's retry. Each write reads its lots in order and deletes them by their range, so it costs the
   * lots it writes, not the outbox: a backlog while D1 lags drains in linear time.
   */
  async flush(db: D1Database): Promise<void> {
    for (;;) {
      // The lots to take, by their counts alone (a lot holds a row at least, so ROWS_PER_WRITE lots always
      // suffice), then their rows: every statement read to its end, none left open across the write.
      const counts = this.sql.exec<{ seq: number; count: number }>(`SELECT seq, count FROM usage_lots ORDER BY seq LIMIT ${ROWS_PER_WRITE}`).toArray();
      if (counts.length === 0) break;
      let [taken, through] = [0, 0];
      for (const { seq, count } of counts) {
        [taken, through] = [taken + count, seq];
        if (taken >= ROWS_PER_WRITE) break;
      }
      const lots = this.sql.exec<{ rows: string }>('SELECT rows FROM usage_lots WHERE seq <= ? ORDER BY seq', through).toArray();
      // Each lot is a JSON array: their elements joined are the one array D1's insert reads.
      await insertUsageRows(db, `[${lots.map((lot) => lot.rows.slice(1, -1)).join(',')}]`).run();
      this.sql.exec('DELETE FROM usage_lots WHERE seq <= ?', through);
    }
    for (;;) {
      const uses = this.sql.exec<{ key_id: string; used_at: number }>(`SELECT key_id, used_at FROM key_use_outbox ORDER BY rowid LIMIT ${KEY_USES_PER_WRITE}`).toArray();
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
