import { type Env, publicUrls } from '../core/config';
import { sha256Hex } from '../core/digest';
import { ApiError } from '../core/errors';
import { linkWorks, newEmailLink } from './email-links';
import { markEmailConfirmed } from '../services/accounts';
import { countAttempt, type ThrottleRule } from '../core/throttle';
import type { SessionUser } from './context';
import { type Delivery, sendEmailOrLog } from '../services/email';

/** A confirmation link works for a day. */
export const VERIFICATION_LIFETIME_MS = 24 * 60 * 60 * 1000;

/** Links sent per person: each is an email to an address nobody has confirmed yet. */
export const VERIFICATIONS_PER_USER: ThrottleRule = { limit: 5, windowMs: 60 * 60_000, what: 'confirmation emails for this account' };

/** Where the link went: as an invitation's, the email provider, the development outbox, or nowhere. */
export interface VerificationSent {
  sentTo: string;
  emailed: Delivery['sent'];
}

/**
 * Sends `user` a link that confirms their email address, replacing any link sent before (one outstanding a
 * person; only its token's SHA-256 is kept). A failed send is logged and answered as `nowhere`: the account
 * stands, and the dashboard offers to send it again.
 */
export async function sendVerification(env: Env, user: SessionUser): Promise<VerificationSent> {
  await countAttempt(env.DB, `verify-email:${user.id}`, VERIFICATIONS_PER_USER);
  const { token, tokenHash, expiresAt } = await newEmailLink(VERIFICATION_LIFETIME_MS);
  await env.DB.batch([
    env.DB.prepare('DELETE FROM email_verifications WHERE user_id = ?').bind(user.id),
    env.DB.prepare('INSERT INTO email_verifications (token_hash, user_id, email, expires_at) VALUES (?, ?, ?, ?)').bind(tokenHash, user.id, user.email, expiresAt),
  ]);
  const link = `${publicUrls(env).app}/verify-email?token=${token}`;
  const delivery = await sendEmailOrLog(
    env,
    {
      to: user.email,
      subject: 'Confirm your email address for Sluice',
      // Nothing the person typed but the address: a sign-up must not send anyone words of the signer's choosing.
      text: `Hello,\n\nConfirm that ${user.email} is yours to start your organization's free trial on Sluice:\n\n${link}\n\nThe link works for 24 hours. If you did not sign up for Sluice, ignore this email.`,
    },
    { note: 'confirmation email not sent', userId: user.id },
  );
  return { sentTo: user.email, emailed: delivery.sent };
}

/** The address a confirmation link would confirm, without spending it (its page shows it and asks); null for a link that no longer works. */
export async function confirmationLinkFor(db: D1Database, token: string): Promise<{ email: string } | null> {
  const found = await db
    .prepare('SELECT email, expires_at AS expiresAt, (SELECT email FROM users WHERE id = email_verifications.user_id) AS current FROM email_verifications WHERE token_hash = ?')
    .bind(await sha256Hex(token))
    .first<{ email: string; expiresAt: string; current: string | null }>();
  return found && linkWorks(found, found.email, found.current) ? { email: found.email } : null;
}

export const INVALID_CONFIRMATION_LINK =
  'This confirmation link is not valid: it was used already, has expired (links work for 24 hours) or was replaced by a newer one. Sign in and send a new one from Plans.';

/**
 * Confirms the address a link was sent to, once: the link is deleted, and a link to an address the person no
 * longer has, or past its day, confirms nothing. Answers whose address it was.
 */
export async function confirmEmail(db: D1Database, token: string): Promise<{ userId: string; email: string }> {
  const found = await db
    .prepare(
      `DELETE FROM email_verifications WHERE token_hash = ?
       RETURNING user_id AS userId, email, expires_at AS expiresAt, (SELECT email FROM users WHERE id = email_verifications.user_id) AS current`,
    )
    .bind(await sha256Hex(token))
    .first<{ userId: string; email: string; expiresAt: string; current: string | null }>();
  if (!found || !linkWorks(found, found.email, found.current)) {
    throw new ApiError('VALIDATION_ERROR', INVALID_CONFIRMATION_LINK, { details: [{ field: 'token', location: 'body', message: 'unknown, used or expired' }] });
  }
  await markEmailConfirmed(db, found.email);
  return { userId: found.userId, email: found.email };
}

/** Refuses what needs a confirmed email address (the free trial) to a person who has not confirmed theirs. */
export function requireVerifiedEmail(user: SessionUser, what: string): void {
  if (user.emailVerifiedAt) return;
  throw ApiError.forbidden(`Confirm your email address to ${what}: open the link we sent to ${user.email}, or send a new one from Plans.`);
}
