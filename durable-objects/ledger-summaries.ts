/**
 * A wallet's ledger keeps one capture row per successful call (about 118 bytes) only for as long as it is
 * useful to the wallet itself: LEDGER_DETAIL_MS, while a capture sent again must still find its twin
 * (the unique index on kind and hold id) and while its usage row may still be on its way to D1. After
 * that the detail lives in D1's usage rows, and the captures of each UTC day are folded into one row of
 * kind `captures` (hold id `day:YYYY-MM-DD`) with their summed deltas, at the place (seq) of the last one
 * folded, so the ledger still reads in order and its balances after each entry stay true. The object
 * then grows with the days it has seen, not with its calls: at a million calls a day it holds about one
 * hour of them (~5 MB) plus a row a day.
 */
export const LEDGER_DETAIL_MS = 60 * 60 * 1000;
/** How often the wallet looks for captures to fold when nothing else is due. */
export const FOLD_EVERY_MS = 5 * 60 * 1000;
/** Captures folded in one pass at most, so a pass never holds the object long; the next alarm goes on. */
const ROWS_PER_PASS = 10_000;

const DAY = "strftime('%Y-%m-%d', at / 1000, 'unixepoch')";

export class LedgerSummaries {
  private nextPassAt = 0;

  constructor(private readonly sql: SqlStorage) {}

  /**
   * Folds the captures older than LEDGER_DETAIL_MS at `now` (the wallet's clock) into day rows when a pass is
   * due, up to `landedThrough`, the last ledger entry whose usage rows have reached D1 (null: every one has).
   * Runs in the caller's transaction. Answers whether captures ready to fold remain for another pass.
   */
  fold(now: number, landedThrough: number | null): boolean {
    if (now < this.nextPassAt) return false;
    const cutoff = now - LEDGER_DETAIL_MS;
    // Landed captures in seq order (the rowid b-tree from its start, up to the bound): the old ones are a prefix.
    const oldest = this.sql
      .exec<{ seq: number; at: number }>(`SELECT seq, at FROM ledger WHERE kind = 'capture' AND seq <= ? ORDER BY seq LIMIT ${ROWS_PER_PASS}`, landedThrough ?? Number.MAX_SAFE_INTEGER)
      .toArray();
    const due = oldest.findIndex((row) => row.at >= cutoff);
    const count = due === -1 ? oldest.length : due;
    if (count === 0) {
      // The oldest capture is too young: no pass before FOLD_EVERY_MS. One whose usage row is still on its way
      // (none landed) is looked at again by the alarm that lands it.
      if (oldest.length > 0 || landedThrough === null) this.nextPassAt = now + FOLD_EVERY_MS;
      return false;
    }
    const [first, last] = [oldest[0]!.seq, oldest[count - 1]!.seq];
    const days = this.sql
      .exec<{ day: string }>(`SELECT DISTINCT ${DAY} AS day FROM ledger WHERE kind = 'capture' AND seq BETWEEN ? AND ? AND at < ?`, first, last, cutoff)
      .toArray();
    for (const { day } of days) this.foldDay(day, first, last, cutoff);
    return count === ROWS_PER_PASS;
  }

  private foldDay(day: string, first: number, last: number, cutoff: number): void {
    const where = `kind = 'capture' AND seq BETWEEN ? AND ? AND at < ? AND ${DAY} = ?`;
    // With MAX(seq), SQLite takes the bare columns from that row: the balances after the day's last capture.
    const folded = this.sql
      .exec<{ seq: number; at: number; subscription: number; purchased: number; subscription_after: number; purchased_after: number }>(
        `SELECT MAX(seq) AS seq, at, SUM(subscription_delta) AS subscription, SUM(purchased_delta) AS purchased, subscription_after, purchased_after
           FROM ledger WHERE ${where}`,
        first, last, cutoff, day,
      )
      .one();
    const holdId = `day:${day}`;
    const earlier = this.sql
      .exec<{ seq: number; subscription_delta: number; purchased_delta: number }>("SELECT seq, subscription_delta, purchased_delta FROM ledger WHERE kind = 'captures' AND hold_id = ?", holdId)
      .toArray()[0];
    this.sql.exec(`DELETE FROM ledger WHERE ${where}`, first, last, cutoff, day);
    if (earlier) this.sql.exec('DELETE FROM ledger WHERE seq = ?', earlier.seq);
    this.sql.exec(
      `INSERT INTO ledger (seq, at, kind, hold_id, subscription_delta, purchased_delta, subscription_after, purchased_after)
       VALUES (?, ?, 'captures', ?, ?, ?, ?, ?)`,
      Math.max(folded.seq, earlier?.seq ?? 0), folded.at, holdId,
      folded.subscription + (earlier?.subscription_delta ?? 0), folded.purchased + (earlier?.purchased_delta ?? 0),
      folded.subscription_after, folded.purchased_after,
    );
  }
}
