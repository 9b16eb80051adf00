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
export const ROWS_PER_PASS = 10_000;

const DAY = "strftime('%Y-%m-%d', at / 1000, 'unixepoch')";

/** Captures read in a pass's first look; each look after a full one reads twice as many, up to ROWS_PER_PASS. */
const FIRST_LOOK = 32;

/**
 * The ledger's statements name `+kind`, so that SQLite walks the rowid (seq) range they give rather than the
 * (kind, hold_id) index: by that index every capture of the detail hour was read to fold a few (160,016 rows
 * read for 10 of 40,000 captures, test/metering/ledger-summaries.test.ts).
 */
export class LedgerSummaries {
  private nextPassAt = 0;
  /** Every capture up to this seq is folded: where the next pass starts. Read once, moved by each pass. */
  private foldedThrough: number | null = null;

  constructor(private readonly sql: SqlStorage) {}

  /**
   * Folds the captures older than LEDGER_DETAIL_MS at `now` (the wallet's clock) into day rows when a pass is
   * due, up to `landedThrough`, the last ledger entry whose usage rows have reached D1 (null: every one has).
   * Runs in the caller's transaction. Answers whether captures ready to fold remain for another pass.
   */
  fold(now: number, landedThrough: number | null): boolean {
    if (now < this.nextPassAt) return false;
    const cutoff = now - LEDGER_DETAIL_MS;
    const start = (this.foldedThrough ??= this.lastFolded());
    const due = this.dueCaptures(start, landedThrough ?? Number.MAX_SAFE_INTEGER, cutoff);
    if (due.count === 0) {
      // The oldest capture is too young: no pass before FOLD_EVERY_MS. One whose usage row is still on its way
      // (none landed) is looked at again by the alarm that lands it.
      if (due.young || landedThrough === null) this.nextPassAt = now + FOLD_EVERY_MS;
      return false;
    }
    const { first, last } = due;
    const days = this.sql
      .exec<{ day: string }>(`SELECT DISTINCT ${DAY} AS day FROM ledger WHERE seq BETWEEN ? AND ? AND +kind = 'capture' AND at < ?`, first, last, cutoff)
      .toArray();
    for (const { day } of days) this.foldDay(day, first, last, cutoff);
    // Moved once the pass's statements have run: one that throws leaves it, and a transaction that cannot
    // commit resets the object, which reads it again.
    this.foldedThrough = last;
    return due.count === ROWS_PER_PASS;
  }

  /** Where the last pass ended: the latest day row sits at the seq of the last capture folded into it. */
  private lastFolded(): number {
    return this.sql.exec<{ seq: number | null }>("SELECT MAX(seq) AS seq FROM ledger WHERE kind = 'captures'").one().seq ?? 0;
  }

  /**
   * The captures after `start`, up to `bound`, that are older than `cutoff`: a prefix in seq order, read a look
   * at a time until a young one (or the bound, or ROWS_PER_PASS) ends it, so a pass reads about what it folds.
   * `young`: a capture past the prefix, too young to fold, was seen.
   */
  private dueCaptures(start: number, bound: number, cutoff: number): { count: number; first: number; last: number; young: boolean } {
    let [count, first, last, after, look] = [0, 0, 0, start, FIRST_LOOK];
    for (;;) {
      const rows = this.sql
        .exec<{ seq: number; at: number }>(`SELECT seq, at FROM ledger WHERE seq > ? AND seq <= ? AND +kind = 'capture' ORDER BY seq LIMIT ?`, after, bound, Math.min(look, ROWS_PER_PASS - count))
        .toArray();
      const youngAt = rows.findIndex((row) => row.at >= cutoff);
      const taken = youngAt === -1 ? rows.length : youngAt;
      if (taken > 0) {
        if (count === 0) first = rows[0]!.seq;
        last = rows[taken - 1]!.seq;
        count += taken;
      }
      if (youngAt !== -1) return { count, first, last, young: true };
      if (rows.length < look || count === ROWS_PER_PASS) return { count, first, last, young: false };
      after = last;
      look *= 2;
    }
  }

  private foldDay(day: string, first: number, last: number, cutoff: number): void {
    const where = `seq BETWEEN ? AND ? AND +kind = 'capture' AND at < ? AND ${DAY} = ?`;
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
