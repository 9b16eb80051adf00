import type { Balance, Split } from '../src/core/protocols/lease';

/**
 * How long `/v1/credits` answers from the wallet's figures this gate holds before reading them again: a
 * sibling workspace's spending shows within its report interval plus this. Top-ups and plan changes show
 * at once (they tell the gates).
 */
export const VIEW_FRESH_MS = 100;

/**
 * The organization's balances as a workspace's gate shows them, on `/v1/credits` and in each call's
 * `meta`: the wallet's figures from its last answer to this gate, less what this workspace spent since
 * and has not yet had acknowledged.
 * - The figures come only from the wallet: a reply to one of this gate's messages in the current
 *   allowance generation, its summary read in a turn of the gate's queue, or a plan change told by
 *   whoever made it. They are stored, so a call's `meta` shows them after a restart too.
 * - They are fresh while read less than VIEW_FRESH_MS ago, in a period that has not ended. A top-up or a
 *   plan change makes them stale at once (`forget`), and so does a restart: when they were read is kept
 *   in memory only.
 * - What is shown never goes below zero in either part.
 */
export class CreditView {
  private figures: Balance | null;
  /** When the figures were read (clock time); 0: not since this object started, or told to forget. */
  private readAt = 0;
  /** Figures were read that storage does not have yet (see `read`). */
  private unstored = false;

  constructor(private readonly sql: SqlStorage) {
    sql.exec('CREATE TABLE IF NOT EXISTS credit_view (id INTEGER PRIMARY KEY CHECK (id = 1), doc TEXT NOT NULL)');
    const stored = sql.exec<{ doc: string }>('SELECT doc FROM credit_view').toArray()[0];
    this.figures = stored ? (JSON.parse(stored.doc) as Balance) : null;
  }

  /**
   * The wallet's figures, as it answered just now. Stored with the gate's next message or by its alarm
   * (`persist`), like the acknowledgement they came with (`LeaseBook.acknowledge`): an object that restarts
   * before then has the figures and the lease of the same earlier reply, and its next message brings both again.
   */
  read(figures: Balance, now: number): void {
    this.figures = figures;
    this.readAt = now;
    this.unstored = true;
  }

  /** Stores figures read since the last store. */
  persist(): void {
    if (this.unstored) this.save();
  }

  /** The wallet's figures as told with a plan change; the next read asks the wallet all the same. */
  replace(figures: Balance): void {
    this.figures = figures;
    this.save();
  }

  /** The wallet changed by other means than this gate's messages (a top-up, a plan change): read it again. */
  forget(): void {
    this.readAt = 0;
  }

  /** Whether the figures were read less than VIEW_FRESH_MS ago, in a period that has not ended. */
  fresh(now: number, periodOver: boolean): boolean {
    return this.figures !== null && this.readAt > 0 && now - this.readAt < VIEW_FRESH_MS && !periodOver;
  }

  /**
   * The organization's balances after this workspace's calls: the wallet's figures less `pending`, what
   * this workspace spent that the wallet has not acknowledged. A sibling workspace's spending reaches
   * them with the sibling's next report.
   */
  balance(pending: Split): Balance | null {
    const figures = this.figures;
    if (!figures) return null;
    return {
      ...figures,
      subscriptionUnits: Math.max(0, figures.subscriptionUnits - pending.subscriptionUnits),
      purchasedUnits: Math.max(0, figures.purchasedUnits - pending.purchasedUnits),
    };
  }

  /** Unspent money the organization has beyond what this workspace spent and has not reported. */
  unspentUnits(pending: Split): number {
    const balance = this.balance(pending);
    return balance ? balance.subscriptionUnits + balance.purchasedUnits : 0;
  }

  private save(): void {
    this.unstored = false;
    this.sql.exec('INSERT OR REPLACE INTO credit_view (id, doc) VALUES (1, ?)', JSON.stringify(this.figures));
  }
}
