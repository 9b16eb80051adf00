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
} as const;

interface Rule {
  /** What goes, for the run's answer and the decisions' table. */
  what: string;
  /** A statement deleting at most `limit` of them, found through an index on when they ended (migrations/0031). */
  statement: (db: D1Database, now: number, limit: number) => D1PreparedStatement;
}

const iso = (instant: number) => new Date(instant).toISOString();
const daysBefore = (now: number, days: number) => now - days * DAY_MS;

/**
 * Deleting through `rowid IN (… LIMIT ?)`, as D1 has no `DELETE … LIMIT`. Order matters where a row names
 * another: tokens before their grants, grants before their clients (D1 enforces the tokens' foreign key).
 */
const RULES: Rule[] = [
  {
    what: 'sessions past their expiry',
    statement: (db, now, limit) => db.prepare('DELETE FROM sessions WHERE rowid IN (SELECT rowid FROM sessions WHERE expires_at <= ? LIMIT ?)').bind(iso(now), limit),
  },
  {
    what: 'email confirmation links past their expiry',
    statement: (db, now, limit) =>
      db.prepare('DELETE FROM email_verifications WHERE rowid IN (SELECT rowid FROM email_verifications WHERE expires_at <= ? LIMIT ?)').bind(iso(now), limit),
  },
  {
    what: 'attempt counts whose window has ended under every rule',
    statement: (db, now, limit) =>
      db.prepare('DELETE FROM auth_throttle WHERE rowid IN (SELECT rowid FROM auth_throttle WHERE window_start <= ? LIMIT ?)').bind(now - ATTEMPTS_KEPT_MS, limit),
  },
  {
    what: 'authorization requests no one decided in time',
    statement: (db, now, limit) => db.prepare('DELETE FROM oauth_requests WHERE rowid IN (SELECT rowid FROM oauth_requests WHERE expires_at <= ? LIMIT ?)').bind(now, limit),
  },
  {
    what: 'OAuth tokens past their expiry',
    statement: (db, now, limit) => db.prepare('DELETE FROM oauth_tokens WHERE rowid IN (SELECT rowid FROM oauth_tokens WHERE expires_at <= ? LIMIT ?)').bind(now, limit),
  },
  {
    what: 'OAuth grants whose code was never exchanged',
    statement: (db, now, limit) =>
      db
        .prepare(
          `DELETE FROM oauth_grants WHERE rowid IN (
             SELECT rowid FROM oauth_grants g WHERE code_used_at IS NULL AND code_expires_at <= ?
                AND NOT EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.grant_id = g.id) LIMIT ?)`,
        )
        .bind(now, limit),
  },
  {
    what: `OAuth grants ended more than ${ENDED_RECORDS_KEPT_DAYS.grant} days ago`,
    statement: (db, now, limit) =>
      // A token outliving its grant is not issued (an access token's expiry is capped by the grant's); the check
      // keeps the foreign key whatever a past version wrote.
      db
        .prepare(
          `DELETE FROM oauth_grants WHERE rowid IN (
             SELECT rowid FROM oauth_grants g WHERE expires_at <= ?
                AND NOT EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.grant_id = g.id) LIMIT ?)`,
        )
        .bind(daysBefore(now, ENDED_RECORDS_KEPT_DAYS.grant), limit),
  },
  {
    what: `registered OAuth clients no grant or pending consent names, ${ENDED_RECORDS_KEPT_DAYS.registeredClient} days after registering`,
    statement: (db, now, limit) =>
      db
        .prepare(
          `DELETE FROM oauth_clients WHERE rowid IN (
             SELECT rowid FROM oauth_clients c WHERE from_document = 0 AND created_at <= ?
                AND NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = c.id)
                AND NOT EXISTS (SELECT 1 FROM oauth_requests r WHERE r.client_id = c.id) LIMIT ?)`,
        )
        .bind(iso(daysBefore(now, ENDED_RECORDS_KEPT_DAYS.registeredClient)), limit),
  },
  {
    what: 'client metadata documents past their cache lifetime that no grant or pending consent names',
    statement: (db, now, limit) =>
      db
        .prepare(
          `DELETE FROM oauth_clients WHERE rowid IN (
             SELECT rowid FROM oauth_clients c WHERE from_document = 1 AND expires_at <= ?
                AND NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = c.id)
                AND NOT EXISTS (SELECT 1 FROM oauth_requests r WHERE r.client_id = c.id) LIMIT ?)`,
        )
        .bind(now, limit),
  },
  {
    what: `invitations ${ENDED_RECORDS_KEPT_DAYS.invitation} days past their expiry`,
    statement: (db, now, limit) =>
      db
        .prepare('DELETE FROM invitations WHERE rowid IN (SELECT rowid FROM invitations WHERE expires_at <= ? LIMIT ?)')
        .bind(iso(daysBefore(now, ENDED_RECORDS_KEPT_DAYS.invitation)), limit),
  },
  {
    what: `development outbox messages older than ${ENDED_RECORDS_KEPT_DAYS.outboxMessage} days`,
    statement: (db, now, limit) =>
      db
        .prepare('DELETE FROM email_outbox WHERE rowid IN (SELECT rowid FROM email_outbox WHERE created_at <= ? LIMIT ?)')
        .bind(iso(daysBefore(now, ENDED_RECORDS_KEPT_DAYS.outboxMessage)), limit),
  },
  {
    what: "agents' runtime hours older than the usage rows",
    statement: (db, now, limit) => db.prepare('DELETE FROM agent_hours WHERE rowid IN (SELECT rowid FROM agent_hours WHERE hour < ? LIMIT ?)').bind(iso(usageRowsKeptSince(now)), limit),
  },
  {
    what: "data jobs' runtime hours older than the usage rows",
    statement: (db, now, limit) => db.prepare('DELETE FROM job_hours WHERE rowid IN (SELECT rowid FROM job_hours WHERE hour < ? LIMIT ?)').bind(iso(usageRowsKeptSince(now)), limit),
  },
  {
    what: "Stripe's events older than the usage rows",
    statement: (db, now, limit) =>
      db.prepare('DELETE FROM stripe_events WHERE rowid IN (SELECT rowid FROM stripe_events WHERE received_at < ? LIMIT ?)').bind(iso(usageRowsKeptSince(now)), limit),
  },
];

/**
 * Deletes the account records whose life has ended (RULES, in order), a chunk at a time within one daily run's
 * budget; what the budget leaves waits for the next day. Run by the daily cron. Answers how many of each went.
 */
export async function pruneEndedRecords(db: D1Database, now: number = clock.now()): Promise<Record<string, number>> {
  const budget = new PruningBudget();
  const deleted: Record<string, number> = {};
  for (const rule of RULES) {
    const drained = await budget.drain((limit) => rule.statement(db, now, limit));
    deleted[rule.what] = drained.deleted;
    if (!drained.done) break;
  }
  return deleted;
}
