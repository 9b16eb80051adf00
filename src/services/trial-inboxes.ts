import { sha256Hex } from '../core/digest';

/**
 * What `organizations.trial_inbox` keeps of the inbox a trial was started from: its SHA-256, enough to refuse a second
 * trial from it (a unique index) without keeping the address, which outlives an account deleted since.
 */
export async function trialInboxDigest(inbox: string): Promise<string> {
  return `sha256:${await sha256Hex(inbox)}`;
}

/** Trial inboxes kept as addresses rewritten a night at most. */
const PLAIN_INBOXES_A_NIGHT = 500;

/**
 * Trials started before digests were kept (2026-12-01) kept the inbox as an address: the nightly run rewrites them as
 * their digests, so no address outlives its account and the same inbox cannot start a second trial by the digest
 * differing from the address. One whose digest another organization holds already (a second trial was started from
 * the inbox meanwhile) is let go instead: that digest refuses the inbox from now on. Answers how many were rewritten.
 */
export function hashPlainTrialInboxes(db: D1Database, limit = PLAIN_INBOXES_A_NIGHT): Promise<number> {
  return rewritePlainInboxes(db, limit);
}

/** The same for one organization's inbox at once: one closed with its account keeps no address till the night. */
export async function hashTrialInboxOf(db: D1Database, organizationId: string): Promise<void> {
  await rewritePlainInboxes(db, 1, organizationId);
}

async function rewritePlainInboxes(db: D1Database, limit: number, organizationId?: string): Promise<number> {
  const { results } = await db
    .prepare(`SELECT id, trial_inbox AS inbox FROM organizations WHERE trial_inbox IS NOT NULL AND trial_inbox NOT LIKE 'sha256:%' ${organizationId ? 'AND id = ?2' : ''} LIMIT ?1`)
    .bind(...(organizationId ? [limit, organizationId] : [limit]))
    .all<{ id: string; inbox: string }>();
  if (results.length === 0) return 0;
  const statements = await Promise.all(
    results.map(async ({ id, inbox }) => {
      const digest = await trialInboxDigest(inbox);
      return db
        .prepare(
          `UPDATE organizations SET trial_inbox = CASE WHEN EXISTS (SELECT 1 FROM organizations WHERE trial_inbox = ?3) THEN NULL ELSE ?3 END
            WHERE id = ?1 AND trial_inbox = ?2`,
        )
        .bind(id, inbox, digest);
    }),
  );
  await db.batch(statements);
  return results.length;
}
