import { getOrganization } from '../services/accounts';
import { clock } from '../core/clock';
import type { Env } from '../core/config';
import { ApiError } from '../core/errors';
import { trialInboxDigest } from '../services/trial-inboxes';
import { type Plan, PLAN_TABLE } from '../core/plans';
import { configureWallet } from '../services/wallet';

/** The free trial: the Toolkit plan (three seats, five workspaces) with its monthly allowance, for 14 days; once per organization, ever. */
export const TRIAL: { plan: Plan; days: number } = { plan: 'toolkit', days: 14 };

export interface Trial {
  plan: Plan;
  startedAt: string;
  endsAt: string;
  allowanceCents: number;
}

/**
 * Starts the organization's one free trial. Claiming it is one conditional UPDATE, so two attempts at
 * once start one trial; a second attempt, however long after (the trial over, a plan bought since), is
 * 409 TRIAL_ALREADY_USED. An organization already on a plan has nothing to try (409 CONFLICT), also when
 * the plan came while the trial was starting: the claim needs no plan in D1, and the wallet takes the
 * trial's terms only while it has none, so a plan bought a moment before (Stripe's webhook writes the
 * wallet, then D1) is never replaced by the trial.
 */
export async function startTrial(env: Env, organizationId: string, startedBy: { email: string }): Promise<Trial> {
  const row = await env.DB.prepare('SELECT trial_started_at AS startedAt FROM organizations WHERE id = ?').bind(organizationId).first<{ startedAt: string | null }>();
  if (!row) throw ApiError.notFound(`No organization ${organizationId}.`);
  if (row.startedAt) throw trialUsed(row.startedAt);
  const organization = await getOrganization(env.DB, organizationId);
  if (organization.plan) throw onPlan(organization.plan);

  // One instant for both, so the trial is its days to the millisecond.
  const startedAtMs = clock.now();
  const startedAt = new Date(startedAtMs).toISOString();
  const endsAtMs = startedAtMs + TRIAL.days * 24 * 60 * 60 * 1000;
  const endsAt = new Date(endsAtMs).toISOString();
  const inbox = await trialInboxDigest(inboxOf(startedBy.email));
  const claimed = await env.DB.prepare('UPDATE organizations SET trial_started_at = ?, trial_ends_at = ?, plan = ?, trial_inbox = ? WHERE id = ? AND trial_started_at IS NULL AND plan IS NULL')
    .bind(startedAt, endsAt, TRIAL.plan, inbox, organizationId)
    .run()
    .catch((error: unknown) => {
      if (/UNIQUE constraint failed: organizations\.trial_inbox/.test(String(error))) {
        throw new ApiError('TRIAL_ALREADY_USED', `A free trial was started already with ${startedBy.email}, or an address that reaches the same inbox: one trial an inbox. Subscribe to a plan to continue.`);
      }
      throw error;
    });
  if (claimed.meta.changes !== 1) {
    const now = await getOrganization(env.DB, organizationId);
    throw now.plan && now.plan !== TRIAL.plan ? onPlan(now.plan) : trialUsed(startedAt);
  }
  // The gates end the trial by themselves at the very call after endsAt.
  const configured = await configureWallet(env, { id: organizationId, plan: TRIAL.plan, rpmOverride: organization.rpmOverride }, endsAtMs, null, { ifNoPlan: true });
  // A plan reached the wallet first: its D1 write follows and replaces the trial's claim there.
  if (!configured.applied) throw onPlan(null);
  return { plan: TRIAL.plan, startedAt, endsAt, allowanceCents: PLAN_TABLE[TRIAL.plan].allowanceCents };
}

/**
 * The inbox an address reaches, as far as its form says: lowercased, a `+tag` dropped (most providers deliver
 * `name+anything@` to `name@`), and for Gmail the dots dropped too (googlemail.com is gmail.com). A catch-all
 * domain still reaches one inbox through many addresses; this does not know which domains are.
 */
export function inboxOf(email: string): string {
  const at = email.lastIndexOf('@');
  const domain = email.slice(at + 1).toLowerCase().replace(/^googlemail\.com$/, 'gmail.com');
  const local = email.slice(0, at).toLowerCase().split('+')[0]!;
  return `${domain === 'gmail.com' ? local.replaceAll('.', '') : local}@${domain}`;
}

function onPlan(plan: Plan | null): ApiError {
  const named = plan ? `the ${PLAN_TABLE[plan].name} plan` : 'a plan (bought a moment ago)';
  return ApiError.conflict(`This organization is already on ${named}; the free trial is for organizations without one.`);
}

function trialUsed(startedAt: string): ApiError {
  return new ApiError('TRIAL_ALREADY_USED', `This organization used its free trial (started ${startedAt.slice(0, 10)}); it can be used once. Subscribe to a plan to continue.`);
}

/** Whether the organization may still start its trial, and when a running one ends. */
export async function trialState(db: D1Database, organizationId: string): Promise<{ available: boolean; endsAt: string | null }> {
  const row = await db
    .prepare('SELECT trial_started_at AS startedAt, trial_ends_at AS endsAt FROM organizations WHERE id = ?')
    .bind(organizationId)
    .first<{ startedAt: string | null; endsAt: string | null }>();
  const running = row?.endsAt && Date.parse(row.endsAt) > clock.now() ? row.endsAt : null;
  return { available: !row?.startedAt, endsAt: running };
}
