import type { Plan } from '../plans';
import type { Balance, Charge, SyncMessage, SyncReply, Terms } from './lease';

export interface LedgerEntry {
  seq: number;
  at: number;
  /** `captures`: a UTC day's captures folded into one entry once older than the ledger's detail window (hold id `day:YYYY-MM-DD`). */
  kind: 'plan' | 'credit' | 'withdrawal' | 'period_reset' | 'capture' | 'captures';
  /**
   * The usage row of a capture, or the dedupe id (a Stripe event's id) of a credit or plan given with one:
   * the ledger's unique index applies each of these once.
   */
  holdId: string | null;
  subscriptionDelta: number;
  purchasedDelta: number;
  subscriptionAfter: number;
  purchasedAfter: number;
}

/** What configuring a wallet sets: a plan's allowance and ceiling, or a custom one (`plan` null, `rpmOverride`). */
export interface WalletConfiguration {
  allowanceUnits: number;
  plan: Plan | null;
  rpmOverride: number | null;
  planEndsAt?: number | null;
  /** A Stripe event's id, or another id that makes the call apply once. */
  dedupeId?: string | null;
  /** Applied only while the wallet has no plan: the free trial's start, which must not replace a plan bought a moment before. */
  ifNoPlan?: boolean;
  /**
   * What the period has spent of its allowance counts against the new plan's: a plan changed by a checkout that replaces
   * a paid subscription (whose unused days Stripe credits back) gives the new allowance less what was spent, not a
   * full one, so switching plans buys no allowance again. Absent: a new period with the allowance in full.
   */
  keepUsage?: boolean;
}

/**
 * What the rest of Sluice may ask an organization's wallet (durable-objects/org-wallet.ts): the balance in
 * units, the plan's terms, the ledger, and the leases its workspaces' gates spend from.
 */
export interface OrgWalletProtocol extends Rpc.DurableObjectBranded {
  /**
   * Sets the plan and starts a new period with its allowance in full; answers the workspaces that hold or
   * held a lease, so the caller can tell their gates at once. `applied` is false when a configuration with
   * this dedupe id was applied before.
   */
  configure(input: WalletConfiguration): {
    balance: Balance;
    terms: Terms;
    generation: number;
    workspaces: string[];
    applied: boolean;
    /** Whether the wallet's terms are (still) the ones this configuration set: no later one replaced them. */
    current: boolean;
  };
  /** `closed` when the organization closed before this credit: nothing was added. */
  credit(amounts: { subscriptionUnits?: number; purchasedUnits?: number }, dedupeId?: string | null): Balance & { applied: boolean; closed?: true };
  /**
   * Takes back purchased credit a payment bought when Stripe says it was refunded (`totalUnits`, the running total) or
   * disputed (`disputed`: withdrawn, or reinstated and given back). Each once, whatever the order or the number of
   * deliveries; at most what no lease holds: credit already spent stays spent. `takenUnits` (and `givenBackUnits`) say what moved now.
   */
  refunded(payment: string, paidUnits: number, totalUnits: number): Balance & { askedUnits: number; takenUnits: number; givenBackUnits: number };
  disputed(dispute: string, payment: string, paidUnits: number, units: number, reinstated: boolean): Balance & { askedUnits: number; takenUnits: number; givenBackUnits: number };
  /** Whether a credit given with this dedupe id was applied (a payment delivered again after its organization closed). */
  hasCredit(dedupeId: string): boolean;
  /** The organization closes with its last member's account: every credit from now on is refused (`closed` false: no longer). */
  close(closed?: boolean): void;
  /** A gate's batch: its spending and usage rows, returned and drawn lease money, in one transaction. */
  sync(workspaceId: string, message: SyncMessage): SyncReply;
  recordUsage(usage: Charge['usage']): void;
  balance(): Balance;
  summary(workspaceId?: string): { balance: Balance; terms: Terms };
  /** The plan the wallet was configured with: none (version 0) until it is configured. */
  terms(): Terms;
  /** The balance, the latest ledger entries, and the size of the object's SQLite database (bytes). */
  statement(limit?: number): { balance: Balance; ledger: LedgerEntry[]; storageBytes: number };
  /** Workspaces with a lease, so an exact statement can ask their gates to report first. */
  leaseholders(): string[];
  /** A webhook endpoint of the organization was added, changed or removed: who hears of its credits is read again. */
  forgetCreditAudience(): void;
  /** What the ledger's capture of a call took, while the ledger keeps it in detail (not yet folded into its day's row); null without one. */
  captureOf(callId: string): number | null;
  /**
   * One of the organization's `limit` renders at once, for at most `ttlMs` unless freed; while all are taken, a
   * place among the calls waiting for one (`wait`), or `full` when `queue.limit` calls wait already.
   */
  takeRenderSlot(id: string, ttlMs: number, limit: number, queue: RenderQueue): RenderSlotAnswer;
  freeRenderSlot(id: string): void;
}

/** How many calls of an organization may wait for a render slot, and how long one counts without asking again. */
export interface RenderQueue {
  limit: number;
  forMs: number;
}

export type RenderSlotAnswer = 'taken' | 'wait' | 'full';
