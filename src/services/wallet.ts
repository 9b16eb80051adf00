import type { Balance } from '../core/protocols/lease';
import type { LedgerEntry, WalletConfiguration } from '../core/protocols/wallet';
import type { Organization } from '../core/records';
import type { Env } from '../core/config';
import { gateOf } from './gate';
import { centsFromUnits } from '../core/money';
import { allowanceUnits } from '../core/plans';
import { wakeWaitingJobs } from './jobs/wake';

/** The organization's wallet object. One per organization: the spec bills the organization. */
export function walletOf(env: Env, organizationId: string) {
  return env.ORG_WALLET.get(env.ORG_WALLET.idFromName(organizationId));
}

/**
 * Gives the wallet the organization's plan (its allowance, a new period) and tells the gate of every
 * workspace that holds a lease, so none of them admits a call under the old plan after this returns.
 * Gates that never drew a lease learn the plan from the wallet before their first call. Jobs waiting for
 * money look again at once.
 */
export async function configureWallet(
  env: Env,
  organization: Pick<Organization, 'id' | 'plan' | 'rpmOverride'>,
  planEndsAt: number | null = null,
  dedupeId: string | null = null,
  options: Pick<WalletConfiguration, 'ifNoPlan' | 'keepUsage'> = {},
): Promise<Balance & { applied: boolean; current: boolean }> {
  const configured = await walletOf(env, organization.id).configure({
    allowanceUnits: allowanceUnits(organization.plan),
    plan: organization.plan,
    rpmOverride: organization.rpmOverride,
    planEndsAt,
    dedupeId,
    ...options,
  });
  await Promise.all(configured.workspaces.map((workspaceId) => gateOf(env, workspaceId).adoptTerms(configured.terms, configured.generation, configured.balance)));
  if (configured.applied) await wakeWaitingJobs(env, { organizationId: organization.id });
  return { ...configured.balance, applied: configured.applied, current: configured.current };
}

/**
 * Adds to an organization's balances (once per dedupe id, see `OrgWallet.credit`) and tells the gate of
 * every workspace that reads the wallet to read it again, so `/v1/credits` shows a top-up from the very
 * next request (gates keep the wallet's figures for up to VIEW_FRESH_MS); jobs waiting for money look again at once.
 */
export async function creditWallet(env: Env, organizationId: string, amounts: { subscriptionUnits?: number; purchasedUnits?: number }, dedupeId: string | null = null) {
  const wallet = walletOf(env, organizationId);
  const credited = await wallet.credit(amounts, dedupeId);
  if (credited.closed) return credited;
  await Promise.all((await wallet.leaseholders()).map((workspaceId) => gateOf(env, workspaceId).forgetBalance()));
  await wakeWaitingJobs(env, { organizationId });
  return credited;
}

/** What Stripe says happened to a payment that bought credit: refunded up to a running total, or a dispute's money withdrawn or reinstated. */
export type PaymentReturn =
  | { kind: 'refund'; payment: string; paidUnits: number; totalUnits: number }
  | { kind: 'dispute'; dispute: string; payment: string; paidUnits: number; units: number; reinstated: boolean };

/**
 * Takes back (or, a dispute won, gives back) the credit a payment bought (`OrgWallet.refunded` and `disputed`, each
 * once): every gate with a lease first reports what it spent and gives its lease back, as for a settled statement, so
 * all that is not spent can be taken; then the gates read the wallet again, so the very next call sees the balance.
 */
export async function returnPayment(env: Env, organizationId: string, change: PaymentReturn) {
  const wallet = walletOf(env, organizationId);
  const leaseholders = await wallet.leaseholders();
  await Promise.all(leaseholders.map((workspaceId) => gateOf(env, workspaceId).flush()));
  const moved =
    change.kind === 'refund'
      ? await wallet.refunded(change.payment, change.paidUnits, change.totalUnits)
      : await wallet.disputed(change.dispute, change.payment, change.paidUnits, change.units, change.reinstated);
  await Promise.all(leaseholders.map((workspaceId) => gateOf(env, workspaceId).forgetBalance()));
  return moved;
}

/** Whether the organization's wallet applied a credit given with this dedupe id (a payment's event id). */
export async function hasCredit(env: Env, organizationId: string, dedupeId: string): Promise<boolean> {
  return walletOf(env, organizationId).hasCredit(dedupeId);
}

/**
 * The organization is closing: its wallet takes no credit from now on (`OrgWallet.close`), or again (`closed` false)
 * when the close was refused after all.
 */
export async function closeWallet(env: Env, organizationId: string, closed: boolean): Promise<void> {
  await walletOf(env, organizationId).close(closed);
}

/**
 * The wallet's statement once every workspace with a lease has reported what it spent and given its
 * lease back: exact to the unit, for operators (a call's own answer and /v1/credits are exact for the
 * calling workspace; sibling workspaces' spending reaches them within a report interval).
 */
export async function settledStatement(env: Env, organizationId: string, limit = 50) {
  const wallet = walletOf(env, organizationId);
  await Promise.all((await wallet.leaseholders()).map((workspaceId) => gateOf(env, workspaceId).flush()));
  return wallet.statement(limit);
}

/**
 * The wallet's statement as it stands, once `workspaceId`'s gate (when one is given) has reported what it
 * spent: exact for that workspace's own calls, as /v1/credits is, while other workspaces' spending reaches it
 * within a report interval (REPORT_MS). One or two object calls whatever the number of workspaces, where
 * `settledStatement` asks every workspace that holds a lease: for the dashboard's views, which anyone in the
 * organization may load as often as they like.
 */
export async function currentStatement(env: Env, organizationId: string, limit: number, workspaceId?: string) {
  if (workspaceId !== undefined) await gateOf(env, workspaceId).flush();
  return walletOf(env, organizationId).statement(limit);
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
