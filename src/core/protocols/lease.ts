import type { Plan } from '../plans';
import type { UsageRow } from '../usage';

/**
 * What a workspace's gate and its organization's wallet say to each other. Money is in units of
 * 1/10,000 cent. A gate spends from a lease the wallet granted it; it reports what it spent, asks for
 * more and gives back what it does not need in one message at a time, numbered, so the wallet applies
 * each message once and in order (a resent message gets the stored reply).
 */

/** Two amounts that always travel together: the subscription part (expires with the period) and the purchased part. */
export interface Split {
  subscriptionUnits: number;
  purchasedUnits: number;
}

/** One call's outcome as the wallet records it: a ledger capture (when it cost anything) and its usage row. */
export interface Charge extends Split {
  /** The usage row's id: the wallet applies a charge once however often it is sent. */
  id: string;
  /** The allowance generation the subscription part was taken from; from an earlier one it has expired. */
  generation: number;
  usage: UsageRow;
  /** The key whose monthly spend it counts in, when not the usage row's (a data job's item: the key that submitted the job). */
  budgetKeyId?: string;
  /** A 402 given by the key's own monthly spend limit, not by the balance: credits.exhausted does not count it. */
  keyLimit?: true;
}

/** The key whose monthly spend a charge counts in. */
export function budgetKeyOf(charge: Charge): string {
  return charge.budgetKeyId ?? charge.usage.keyId;
}

export interface SyncMessage {
  seq: number;
  /** The allowance generation of `giveBack.subscriptionUnits`. */
  generation: number;
  charges: Charge[];
  giveBack: Split;
  /** The least the gate needs now (0 when it only reports), and what it would like to hold. */
  needUnits: number;
  targetUnits: number;
  /** Last use of each key, epoch ms, for `api_keys.last_used_at`. */
  keyUses: Array<[keyId: string, at: number]>;
}

/** The plan the wallet was configured with: the gate's window and the no-plan refusal follow it. */
export interface Terms {
  plan: Plan | null;
  rpmOverride: number | null;
  /** When a plan given for a time (the free trial) lapses, epoch ms; null: until changed. */
  planEndsAt: number | null;
  /** Grows with every configuration (0: never configured), so a gate never adopts an older one over a newer. */
  version: number;
}

/** Balances in units. `heldUnits` is what workspaces hold in leases: part of the balances, not taken out of them. */
export interface Balance {
  subscriptionUnits: number;
  purchasedUnits: number;
  heldUnits: number;
  allowanceUnits: number;
  /** Epoch ms at which the subscription allowance resets; null before a plan was configured. */
  periodEnd: number | null;
}

export interface SyncReply {
  seq: number;
  /** The gate's lease after this message, as the wallet records it: authoritative. */
  lease: Split;
  generation: number;
  periodEnd: number | null;
  /** What was added to the lease by this message. */
  grantedUnits: number;
  /** What no lease holds: a call can draw from it now. */
  unleasedUnits: number;
  /**
   * When this message needed more than the wallet could grant, the other workspaces whose leases hold
   * money, largest first (at most a few): the gate asks them to give an idle lease back, then draws again.
   */
  holders?: string[];
  /**
   * The call ids of this message's charges that the wallet had applied before (a retry that took over a call id
   * the wallet had already charged): not spent again, so the gate takes them back out of its keys' spend.
   */
  alreadyCharged?: string[];
  balance: Balance;
  terms: Terms;
}

/** The plan that applies at `now`: none once a plan given for a time has lapsed. */
export function planInForce(terms: Pick<Terms, 'plan' | 'planEndsAt'>, now: number): Plan | null {
  return terms.planEndsAt != null && now >= terms.planEndsAt ? null : terms.plan;
}
