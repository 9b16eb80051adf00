import type { Balance, LedgerEntry } from '../../durable-objects/org-wallet';
import type { Env } from './config';
import { centsFromUnits } from './money';

/** The organization's wallet object. One per organization: the spec bills the organization. */
export function walletOf(env: Env, organizationId: string) {
  return env.ORG_WALLET.get(env.ORG_WALLET.idFromName(organizationId));
}

/** A balance as clients see it: cents, not internal units. */
export function balanceInCents(balance: Balance) {
  return {
    purchasedBalanceCents: centsFromUnits(balance.purchasedUnits),
    subscriptionRemainingCents: centsFromUnits(balance.subscriptionUnits),
    subscriptionAllowanceCents: centsFromUnits(balance.allowanceUnits),
    heldCents: centsFromUnits(balance.heldUnits),
    availableCents: centsFromUnits(balance.purchasedUnits + balance.subscriptionUnits),
    periodEnd: balance.periodEnd === null ? null : new Date(balance.periodEnd).toISOString(),
  };
}

export function ledgerEntryInCents(entry: LedgerEntry) {
  return {
    seq: entry.seq,
    at: new Date(entry.at).toISOString(),
    kind: entry.kind,
    holdId: entry.holdId,
    subscriptionDeltaCents: centsFromUnits(entry.subscriptionDelta),
    purchasedDeltaCents: centsFromUnits(entry.purchasedDelta),
    subscriptionAfterCents: centsFromUnits(entry.subscriptionAfter),
    purchasedAfterCents: centsFromUnits(entry.purchasedAfter),
  };
}
