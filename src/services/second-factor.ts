import { publicUrls, type Env } from '../core/config';
import { ApiError } from '../core/errors';
import { sendEmailOrLog } from './email';

/**
 * The statements that forget a person's second factor (turning it off, an operator's reset, deleting the account),
 * with the counts of codes tried against it (`two-factor:<user>`, per browser `two-factor:<user>:<device>`, and their
 * `:day`): they guarded a secret that is gone, and left in place a day's worth of someone's wrong guesses would refuse
 * the codes of the app the person sets up next. The range keeps to the bucket's primary key, where LIKE would not.
 */
export function twoFactorErasure(db: D1Database, userId: string): D1PreparedStatement[] {
  const codes = `two-factor:${userId}`;
  return [
    db.prepare('DELETE FROM two_factor WHERE user_id = ?').bind(userId),
    db.prepare('DELETE FROM two_factor_recovery_codes WHERE user_id = ?').bind(userId),
    db.prepare('DELETE FROM sign_in_challenges WHERE user_id = ?').bind(userId),
    db.prepare("DELETE FROM auth_throttle WHERE bucket = ?1 OR (bucket > ?1 || ':' AND bucket < ?1 || ';')").bind(codes),
  ];
}

export interface TwoFactorReset {
  userId: string;
  email: string;
  /** Browsers that were signed in, all signed out now. */
  signedOut: number;
  /** Organizations that require it of their members: the person is shut out of them until they turn it on again. */
  requiredBy: string[];
}

/**
 * The operator's way back in for a person who lost both their authenticator app and their recovery codes, and is signed
 * in nowhere (signed in, they make new recovery codes with the password). After the operator has made sure the request
 * comes from the address's owner: the second factor is forgotten, every browser of the account signed out, and the
 * address told, so a reset nobody there asked for is noticed. The password alone signs in again; an organization that
 * requires a second factor shuts the person out until they turn it on again. 404 for an address no account has, 409
 * for an account without two-factor sign-in on (nothing is changed then).
 */
export async function resetTwoFactor(env: Env, email: string): Promise<TwoFactorReset> {
  const user = await env.DB.prepare('SELECT id, email FROM users WHERE email = ? AND deleted_at IS NULL').bind(email).first<{ id: string; email: string }>();
  if (!user) throw ApiError.notFound(`No account has the email address ${email}.`);
  // On, not merely begun: a setup never confirmed signs nobody out and tells nobody anything (nothing to reset).
  const on = await env.DB.prepare('SELECT 1 FROM two_factor WHERE user_id = ? AND enabled_at IS NOT NULL').bind(user.id).first();
  if (!on) throw ApiError.conflict(`The account of ${user.email} has no two-factor sign-in: nothing to reset.`);
  const signedOut = (await env.DB.batch([...twoFactorErasure(env.DB, user.id), env.DB.prepare('DELETE FROM sessions WHERE user_id = ?').bind(user.id)])).at(-1)!;
  const { results } = await env.DB.prepare(
    'SELECT o.name FROM memberships m JOIN organizations o ON o.id = m.organization_id WHERE m.user_id = ? AND o.two_factor_required_at IS NOT NULL ORDER BY o.name',
  )
    .bind(user.id)
    .all<{ name: string }>();
  const requiredBy = results.map((row) => row.name);
  const app = publicUrls(env).app;
  await sendEmailOrLog(
    env,
    {
      to: user.email,
      subject: 'Two-factor sign-in was reset for your Sluice account',
      text:
        `Hello,\n\nThe operator of this Sluice installation turned off two-factor sign-in for the account of ${user.email}, as asked for by someone who could not sign in without it. Every browser signed in to the account was signed out, and the password alone signs in again.\n\n` +
        `${requiredBy.length ? `${requiredBy.join(', ')} require${requiredBy.length === 1 ? 's' : ''} it of ${requiredBy.length === 1 ? 'its' : 'their'} members: turn it on again in Settings (${app}) to use ${requiredBy.length === 1 ? 'its' : 'their'} workspaces.\n\n` : 'Turn it on again in Settings when you have your authenticator app.\n\n'}` +
        `If you did not ask for this, set a new password now (${app}/forgot-password) and turn two-factor sign-in on again.`,
    },
    { note: 'two-factor reset notice not sent', userId: user.id },
  );
  return { userId: user.id, email: user.email, signedOut: signedOut.meta.changes, requiredBy };
}
