import { clock } from '../core/clock';
import { PruningBudget } from '../core/pruning';
import { ATTEMPTS_KEPT_MS } from '../core/throttle';
import { usageRowsKeptSince } from './usage-retention';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * How long a record is kept once its life has ended, in days. What has ended and is worth nothing to anyone goes
 * the first day after (an expired session, a consent never decided). What a person may still look for stays a
 * while: a connection that ended (its grant), an invitation that was answered or ran out, a client that was
 * registered and never connected. Runtime hours and Stripe's events follow the usage rows' 13 months.
 */
export const ENDED_RECORDS_KEPT_DAYS = {
  /** An OAuth grant past its 30 days (revoked or not), with the refresh tokens it still held. */
  grant: 30,
  /** A client registered by RFC 7591 that no grant (nor a consent under way) names, counted from its registration. */
  registeredClient: 30,
  /** An invitation, counted from when it would have expired (accepted, withdrawn or not). */
  invitation: 90,
  /** A message of the development outbox (DEV_OUTBOX=1). */
  outboxMessage: 30,
  /** An onboarding intent (`sluice_onboarding`, `POST /v1/register`), counted from when it was recorded. */
  onboardingIntent: 90,
  /** A sandbox key (scope workspace_dryrun, valid 7 days), counted from when it expired, revoked or not. */
  sandboxKey: 30,
} as const;

interface Rule {
  /** What goes, for the run's answer and the decisions' table. */
  what: string;
  table: string;
  /**
   * Which rows go, over the table aliased `t`, with one `?`: the instant `bound` answers. It leads with a
   * range on an index of when they ended (migrations/0031), so a run reads what it deletes.
   */
  where: string;
  bound: (now: number) => number | string;
}

const iso = (instant: number) => new Date(instant).toISOString();
const daysBefore = (now: number, days: number) => now - days * DAY_MS;

/** A grant no token still names (D1 enforces the tokens' foreign key). */
const NO_TOKEN_LEFT = 'NOT EXISTS (SELECT 1 FROM oauth_tokens WHERE grant_id = t.id)';
/** A client no grant names and no consent under way asks for. */
const NO_ONE_NAMES_CLIENT = 'NOT EXISTS (SELECT 1 FROM oauth_grants WHERE client_id = t.id) AND NOT EXISTS (SELECT 1 FROM oauth_requests WHERE client_id = t.id)';

/**
 * In order where a row names another: tokens before their grants, grants before their clients.
 */
const RULES: Rule[] = [
  { what: 'sessions past their expiry', table: 'sessions', where: 'expires_at <= ?', bound: iso },
  { what: 'email confirmation links past their expiry', table: 'email_verifications', where: 'expires_at <= ?', bound: iso },
  { what: 'password reset links past their expiry', table: 'password_resets', where: 'expires_at <= ?', bound: iso },
  { what: 'email change links past their expiry', table: 'email_changes', where: 'expires_at <= ?', bound: iso },
  { what: 'sign-ins that waited for a second factor past their expiry', table: 'sign_in_challenges', where: 'expires_at <= ?', bound: iso },
  { what: 'activity older than 400 days', table: 'activity', where: 'created_at <= ?', bound: (now) => iso(daysBefore(now, 400)) },
  { what: 'attempt counts whose window has ended under every rule', table: 'auth_throttle', where: 'window_start <= ?', bound: (now) => now - ATTEMPTS_KEPT_MS },
  { what: 'authorization requests no one decided in time', table: 'oauth_requests', where: 'expires_at <= ?', bound: (now) => now },
  { what: 'OAuth tokens past their expiry', table: 'oauth_tokens', where: 'expires_at <= ?', bound: (now) => now },
  {
    what: 'OAuth grants whose code was never exchanged',
    table: 'oauth_grants',
    where: `code_used_at IS NULL AND code_expires_at <= ? AND ${NO_TOKEN_LEFT}`,
    bound: (now) => now,
  },
  {
    what: `OAuth grants ended more than ${ENDED_RECORDS_KEPT_DAYS.grant} days ago`,
    table: 'oauth_grants',
    // A token outliving its grant is not issued (an access token's expiry is capped by the grant's); the check
    // keeps the foreign key whatever a past version wrote.
    where: `expires_at <= ? AND ${NO_TOKEN_LEFT}`,
    bound: (now) => daysBefore(now, ENDED_RECORDS_KEPT_DAYS.grant),
  },
  {
    what: `registered OAuth clients no grant or pending consent names, ${ENDED_RECORDS_KEPT_DAYS.registeredClient} days after registering`,
    table: 'oauth_clients',
    // `from_document = 0` and `= 1` as literals: they are the partial indexes' conditions.
    where: `from_document = 0 AND created_at <= ? AND ${NO_ONE_NAMES_CLIENT}`,
    bound: (now) => iso(daysBefore(now, ENDED_RECORDS_KEPT_DAYS.registeredClient)),
  },
  {
    what: 'client metadata documents past their cache lifetime that no grant or pending consent names',
    table: 'oauth_clients',
    where: `from_document = 1 AND expires_at <= ? AND ${NO_ONE_NAMES_CLIENT}`,
    bound: (now) => now,
  },
  {
    what: `invitations ${ENDED_RECORDS_KEPT_DAYS.invitation} days past their expiry`,
    table: 'invitations',
    where: 'expires_at <= ?',
    bound: (now) => iso(daysBefore(now, ENDED_RECORDS_KEPT_DAYS.invitation)),
  },
  {
    what: `development outbox messages older than ${ENDED_RECORDS_KEPT_DAYS.outboxMessage} days`,
    table: 'email_outbox',
    where: 'created_at <= ?',
    bound: (now) => iso(daysBefore(now, ENDED_RECORDS_KEPT_DAYS.outboxMessage)),
  },
  {
    what: `onboarding intents older than ${ENDED_RECORDS_KEPT_DAYS.onboardingIntent} days`,
    table: 'onboarding_intents',
    where: 'created_at <= ?',
    bound: (now) => iso(daysBefore(now, ENDED_RECORDS_KEPT_DAYS.onboardingIntent)),
  },
  {
    what: `sandbox keys ${ENDED_RECORDS_KEPT_DAYS.sandboxKey} days past their expiry`,
    table: 'api_keys',
    // `scope = 'workspace_dryrun'` as a literal: it is the partial index's condition (migrations/0035).
    where: "scope = 'workspace_dryrun' AND expires_at <= ?",
    bound: (now) => iso(daysBefore(now, ENDED_RECORDS_KEPT_DAYS.sandboxKey)),
  },
  { what: "agents' runtime hours older than the usage rows", table: 'agent_hours', where: 'hour < ?', bound: (now) => iso(usageRowsKeptSince(now)) },
  {
    what: 'agents stopped before the usage rows kept',
    table: 'agents',
    // After their runtime hours (above), which name them; before their keys (below), which they name, so the last key
    // of each goes the same night. `status = 'stopped'` as a literal: the partial index's condition (migrations/0057).
    where: "status = 'stopped' AND stopped_at < ? AND NOT EXISTS (SELECT 1 FROM agent_hours h WHERE h.agent_id = t.id)",
    bound: (now) => iso(usageRowsKeptSince(now)),
  },
  {
    what: "API keys, MCP tokens and agents' keys revoked before the usage rows kept",
    table: 'api_keys',
    // The scopes as literals: they are the partial index's condition (migrations/0037). Their usage rows, all older
    // than the revocation, are gone. A stopped agent still names its last key (agents.key_id): that one stays. Jobs'
    // keys stay too: a usage row's jobId is derived through data_jobs.key_id.
    where: "revoked_at IS NOT NULL AND scope IN ('workspace', 'workspace_mcp', 'agent') AND revoked_at < ? AND NOT EXISTS (SELECT 1 FROM agents WHERE agents.key_id = t.id)",
    bound: (now) => iso(usageRowsKeptSince(now)),
  },
  {
    what: 'API keys that expired before the usage rows kept',
    table: 'api_keys',
    // As a revoked key: every usage row that names it is older than its expiry, and gone. (Sandbox keys go sooner, above.)
    // The partial index's condition as literals (migrations/0049).
    where: "scope = 'workspace' AND revoked_at IS NULL AND expires_at IS NOT NULL AND expires_at < ?",
    bound: (now) => iso(usageRowsKeptSince(now)),
  },
  {
    what: 'MCP tokens that expired before the usage rows kept',
    table: 'api_keys',
    // The same for a token made to expire; its own partial index (migrations/0052).
    where: "scope = 'workspace_mcp' AND revoked_at IS NULL AND expires_at IS NOT NULL AND expires_at < ?",
    bound: (now) => iso(usageRowsKeptSince(now)),
  },
  { what: "data jobs' runtime hours older than the usage rows", table: 'job_hours', where: 'hour < ?', bound: (now) => iso(usageRowsKeptSince(now)) },
  { what: "Stripe's events older than the usage rows", table: 'stripe_events', where: 'received_at < ?', bound: (now) => iso(usageRowsKeptSince(now)) },
  { what: 'top-ups older than the usage rows (past any refund or dispute)', table: 'stripe_payments', where: 'created_at < ?', bound: (now) => iso(usageRowsKeptSince(now)) },
];

/** A rule's rows, at most `limit` of them: through `rowid IN (… LIMIT ?)`, as D1 has no `DELETE … LIMIT`. */
function deleting(db: D1Database, rule: Rule, now: number, limit: number): D1PreparedStatement {
  return db.prepare(`DELETE FROM ${rule.table} WHERE rowid IN (SELECT rowid FROM ${rule.table} t WHERE ${rule.where} LIMIT ?)`).bind(rule.bound(now), limit);
}

/**
 * Deletes the account records whose life has ended (RULES, in order), a chunk at a time within one run's budget;
 * what the budget leaves, the next run deletes (the nightly queue's). Run by the daily cron. Answers how many of each went.
 */
export async function pruneEndedRecords(db: D1Database, now: number = clock.now(), budget = new PruningBudget()): Promise<Record<string, number>> {
  const deleted: Record<string, number> = {};
  for (const rule of RULES) {
    const drained = await budget.drain((limit) => deleting(db, rule, now, limit));
    deleted[rule.what] = drained.deleted;
    if (!drained.done) break;
  }
  return deleted;
}
