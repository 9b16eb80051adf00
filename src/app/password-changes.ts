import { nowIso } from '../core/clock';
import { type Env, publicUrls } from '../core/config';
import { sha256Hex } from '../core/digest';
import { ApiError } from '../core/errors';
import { linkWorks, newEmailLink } from './email-links';
import { disableTwoFactor } from './two-factor';
import { markEmailConfirmed, revokeKey } from '../services/accounts';
import { closeWaysOut } from '../services/workspace-deletion';
import { clearAttempts, countAttempt, type ThrottleRule } from '../core/throttle';
import { hashPassword } from './auth/passwords';
import type { SessionUser } from './context';
import { type Delivery, deliveryRoute, sendEmailOrLog } from '../services/email';
import { findUserByEmail, findUserById, setPassword, type StoredUser, visibleUser, withCurrentPassword } from './users';

/**
 * A new password, two ways: a signed-in person changes theirs knowing the current one, and a person who forgot
 * it asks for a link to their address and sets one there. Either way the password's moment is kept (known-device
 * cookies are signed over it) and every session of the account ends; the route starts this browser's anew.
 */

/** A reset link works for an hour: it is a password's worth, sitting in an inbox. */
export const RESET_LIFETIME_MS = 60 * 60 * 1000;
/** Reset links asked for one address, whoever asks: each is an email to it. */
export const RESETS_PER_EMAIL: ThrottleRule = { limit: 3, windowMs: 60 * 60_000, what: 'password reset emails for this address' };
/** Reset requests from one client, whatever the address: each address asked for writes a count of its own. */
export const RESETS_PER_CLIENT: ThrottleRule = { limit: 10, windowMs: 60 * 60_000, what: 'password reset requests from this address' };
/** Tries of the current password when changing it: a session left open is not a way to guess it. */
export const PASSWORD_CHANGES_PER_USER: ThrottleRule = { limit: 5, windowMs: 15 * 60_000, what: "attempts to change this account's password" };

/** A password set while this browser was changing it: the newer one stands, and this browser signs in with it. */
export const passwordChangedMeanwhile = () => ApiError.conflict('The password was set again elsewhere a moment ago (a reset, or a change in another browser). Sign in with the newest one.');

/** A bucket of the sign-in throttle for an address (api/auth.ts): a reset proves the inbox, so its count starts again. */
const signInBucket = (email: string) => `email:${email}`;

/** How many unexpired reset links a person may have at once: a request does not void the link an earlier one sent. */
export const RESET_LINKS_KEPT = 3;

/**
 * Asks for a reset link for `email`. Counted per client, then per address, whether or not an account uses it; the
 * link is made and sent after the answer (`later`, the request's waitUntil), so neither the answer nor its timing
 * tells whether one does. A browser that signed in to the account since its password was set (`deviceOf`,
 * auth/devices.ts) has a count of its own, so requests from elsewhere cannot use up its owner's. Answers where this
 * installation's emails go, which is the same for every address.
 */
export async function requestPasswordReset(
  env: Env,
  request: { email: string; client: string; deviceOf: (user: StoredUser) => Promise<string | null> },
  later: (work: Promise<unknown>) => void,
): Promise<Delivery['sent']> {
  const { email } = request;
  await countAttempt(env.DB, `reset-ip:${request.client}`, RESETS_PER_CLIENT);
  const user = await findUserByEmail(env.DB, email);
  const device = user ? await request.deviceOf(user) : null;
  await countAttempt(env.DB, device ? `reset-email-device:${email}:${device}` : `reset-email:${email}`, RESETS_PER_EMAIL);
  if (user) {
    later(
      sendResetLink(env, user).catch((error: unknown) => {
        console.error(JSON.stringify({ level: 'error', note: 'password reset link not made', userId: user.id, error: String(error) }));
      }),
    );
  }
  return deliveryRoute(env);
}

/** A new link, beside the person's last few unexpired ones (RESET_LINKS_KEPT); only its token's SHA-256 is kept. */
async function sendResetLink(env: Env, user: StoredUser): Promise<void> {
  const { token, tokenHash, expiresAt } = await newEmailLink(RESET_LIFETIME_MS);
  await env.DB.batch([
    env.DB.prepare(
      `DELETE FROM password_resets WHERE user_id = ?1
         AND (expires_at <= ?2 OR token_hash NOT IN (SELECT token_hash FROM password_resets WHERE user_id = ?1 AND expires_at > ?2 ORDER BY expires_at DESC LIMIT ?3))`,
    ).bind(user.id, nowIso(), RESET_LINKS_KEPT - 1),
    env.DB.prepare('INSERT INTO password_resets (token_hash, user_id, email, expires_at) VALUES (?, ?, ?, ?)').bind(tokenHash, user.id, user.email, expiresAt),
  ]);
  const app = publicUrls(env).app;
  await sendEmailOrLog(
    env,
    {
      to: user.email,
      subject: 'Reset your Sluice password',
      text: `Hello,\n\nSomeone asked to set a new password for the Sluice account of ${user.email}. If it was you, choose one here:\n\n${app}/reset-password?token=${token}\n\nThe link works for an hour, once. Setting a password signs out every browser signed in to the account.\n\nIf you did not ask, ignore this email: your password stays as it is.`,
    },
    { note: 'password reset email not sent', userId: user.id },
  );
}

/** The account and address a reset link is for while it can still be used (not spent, past its hour or voided by a new password), else null. Reading it spends nothing. */
export async function resetLinkFor(db: D1Database, token: string): Promise<{ userId: string; email: string } | null> {
  const found = await db
    .prepare(
      `SELECT r.user_id AS userId, r.email, r.expires_at AS expiresAt, u.email AS current
         FROM password_resets r JOIN users u ON u.id = r.user_id
        WHERE r.token_hash = ?`,
    )
    .bind(await sha256Hex(token))
    .first<{ userId: string; email: string; expiresAt: string; current: string }>();
  return found && linkWorks(found, found.email, found.current) ? { userId: found.userId, email: found.email } : null;
}

export const INVALID_RESET_LINK =
  'This link does not set a password: it was used already, has expired (links work for an hour), or the password was set since. Ask for a new one.';

/** A new password and its hash: the hash is what this browser's session is started under (auth/sessions.ts), never shown. */
export interface PasswordSet {
  user: SessionUser;
  passwordHash: string;
}

/**
 * Sets the password a reset link is for, once: the link is spent before the new password is hashed (a made-up
 * token costs no hashing), and a link past its hour, or to an address the account no longer has, sets nothing.
 * Opening the link proved the inbox, so the address counts as confirmed, and its sign-in count starts again. An
 * account whose address was not confirmed yet may have been made by someone else with it (whoever signs up first
 * holds the address until it is confirmed): what that account made to use the API (keys, MCP tokens, sandbox keys,
 * OAuth grants) is revoked with the reset, and what it set up to send data out (webhook endpoints, vendor
 * connections, agents) removed, so its new owner inherits no one else's way in or out.
 */
export async function resetPassword(env: Env, token: string, password: string, beforeSpending?: (userId: string) => Promise<void>): Promise<PasswordSet> {
  // What the account asks beyond the link (its second factor) is asked before the link is spent: a wrong code leaves
  // it to be used again, and sets nothing.
  if (beforeSpending) {
    const link = await resetLinkFor(env.DB, token);
    if (!link) throw new ApiError('VALIDATION_ERROR', INVALID_RESET_LINK, { details: [{ field: 'token', location: 'body', message: 'unknown, used or expired' }] });
    await beforeSpending(link.userId);
  }
  const found = await env.DB.prepare(
    `DELETE FROM password_resets WHERE token_hash = ?
     RETURNING user_id AS userId, email, expires_at AS expiresAt, (SELECT email FROM users WHERE id = password_resets.user_id) AS current`,
  )
    .bind(await sha256Hex(token))
    .first<{ userId: string; email: string; expiresAt: string; current: string | null }>();
  if (!found || !linkWorks(found, found.email, found.current)) {
    throw new ApiError('VALIDATION_ERROR', INVALID_RESET_LINK, { details: [{ field: 'token', location: 'body', message: 'unknown, used or expired' }] });
  }
  const before = await findUserById(env.DB, found.userId);
  const passwordHash = await hashPassword(password, env.KEY_ENCRYPTION_KEY);
  await setPassword(env.DB, found.userId, passwordHash, nowIso());
  if (before && !before.emailVerifiedAt) {
    await revokeWhatUserMade(env, found.userId, 'password reset of an unconfirmed account');
    await undoWhatItSetUp(env, found.userId);
    // Whoever signed up with the address cannot keep its owner out by a second factor of their own either (none can be
    // set up before the address is confirmed: this is for one set up otherwise).
    await disableTwoFactor(env.DB, found.userId);
  }
  await markEmailConfirmed(env.DB, found.email);
  await clearAttempts(env.DB, signInBucket(found.email));
  return { user: visibleUser((await findUserById(env.DB, found.userId))!), passwordHash };
}

/** Every credential a person made that is still good, each through its workspace's gate first, and their OAuth grants. */
async function revokeWhatUserMade(env: Env, userId: string, reason: string): Promise<void> {
  const { results } = await env.DB.prepare('SELECT id FROM api_keys WHERE created_by = ? AND revoked_at IS NULL').bind(userId).all<{ id: string }>();
  for (const { id } of results) await revokeKey(env, id);
  await env.DB.batch([
    env.DB.prepare('UPDATE oauth_grants SET revoked_at = ?, revoked_reason = ? WHERE user_id = ? AND revoked_at IS NULL').bind(nowIso(), reason, userId),
    env.DB.prepare(`DELETE FROM oauth_tokens WHERE grant_id IN (SELECT id FROM oauth_grants WHERE user_id = ?)`).bind(userId),
  ]);
}

/**
 * What an unconfirmed account set up that carries its organization's data outward, in each organization it alone
 * belongs to (inviting needs a confirmed address, so nobody else there set anything up): webhook endpoints (events
 * carry balances, key names and usage, to whoever made the endpoint), vendor connections (calls through one are seen
 * in that vendor account) and deployed agents. Databases and MCP servers stay: only the organization's own keys,
 * revoked above, reach them.
 */
async function undoWhatItSetUp(env: Env, userId: string): Promise<void> {
  const { results: workspaces } = await env.DB.prepare(
    `SELECT w.id FROM memberships m JOIN workspaces w ON w.organization_id = m.organization_id
      WHERE m.user_id = ?1 AND w.deleted_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM memberships other WHERE other.organization_id = m.organization_id AND other.user_id <> ?1)`,
  )
    .bind(userId)
    .all<{ id: string }>();
  for (const { id } of workspaces) await closeWaysOut(env, id);
}

/**
 * Changes a signed-in person's password, which they must give first (counted: five tries a quarter hour). The
 * account's address is told, so a change nobody there made is noticed; the email is sent after the answer.
 */
export async function changePassword(env: Env, user: SessionUser, current: string, next: string, later: (work: Promise<unknown>) => void): Promise<PasswordSet> {
  const stored = await withCurrentPassword(env.DB, user.id, current, env.KEY_ENCRYPTION_KEY, `password-change:${user.id}`, PASSWORD_CHANGES_PER_USER);
  if (current === next) {
    throw new ApiError('VALIDATION_ERROR', 'The new password is the one you have now.', { details: [{ field: 'newPassword', location: 'body', message: 'Choose a password other than the current one.' }] });
  }
  const at = nowIso();
  const passwordHash = await hashPassword(next, env.KEY_ENCRYPTION_KEY);
  // Over the hash the current password was checked against: a reset or another change that landed meanwhile wins.
  if (!(await setPassword(env.DB, user.id, passwordHash, at, stored.passwordHash))) throw passwordChangedMeanwhile();
  await clearAttempts(env.DB, `password-change:${user.id}`);
  later(
    sendEmailOrLog(
      env,
      {
        to: user.email,
        subject: 'Your Sluice password was changed',
        text: `Hello,\n\nThe password of the Sluice account of ${user.email} was changed at ${at.slice(0, 16).replace('T', ' ')} UTC, and every browser signed in to it was signed out.\n\nIf you did not change it, set a new one now:\n\n${publicUrls(env).app}/forgot-password\n\nThen look at the account's API keys, MCP tokens and members for anything you did not make.`,
      },
      { note: 'password change notice not sent', userId: user.id },
    ),
  );
  return { user: { ...visibleUser(stored), passwordChangedAt: at }, passwordHash };
}
