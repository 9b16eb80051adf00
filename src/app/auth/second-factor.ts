import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { clock } from '../../core/clock';
import { sha256Hex } from '../../core/digest';
import { ApiError } from '../../core/errors';
import { randomHex } from '../../core/ids';
import { countAttempt, overLimitBy } from '../../core/throttle';
import type { DashboardEnv } from '../context';
import { APP_CODE, isTwoFactorEnabled, type SecondFactor, takeSecondFactor, tellTwoFactorChange, TWO_FACTOR_CODES_PER_DAY, TWO_FACTOR_CODES_PER_USER } from '../two-factor';
import { findUserById, type StoredUser } from '../users';
import { isSecure } from './sessions';

/**
 * A sign-in waiting for its second factor (app/two-factor.ts): the password was right, and the browser holds a
 * random id in a cookie of its own (D1 keeps its SHA-256) until it sends a code. No session exists meanwhile, so
 * nothing the password alone opens. The wait is for the password as it was (a new one, set by a reset or a change,
 * ends it), lasts ten minutes and takes five wrong codes; then the person signs in again.
 */
export const SECOND_FACTOR_LIFETIME_MS = 10 * 60_000;
export const SECOND_FACTOR_FAILURES = 5;

function cookieName(c: Context<DashboardEnv>): string {
  return isSecure(c) ? '__Host-sluice_second_factor' : 'sluice_second_factor';
}

export interface PendingSignIn {
  idHash: string;
  user: StoredUser;
  /** The browser's known-device id at the password step, kept for its cookie once signed in (devices.ts). */
  device: string | null;
  expiresAt: string;
}

/** Starts the wait for `user`'s second factor in this browser, in place of any it had; answers what the sign-in answers then. */
export async function secondFactorAwaited(
  c: Context<DashboardEnv>,
  user: { id: string; passwordHash: string },
  device: string | null,
): Promise<{ twoFactorRequired: true; expiresAt: string }> {
  await forgetPendingSignIn(c);
  const id = randomHex(32);
  const now = clock.now();
  const expiresAt = new Date(now + SECOND_FACTOR_LIFETIME_MS).toISOString();
  await c.env.DB.batch([
    // A person's waits that ended are cleared as a new one starts: the table holds no more than the live ones.
    c.env.DB.prepare('DELETE FROM sign_in_challenges WHERE user_id = ? AND expires_at <= ?').bind(user.id, new Date(now).toISOString()),
    c.env.DB.prepare('INSERT INTO sign_in_challenges (id_hash, user_id, password_digest, device, expires_at) VALUES (?, ?, ?, ?, ?)').bind(
      await sha256Hex(id),
      user.id,
      await sha256Hex(user.passwordHash),
      device,
      expiresAt,
    ),
  ]);
  setCookie(c, cookieName(c), id, { httpOnly: true, secure: isSecure(c), sameSite: 'Strict', path: '/', maxAge: SECOND_FACTOR_LIFETIME_MS / 1000 });
  return { twoFactorRequired: true, expiresAt };
}

/** This browser's sign-in waiting for a code, while it may still end in one: not past its ten minutes, the password unchanged. */
export async function pendingSignIn(c: Context<DashboardEnv>): Promise<PendingSignIn | null> {
  const id = getCookie(c, cookieName(c));
  if (!id || !/^[0-9a-f]{64}$/.test(id)) return null;
  const idHash = await sha256Hex(id);
  const row = await c.env.DB.prepare('SELECT user_id AS userId, password_digest AS passwordDigest, device, expires_at AS expiresAt FROM sign_in_challenges WHERE id_hash = ?')
    .bind(idHash)
    .first<{ userId: string; passwordDigest: string; device: string | null; expiresAt: string }>();
  if (!row || Date.parse(row.expiresAt) <= clock.now()) return null;
  const user = await findUserById(c.env.DB, row.userId);
  if (!user || (await sha256Hex(user.passwordHash)) !== row.passwordDigest) return null;
  return { idHash, user, device: row.device, expiresAt: row.expiresAt };
}

/** Counts a wrong code against the wait. Answers whether it goes on: false at the fifth, which the caller then ends (`forgetPendingSignIn`). */
export async function countWrongCode(db: D1Database, pending: PendingSignIn): Promise<boolean> {
  const row = await db
    .prepare('UPDATE sign_in_challenges SET failures = failures + 1 WHERE id_hash = ? RETURNING failures')
    .bind(pending.idHash)
    .first<{ failures: number }>();
  return row !== null && row.failures < SECOND_FACTOR_FAILURES;
}

/** Ends this browser's wait, in D1 and in the browser: signed in, signed out, or starting over. */
export async function forgetPendingSignIn(c: Context<DashboardEnv>): Promise<void> {
  const id = getCookie(c, cookieName(c));
  if (!id) return;
  await c.env.DB.prepare('DELETE FROM sign_in_challenges WHERE id_hash = ?').bind(await sha256Hex(id)).run();
  deleteCookie(c, cookieName(c), { path: '/', secure: isSecure(c) });
}

/** A person is told of wrong codes after a right password at most this often. */
const WRONG_CODE_NOTICE = { limit: 1, windowMs: 60 * 60_000 };

/**
 * Takes the second factor of a sign-in (or of a reset link), counted first. The count is per account, and a browser
 * that signed in to it before (its known-device id, devices.ts) has its own: someone who has the password but not the
 * owner's browser cannot spend the owner's count, and has ten codes a quarter hour and fifty a day, never reset by the
 * owner's sign-ins. A wrong code after a right password is told to the account's address (once an hour at most): the
 * password is known to someone.
 */
export async function checkSecondFactor(c: Context<DashboardEnv>, user: { id: string; email: string }, factor: SecondFactor, device: string | null): Promise<'code' | 'recoveryCode'> {
  const bucket = device ? `two-factor:${user.id}:${device}` : `two-factor:${user.id}`;
  await countAttempt(c.env.DB, bucket, TWO_FACTOR_CODES_PER_USER);
  await countAttempt(c.env.DB, `${bucket}:day`, TWO_FACTOR_CODES_PER_DAY);
  try {
    return await takeSecondFactor(c.env, user, factor);
  } catch (error) {
    if (error instanceof ApiError && error.code === 'VALIDATION_ERROR' && !(await overLimitBy(c.env.DB, `two-factor-notice:${user.id}`, WRONG_CODE_NOTICE))) {
      c.executionCtx.waitUntil(tellTwoFactorChange(c.env, user, 'wrongCode'));
    }
    throw error;
  }
}

/**
 * What a reset link's account asks beyond the link: its second factor, when it has one (`code`: the app's six digits
 * or a recovery code). Nothing otherwise.
 */
export async function secondFactorOfReset(c: Context<DashboardEnv>, userId: string, code: string | undefined): Promise<void> {
  if (!(await isTwoFactorEnabled(c.env.DB, userId))) return;
  if (!code) throw ApiError.validation([{ field: 'code', location: 'body', message: 'This account has two-factor sign-in: enter the code your app shows, or a recovery code.' }]);
  const user = await findUserById(c.env.DB, userId);
  if (!user) return;
  await checkSecondFactor(c, user, APP_CODE.test(code) ? { code } : { recoveryCode: code }, null);
}
