import type { Balance, Split } from '../src/core/protocols/lease';
import type { StoredPart } from './lease-book';

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
 *   whoever made it. They are stored with the gate's state (a StoredPart of its LeaseBook), in the same
 *   write as the lease of the same reply, so a call's `meta` shows them after a restart too.
 * - They are fresh while read less than VIEW_FRESH_MS ago, in a period that has not ended. A top-up or a
 *   plan change makes them stale at once (`forget`), and so does a restart: when they were read is kept
 *   in memory only.
 * - What is shown never goes below zero in either part.
 */
export class CreditView implements StoredPart {
  readonly name = 'view';
  private figures: Balance | null = null;
  /** When the figures were read (clock time); 0: not since this object started, or told to forget. */
  private readAt = 0;
  /** Figures came that storage does not have yet. */
  private changed = false;

  /**
   * The figures as stored with the gate's state, or, from a gate that has not stored them there yet, as its
   * own table kept them before.
   */
  restore(stored: Balance | null | undefined, sql: SqlStorage): void {
    if (stored !== undefined) this.figures = stored;
    else if (sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'credit_view'").toArray().length > 0) {
      const row = sql.exec<{ doc: string }>('SELECT doc FROM credit_view').toArray()[0];
      this.figures = row ? (JSON.parse(row.doc) as Balance) : null;
    }
  }

  /** The wallet's figures, as it answered just now; stored with the gate's next write of its state. */
  read(figures: Balance, now: number): void {
    this.replace(figures);
    this.readAt = now;
  }

  /** The wallet's figures as told with a plan change; the next read asks the wallet all the same. */
  replace(figures: Balance): void {
    this.figures = figures;
    this.changed = true;
  }

  get unsaved(): boolean {
    return this.changed;
  }

  snapshot(): Balance | null {
    this.changed = false;
    return this.figures;
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
}
