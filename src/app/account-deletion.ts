import { nowIso } from '../core/clock';
import type { Env } from '../core/config';
import { ApiError } from '../core/errors';
import type { ThrottleRule } from '../core/throttle';
import { setPlan } from '../services/accounts';
import { closeWallet } from '../services/wallet';
import { deleteEveryWorkspaceOf } from '../services/workspace-deletion';
import { cancelNow, stripeOf } from './billing';
import type { SessionUser } from './context';
import { sendEmailOrLog } from '../services/email';
import { changeMember, organizationAccess, revokePersonalCredentials, type Role } from './members';
import { withCurrentPassword } from './users';
import { hashTrialInboxOf } from '../services/trial-inboxes';
import { twoFactorErasure } from '../services/second-factor';

/**
 * A person deletes their account. What they belong to decides what goes with it:
 * - an organization with other members goes on without them, as when they leave it: their MCP tokens, sandbox keys
 *   and OAuth grants there end, and the workspace API keys they made keep running its programs. The last owner of
 *   one is refused (409), as leaving is: someone else is made owner first, or the others are removed.
 * - an organization they are alone in closes with the account: its paid subscription is cancelled at Stripe first
 *   (nothing is deleted when that fails), then every workspace is deleted (keys refused from the answer on, jobs
 *   cancelled, agents stopped, databases and secrets deleted), its pending invitations revoked and its plan ended.
 *   Its usage rows and ledger stay: they are its bill. Credit it had bought is not refunded by this.
 * The person's row stays for the records that name it (invitations sent, keys made), with the address and name
 * erased and a password hash that matches nothing; every session and emailed link of theirs ends. The address is
 * free for a new sign-up at once, and is told of the deletion.
 */

/** Tries of the password when deleting the account: a session left open is not a way to guess it. */
export const ACCOUNT_DELETIONS_PER_USER: ThrottleRule = { limit: 5, windowMs: 15 * 60_000, what: 'attempts to delete this account' };

export interface OrganizationGone {
  id: string;
  name: string;
}

export interface AccountDeleted {
  /** Organizations closed with the account: it was their only member. */
  closed: OrganizationGone[];
  /** Organizations that go on without the person. */
  left: OrganizationGone[];
}

export interface Belonging {
  id: string;
  name: string;
  role: Role;
  subscription: string | null;
  others: number;
  otherOwners: number;
}

export async function deleteAccount(env: Env, user: SessionUser, password: string, later: (work: Promise<unknown>) => void): Promise<AccountDeleted> {
  await withCurrentPassword(env.DB, user.id, password, env.KEY_ENCRYPTION_KEY, `account-deletion:${user.id}`, ACCOUNT_DELETIONS_PER_USER);
  const { closing, leaving, stuck } = fatesOf(await belongingsOf(env.DB, user.id));
  if (stuck.length > 0) {
    throw ApiError.conflict(
      `You are the last owner of ${stuck.map((organization) => `${organization.name} (${organization.others} other member${organization.others === 1 ? '' : 's'})`).join(', ')}: make another member owner, or remove the others, before deleting your account.`,
    );
  }

  // Closing, before any money moves: from here no invitation is accepted into them (invitations.ts), and one accepted a
  // moment before stops the deletion now, its subscriptions untouched.
  await markClosing(env.DB, closing, user.id);
  // Money first: a subscription that cannot be cancelled stops the deletion before anything else is gone.
  const cancelled: Belonging[] = [];
  try {
    for (const organization of closing) {
      if (!organization.subscription) continue;
      await cancelSubscription(env, organization, cancelled);
      cancelled.push(organization);
    }
  } catch (error) {
    // Nothing was deleted: the organizations whose subscription still runs take invitations again. One whose subscription
    // was cancelled already keeps refusing them for the mark's ten minutes, for the deletion asked again.
    await markClosing(env.DB, closing.filter((organization) => !cancelled.includes(organization)), user.id, false).catch(() => undefined);
    throw error;
  }
  for (const organization of leaving) {
    await changeMember(env.DB, await organizationAccess(env.DB, user.id, organization.id, { evenWithoutTwoFactor: true }), user.id, user.id, 'remove');
    await revokePersonalCredentials(env, organization.id, user.id);
  }
  for (const organization of closing) await closeOrganization(env, organization, user.id);
  await eraseUser(env.DB, user.id);

  const deleted = { closed: closing.map(gone), left: leaving.map(gone) };
  later(sendEmailOrLog(env, { to: user.email, subject: 'Your Sluice account was deleted', text: farewell(user, deleted) }, { note: 'account deletion notice not sent', userId: user.id }));
  return deleted;
}

const gone = ({ id, name }: Belonging): OrganizationGone => ({ id, name });

/**
 * What a deletion does with each organization: those the person is alone in close, the others go on without them;
 * `stuck`, those of the others they are the last owner of, refuse it. Settings says the same beforehand.
 */
export function fatesOf(belongings: Belonging[]): { closing: Belonging[]; leaving: Belonging[]; stuck: Belonging[] } {
  const leaving = belongings.filter((organization) => organization.others > 0);
  return {
    closing: belongings.filter((organization) => organization.others === 0),
    leaving,
    stuck: leaving.filter((organization) => organization.role === 'owner' && organization.otherOwners === 0),
  };
}

/** Every organization the person belongs to, with their role, its subscription, and how many others belong to it and own it. */
export async function belongingsOf(db: D1Database, userId: string): Promise<Belonging[]> {
  const { results } = await db
    .prepare(
      `SELECT o.id, o.name, m.role, o.stripe_subscription_id AS subscription,
              (SELECT COUNT(*) FROM memberships x WHERE x.organization_id = o.id AND x.user_id <> ?1) AS others,
              (SELECT COUNT(*) FROM memberships x WHERE x.organization_id = o.id AND x.user_id <> ?1 AND x.role = 'owner') AS otherOwners
         FROM memberships m JOIN organizations o ON o.id = m.organization_id
        WHERE m.user_id = ?1 ORDER BY m.created_at, o.id`,
    )
    .bind(userId)
    .all<Belonging>();
  return results;
}

/**
 * Ends a closing organization's subscription at once, with no further invoice and no credit for its unused days
 * (nobody is left to spend it). A failure says what was cancelled before it (`cancelled`), which the retry finds
 * cancelled already.
 */
async function cancelSubscription(env: Env, organization: Belonging, cancelled: Belonging[]): Promise<void> {
  const before = cancelled.length ? ` The subscription of ${cancelled.map((one) => one.name).join(', ')} was cancelled already.` : '';
  const stripe = stripeOf(env);
  if (!stripe) {
    throw new ApiError(
      'PROVIDER_UNAVAILABLE',
      `${organization.name} pays by a Stripe subscription, and this installation has no Stripe settings to cancel it with (STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET): the account was not deleted.${before} Ask the operator.`,
    );
  }
  try {
    await cancelNow(stripe, organization.subscription!, { prorate: false });
  } catch (error) {
    console.error(JSON.stringify({ level: 'error', note: 'subscription not cancelled; account not deleted', organizationId: organization.id, error: String(error) }));
    throw new ApiError('PROVIDER_UNAVAILABLE', `Stripe did not cancel the subscription of ${organization.name} just now, so the account was not deleted.${before} Try again in a minute.`, {
      retryAfter: 60,
    });
  }
}

/**
 * Marks the organizations the person is alone in as closing, in one batch, each only while nobody else belongs to it;
 * one that someone joined a moment ago stops the deletion (409) before anything is done. `closing` false lets them go.
 */
async function markClosing(db: D1Database, organizations: Belonging[], userId: string, closing = true): Promise<void> {
  if (organizations.length === 0) return;
  const marks = await db.batch(
    organizations.map((organization) =>
      closing
        ? db
            .prepare('UPDATE organizations SET closing_at = ?1 WHERE id = ?2 AND NOT EXISTS (SELECT 1 FROM memberships WHERE organization_id = ?2 AND user_id <> ?3)')
            .bind(nowIso(), organization.id, userId)
        : db.prepare('UPDATE organizations SET closing_at = NULL WHERE id = ? AND closed_at IS NULL').bind(organization.id),
    ),
  );
  const joined = organizations.filter((_, index) => marks[index]!.meta.changes !== 1);
  if (closing && joined.length) {
    await markClosing(db, organizations, userId, false).catch(() => undefined);
    throw ApiError.conflict(`Someone joined ${joined.map((organization) => organization.name).join(', ')} a moment ago; look at its members and try again. Nothing was deleted.`);
  }
}

/** What a closed organization is called from then on: its name was often its person's ("Ada's organization"). */
const CLOSED_NAME = 'Closed organization';

/**
 * Closes an organization whose only member is leaving with their account. Its wallet first takes no credit from then
 * on (a top-up paid meanwhile is refunded); then one batch marks it closed and revokes its pending invitations, only
 * while nobody else belongs to it (someone who joined a moment before keeps it open, its wallet and invitations with
 * it: 409); its name, often the person's, is replaced, and the inbox its free trial was started from kept only as a
 * digest. Its workspaces then go as a deleted workspace does, and its plan ends in D1 and the wallet. A plan's checkout
 * paid while it closed was either recorded before the mark, and is cancelled here, or finds it closed and cancels
 * itself (billing.ts). Safe to run again on an organization a deletion cut short closed already.
 */
async function closeOrganization(env: Env, organization: Belonging, userId: string): Promise<void> {
  const now = nowIso();
  const alone = 'NOT EXISTS (SELECT 1 FROM memberships WHERE organization_id = ?2 AND user_id <> ?3)';
  // The wallet first: a top-up's webhook that read the organization open a moment ago finds it closed, and refunds.
  await closeWallet(env, organization.id, true);
  const [closed] = await env.DB.batch([
    env.DB.prepare(`UPDATE organizations SET closed_at = COALESCE(closed_at, ?1), name = ?4 WHERE id = ?2 AND ${alone}`).bind(now, organization.id, userId, CLOSED_NAME),
    env.DB.prepare(`UPDATE invitations SET revoked_at = ?1 WHERE organization_id = ?2 AND accepted_at IS NULL AND revoked_at IS NULL AND ${alone}`).bind(now, organization.id, userId),
  ]);
  if (closed!.meta.changes !== 1) {
    await closeWallet(env, organization.id, false);
    await markClosing(env.DB, [organization], userId, false).catch(() => undefined);
    throw ApiError.conflict(`Someone joined ${organization.name} a moment ago; look at its members and try again.`);
  }
  await forgetSubscription(env, organization);
  await hashTrialInboxOf(env.DB, organization.id);
  await deleteEveryWorkspaceOf(env, organization.id);
  await setPlan(env, organization.id, { plan: null });
  await env.DB.prepare('DELETE FROM memberships WHERE organization_id = ? AND user_id = ?').bind(organization.id, userId).run();
}

/** The closed organization's subscription, gone: one recorded after the deletion began (a checkout paid meanwhile) is cancelled too. */
async function forgetSubscription(env: Env, organization: Belonging): Promise<void> {
  const row = await env.DB.prepare('SELECT stripe_subscription_id AS id FROM organizations WHERE id = ?').bind(organization.id).first<{ id: string | null }>();
  if (!row?.id) return;
  if (row.id !== organization.subscription) await cancelSubscription(env, { ...organization, subscription: row.id }, []);
  await env.DB.prepare('UPDATE organizations SET stripe_subscription_id = NULL WHERE id = ? AND stripe_subscription_id = ?').bind(organization.id, row.id).run();
}

/**
 * The person's row, erased: the address and name gone (the address free for a sign-up), a hash no password matches,
 * and every membership, session, emailed link and OAuth grant of theirs ended, in one batch.
 */
async function eraseUser(db: D1Database, userId: string): Promise<void> {
  const now = nowIso();
  await db.batch([
    db.prepare(`UPDATE users SET email = 'deleted:' || id, name = '', password_hash = '', deleted_at = ? WHERE id = ?`).bind(now, userId),
    // A membership made after the deletion read them (an invitation accepted in another tab) goes too.
    db.prepare('DELETE FROM memberships WHERE user_id = ?').bind(userId),
    db.prepare('DELETE FROM sessions WHERE user_id = ?').bind(userId),
    db.prepare('DELETE FROM password_resets WHERE user_id = ?').bind(userId),
    db.prepare('DELETE FROM email_verifications WHERE user_id = ?').bind(userId),
    db.prepare('DELETE FROM email_changes WHERE user_id = ?').bind(userId),
    ...twoFactorErasure(db, userId),
    db.prepare("UPDATE oauth_grants SET revoked_at = ?, revoked_reason = 'account deleted' WHERE user_id = ? AND revoked_at IS NULL").bind(now, userId),
    db.prepare('DELETE FROM oauth_tokens WHERE grant_id IN (SELECT id FROM oauth_grants WHERE user_id = ?)').bind(userId),
  ]);
}

function farewell(user: SessionUser, deleted: AccountDeleted): string {
  const lines = [`Hello,\n\nThe Sluice account of ${user.email} was deleted at ${nowIso().slice(0, 16).replace('T', ' ')} UTC.`];
  if (deleted.closed.length) lines.push(`Closed with it, their workspaces and keys deleted: ${deleted.closed.map((organization) => organization.name).join(', ')}.`);
  if (deleted.left.length) lines.push(`Left, and going on without you: ${deleted.left.map((organization) => organization.name).join(', ')}.`);
  lines.push('If this was not you, someone had your password: tell the people who run this Sluice installation.');
  return lines.join('\n\n');
}
