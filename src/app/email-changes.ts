import { nowIso } from '../core/clock';
import { type Env, publicUrls } from '../core/config';
import { sha256Hex } from '../core/digest';
import { ApiError } from '../core/errors';
import { linkWorks, newEmailLink } from './email-links';
import { countAttempt, type ThrottleRule } from '../core/throttle';
import type { SessionUser } from './context';
import { sendEmailOrLog } from '../services/email';
import type { VerificationSent } from './email-verification';
import { findUserByEmail, withCurrentPassword } from './users';
import { inboxOf } from './trial';

/**
 * A signed-in person changes the address they sign in with. They give their password (a session left open is not
 * enough), and the change waits for the link sent to the new address, so nobody moves an account to an inbox they
 * cannot read. The old address is told when the change is asked for (someone else with the password may have asked
 * it: a new password, or signing the other browsers out, voids it) and once it is done. A device cookie is signed over
 * the address (auth/devices.ts), so browsers known under the old one are known no more.
 */

/** A change's link works for a day, as a confirmation link does. */
export const EMAIL_CHANGE_LIFETIME_MS = 24 * 60 * 60 * 1000;
/** Changes asked for per person: each is an email to an address of their choosing, and a password tried. */
export const EMAIL_CHANGES_PER_USER: ThrottleRule = { limit: 5, windowMs: 60 * 60_000, what: 'email address changes for this account' };
/** And per inbox the link goes to, whoever asks: accounts made for it must not aim Sluice's mail at someone's inbox. */
export const EMAIL_CHANGES_PER_INBOX: ThrottleRule = { limit: 3, windowMs: 24 * 60 * 60_000, what: 'email address changes asked to this address today' };

const TAKEN = 'An account with this email address already exists.';

/** Sends the link that moves `user` to `email`, replacing any change asked for before. */
export async function requestEmailChange(env: Env, user: SessionUser, email: string, password: string): Promise<VerificationSent> {
  const stored = await withCurrentPassword(env.DB, user.id, password, env.KEY_ENCRYPTION_KEY, `email-change:${user.id}`, EMAIL_CHANGES_PER_USER);
  if (email === stored.email) {
    throw new ApiError('VALIDATION_ERROR', 'That is the address you have now.', { details: [{ field: 'email', location: 'body', message: 'Give the new address.' }] });
  }
  if (await findUserByEmail(env.DB, email)) throw ApiError.conflict(TAKEN);
  await countAttempt(env.DB, `email-change-to:${inboxOf(email)}`, EMAIL_CHANGES_PER_INBOX);
  const { token, tokenHash, expiresAt } = await newEmailLink(EMAIL_CHANGE_LIFETIME_MS);
  await env.DB.batch([
    env.DB.prepare('DELETE FROM email_changes WHERE user_id = ?').bind(user.id),
    env.DB.prepare('INSERT INTO email_changes (token_hash, user_id, old_email, new_email, expires_at) VALUES (?, ?, ?, ?, ?)').bind(tokenHash, user.id, stored.email, email, expiresAt),
  ]);
  const delivery = await sendEmailOrLog(
    env,
    {
      to: email,
      subject: 'Confirm your new email address for Sluice',
      text: `Hello,\n\nThe Sluice account of ${stored.email} asked to sign in with ${email} from now on. Confirm that this address is yours to make the change:\n\n${publicUrls(env).app}/confirm-email-change?token=${token}\n\nThe link works for 24 hours. If you did not ask for this, ignore this email: nothing changes.`,
    },
    { note: 'email change link not sent', userId: user.id },
  );
  await sendEmailOrLog(
    env,
    {
      to: stored.email,
      subject: 'Your Sluice account asked to change its email address',
      text: `Hello,\n\nSomeone signed in to the Sluice account of ${stored.email} asked to sign in with ${email} from now on. The change waits for a link sent to that address, for 24 hours.\n\nIf this was you, there is nothing to do here. If it was not, set a new password now (${publicUrls(env).app}/forgot-password): that signs out every browser and voids the change.`,
    },
    { note: 'email change notice to the old address not sent', userId: user.id },
  );
  return { sentTo: email, emailed: delivery.sent };
}

export const INVALID_EMAIL_CHANGE_LINK =
  'This link does not change any address: it was used already, has expired (links work for 24 hours), or was replaced by a newer one. Ask again from Settings.';

/** The change a link is for, without making it (its page shows both addresses and asks); null for a link that no longer works. */
export async function emailChangeFor(db: D1Database, token: string): Promise<{ oldEmail: string; newEmail: string } | null> {
  const found = await db
    .prepare('SELECT old_email AS oldEmail, new_email AS newEmail, expires_at AS expiresAt, (SELECT email FROM users WHERE id = email_changes.user_id) AS current FROM email_changes WHERE token_hash = ?')
    .bind(await sha256Hex(token))
    .first<{ oldEmail: string; newEmail: string; expiresAt: string; current: string | null }>();
  return found && linkWorks(found, found.oldEmail, found.current) ? { oldEmail: found.oldEmail, newEmail: found.newEmail } : null;
}

/**
 * Makes the change a link is for, once: the account must still have the address the change was asked from, and
 * the new one must still be free. The new address counts as confirmed (the link reached it); links sent to the
 * old one (a confirmation, a password reset) go with it. Answers both addresses, so the old one can be told.
 */
export async function confirmEmailChange(db: D1Database, token: string): Promise<{ userId: string; oldEmail: string; newEmail: string }> {
  const found = await db
    .prepare(
      `DELETE FROM email_changes WHERE token_hash = ?
       RETURNING user_id AS userId, old_email AS oldEmail, new_email AS newEmail, expires_at AS expiresAt, (SELECT email FROM users WHERE id = email_changes.user_id) AS current`,
    )
    .bind(await sha256Hex(token))
    .first<{ userId: string; oldEmail: string; newEmail: string; expiresAt: string; current: string | null }>();
  if (!found || !linkWorks(found, found.oldEmail, found.current)) {
    throw new ApiError('VALIDATION_ERROR', INVALID_EMAIL_CHANGE_LINK, { details: [{ field: 'token', location: 'body', message: 'unknown, used or expired' }] });
  }
  try {
    await db.batch([
      db.prepare('UPDATE users SET email = ?, email_verified_at = ? WHERE id = ? AND email = ?').bind(found.newEmail, nowIso(), found.userId, found.oldEmail),
      db.prepare('DELETE FROM email_verifications WHERE user_id = ?').bind(found.userId),
      db.prepare('DELETE FROM password_resets WHERE user_id = ?').bind(found.userId),
    ]);
  } catch (error) {
    // Taken since the change was asked for: the unique index lets one account have it.
    if (/UNIQUE constraint failed: users\.email/.test(String(error))) throw ApiError.conflict(`${TAKEN} The address was not changed.`);
    throw error;
  }
  return { userId: found.userId, oldEmail: found.oldEmail, newEmail: found.newEmail };
}

/** Tells the old address that the account now signs in with the new one: a change nobody there made is noticed. */
export function tellOldAddress(env: Env, change: { userId: string; oldEmail: string; newEmail: string }): Promise<unknown> {
  return sendEmailOrLog(
    env,
    {
      to: change.oldEmail,
      subject: 'Your Sluice account has a new email address',
      text: `Hello,\n\nThe Sluice account that signed in with ${change.oldEmail} signs in with ${change.newEmail} from now on; this address no longer reaches it.\n\nIf you did not make this change, write to your organization's owner or to Sluice's support at once.`,
    },
    { note: 'email change notice not sent', userId: change.userId },
  );
}
