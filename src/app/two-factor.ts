import { Secret, TOTP } from 'otpauth';
import { renderSVG } from 'uqr';
import { clock, nowIso } from '../core/clock';
import { type Env, publicUrls } from '../core/config';
import { ApiError } from '../core/errors';
import { decryptKey, encryptionSecrets, encryptKey } from '../core/keys';
import { randomHex } from '../core/ids';
import { toHex } from '../core/digest';
import { derivedHmacKey } from './auth/passwords';
import type { ThrottleRule } from '../core/throttle';
import { sendEmailOrLog } from '../services/email';
import { twoFactorErasure } from '../services/second-factor';
import { requireVerifiedEmail } from './email-verification';
import type { SessionUser } from './context';

/**
 * Two-factor sign-in: after the password, a code from an authenticator app (TOTP, RFC 6238: SHA-1, six digits, 30
 * seconds, what every app reads from a QR code) or one of ten recovery codes. `otpauth` computes and checks the
 * codes, `uqr` draws the QR code; what is ours is where they are kept and when a code is taken.
 *
 * - The secret is sealed with KEY_ENCRYPTION_KEY (AES-GCM, bound to the user id), never kept in the clear.
 * - A code is taken for one 30-second step, once: the step is written with a guard that it is newer than the last
 *   one taken, so the same code (or an older one) replayed is refused, even by two requests at once.
 * - Recovery codes are 50 random bits each; only an HMAC of each is kept, under a key derived from KEY_ENCRYPTION_KEY
 *   and over the account's id (a copy of D1 alone does not let anyone sweep the 2^50 codes, nor one sweep serve every
 *   account), and each is spent by a guarded update.
 */

const ISSUER = 'Sluice';
const PERIOD_S = 30;
/** A code of the step before or after now is taken too: a phone's clock a little off, a code typed as it turned. */
const WINDOW = 1;
export const RECOVERY_CODES = 10;
/** An app's code as a person types it: six digits, a space allowed in the middle (apps show it as `492 039`). */
export const APP_CODE = /^\d{3} ?\d{3}$/;

/** Codes a sign-in may try in a quarter hour, and in a day, per account (a browser that signed in before counts apart: auth/second-factor.ts). */
export const TWO_FACTOR_CODES_PER_USER: ThrottleRule = { limit: 10, windowMs: 15 * 60_000, what: 'two-factor codes for this account' };
export const TWO_FACTOR_CODES_PER_DAY: ThrottleRule = { limit: 50, windowMs: 24 * 60 * 60_000, what: 'two-factor codes for this account today' };
/** Setting up, turning off and new recovery codes each ask for the password: its tries are counted. */
export const TWO_FACTOR_CHANGES_PER_USER: ThrottleRule = { limit: 5, windowMs: 15 * 60_000, what: 'two-factor changes for this account' };

const sealedFor = (userId: string) => `two-factor:${userId}`;

function totpOf(secret: Secret, email: string): TOTP {
  return new TOTP({ issuer: ISSUER, label: email, algorithm: 'SHA1', digits: 6, period: PERIOD_S, secret });
}

/** What Settings shows of a person's two-factor sign-in. */
export interface TwoFactorState {
  enabled: boolean;
  enabledAt: string | null;
  recoveryCodesLeft: number;
}

export async function twoFactorState(db: D1Database, userId: string): Promise<TwoFactorState> {
  const row = await db
    .prepare(
      `SELECT enabled_at AS enabledAt, (SELECT COUNT(*) FROM two_factor_recovery_codes WHERE user_id = ?1 AND used_at IS NULL) AS left
         FROM two_factor WHERE user_id = ?1`,
    )
    .bind(userId)
    .first<{ enabledAt: string | null; left: number }>();
  return { enabled: Boolean(row?.enabledAt), enabledAt: row?.enabledAt ?? null, recoveryCodesLeft: row?.enabledAt ? row.left : 0 };
}

export async function isTwoFactorEnabled(db: D1Database, userId: string): Promise<boolean> {
  return (await twoFactorSetupId(db, userId)) !== null;
}

/**
 * The setup in force (the one that last wrote the recovery codes), or null when two-factor sign-in is off: what a
 * browser remembered for the second factor was remembered under (auth/devices.ts), so new codes or a new setup forget it.
 */
export async function twoFactorSetupId(db: D1Database, userId: string): Promise<string | null> {
  return (await db.prepare('SELECT setup_id AS id FROM two_factor WHERE user_id = ? AND enabled_at IS NOT NULL').bind(userId).first<{ id: string }>())?.id ?? null;
}

/** What a person's app is set up from: the QR code, the link it encodes, and the secret to type in by hand. */
export interface TwoFactorSetup {
  secret: string;
  uri: string;
  qrSvg: string;
}

/**
 * A new secret, waiting for a code from the app to confirm it (`confirmSetup`). A setup begun again replaces the one
 * waiting; one already in force is a 409 (turn it off first, so a session left open cannot swap the app).
 */
export async function beginSetup(env: Env, user: SessionUser): Promise<TwoFactorSetup> {
  // Whoever signs up first with an address holds it until it is confirmed, and a reset by its owner takes it back: a
  // second factor set up before would keep the owner out for good.
  requireVerifiedEmail(user, 'set up two-factor sign-in');
  const secret = new Secret({ size: 20 });
  const sealed = await encryptKey(secret.base32, sealedFor(user.id), env.KEY_ENCRYPTION_KEY);
  const written = await env.DB.prepare(
    `INSERT INTO two_factor (user_id, secret_sealed, setup_id, created_at) VALUES (?1, ?2, ?3, ?4)
     ON CONFLICT (user_id) DO UPDATE SET secret_sealed = excluded.secret_sealed, setup_id = excluded.setup_id, created_at = excluded.created_at, last_step = 0
      WHERE two_factor.enabled_at IS NULL`,
  )
    .bind(user.id, sealed, randomHex(16), nowIso())
    .run();
  if (written.meta.changes !== 1) throw ApiError.conflict('Two-factor sign-in is already on. Turn it off first to set up another app.');
  const uri = totpOf(secret, user.email).toString();
  return { secret: secret.base32, uri, qrSvg: renderSVG(uri, { border: 2 }) };
}

/**
 * The step of now a code is for, or null when it is no code of the secret near now. The step, not just a yes: it is
 * what `takeStep` writes so the code is not taken twice.
 */
function stepOf(secret: string, email: string, code: string): number | null {
  const token = code.replace(/\s/g, '');
  if (!/^\d{6}$/.test(token)) return null;
  const now = clock.now();
  const delta = totpOf(Secret.fromBase32(secret), email).validate({ token, timestamp: now, window: WINDOW });
  return delta === null ? null : Math.floor(now / 1000 / PERIOD_S) + delta;
}

async function secretOf(env: Env, userId: string, enabled: boolean): Promise<{ secret: string; setupId: string } | null> {
  const row = await env.DB.prepare(`SELECT secret_sealed AS sealed, setup_id AS setupId FROM two_factor WHERE user_id = ? AND enabled_at IS ${enabled ? 'NOT NULL' : 'NULL'}`)
    .bind(userId)
    .first<{ sealed: string; setupId: string }>();
  return row ? { secret: await decryptKey(row.sealed, sealedFor(userId), env.KEY_ENCRYPTION_KEY), setupId: row.setupId } : null;
}

const wrongCode = (field: 'code' | 'recoveryCode', message: string) => ApiError.validation([{ field, location: 'body', message }]);

/**
 * Turns two-factor sign-in on with the first code the app shows, and answers the recovery codes, shown this once.
 * The same batch takes the code's step and writes the codes, guarded on the setup still waiting.
 */
export async function confirmSetup(env: Env, user: { id: string; email: string }, code: string): Promise<string[]> {
  const waiting = await secretOf(env, user.id, false);
  if (!waiting) throw ApiError.conflict((await isTwoFactorEnabled(env.DB, user.id)) ? 'Two-factor sign-in is already on.' : 'Set up two-factor sign-in first: no app is waiting to be confirmed.');
  const step = stepOf(waiting.secret, user.email, code);
  if (step === null) throw wrongCode('code', 'Not the code your app shows now: check the app was set up from this page, and its clock.');
  // The setup read here is the one turned on (not one begun again meanwhile), and this confirmation alone writes the
  // codes: it marks the row with an id of its own, which the codes' insert asks for (two confirmations at once, or
  // a double click, leave the codes of the one that turned it on).
  const confirmation = randomHex(16);
  const codes = newRecoveryCodes();
  const [enabled] = await env.DB.batch([
    env.DB.prepare('UPDATE two_factor SET enabled_at = ?2, last_step = ?3, setup_id = ?5 WHERE user_id = ?1 AND enabled_at IS NULL AND setup_id = ?4').bind(
      user.id,
      nowIso(),
      step,
      waiting.setupId,
      confirmation,
    ),
    await recoveryCodesInsert(env, user.id, codes, confirmation),
  ]);
  if (enabled!.meta.changes !== 1) throw ApiError.conflict('Two-factor sign-in was set up again, or turned on, meanwhile: reload the page.');
  return codes;
}

/** New recovery codes in place of the old ones, which stop working. */
export async function replaceRecoveryCodes(env: Env, userId: string): Promise<string[]> {
  const codes = newRecoveryCodes();
  const replacement = randomHex(16);
  const [marked] = await env.DB.batch([
    env.DB.prepare('UPDATE two_factor SET setup_id = ?2 WHERE user_id = ?1 AND enabled_at IS NOT NULL').bind(userId, replacement),
    env.DB.prepare('DELETE FROM two_factor_recovery_codes WHERE user_id = ?1 AND EXISTS (SELECT 1 FROM two_factor WHERE user_id = ?1 AND setup_id = ?2)').bind(userId, replacement),
    await recoveryCodesInsert(env, userId, codes, replacement),
  ]);
  if (marked!.meta.changes !== 1) throw ApiError.conflict('Two-factor sign-in is off: there are no recovery codes to replace.');
  return codes;
}

/** Inserts `codes` (their HMACs) for the account while its row carries `mark` (the confirmation or replacement making them). */
async function recoveryCodesInsert(env: Env, userId: string, codes: string[], mark: string): Promise<D1PreparedStatement> {
  const digests = await Promise.all(codes.map((code) => recoveryCodeDigest(env, userId, code)));
  return env.DB.prepare(
    `INSERT INTO two_factor_recovery_codes (user_id, code_hash) SELECT ?1, value FROM json_each(?2)
      WHERE EXISTS (SELECT 1 FROM two_factor WHERE user_id = ?1 AND enabled_at IS NOT NULL AND setup_id = ?3)`,
  ).bind(userId, JSON.stringify(digests), mark);
}

const RECOVERY_CODE_INFO = 'sluice two-factor recovery code v1';

/** The HMAC a recovery code is kept as, under KEY_ENCRYPTION_KEY's first key (`secret`: another key of a rotation). */
async function recoveryCodeDigest(env: Env, userId: string, code: string, secret = encryptionSecrets(env.KEY_ENCRYPTION_KEY)[0] ?? ''): Promise<string> {
  const key = await derivedHmacKey(secret, RECOVERY_CODE_INFO);
  return toHex(new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`${userId}\n${normalized(code)}`))));
}

/** Ten codes like `k3xq7-2mzpa`: 50 random bits each, in letters and digits no one confuses (RFC 4648 base32, lower case). */
function newRecoveryCodes(): string[] {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  return Array.from({ length: RECOVERY_CODES }, () => {
    const chars = Array.from(crypto.getRandomValues(new Uint8Array(10)), (byte) => alphabet[byte & 31]).join('');
    return `${chars.slice(0, 5)}-${chars.slice(5)}`;
  });
}

const normalized = (code: string) => code.toLowerCase().replace(/[^a-z2-7]/g, '');

/** What a person proves the second factor with: the app's code, or a recovery code. */
export type SecondFactor = { code: string } | { recoveryCode: string };

/**
 * Takes a second factor for the account, or throws the 400 naming the field that was wrong. A code's step is taken
 * once; a recovery code is spent. Answers which was used (a recovery code's use is told to the person by email).
 */
export async function takeSecondFactor(env: Env, user: { id: string; email: string }, factor: SecondFactor): Promise<'code' | 'recoveryCode'> {
  if ('recoveryCode' in factor) {
    // Under every key of a rotation: codes made before it are kept under the old one.
    const digests = await Promise.all(encryptionSecrets(env.KEY_ENCRYPTION_KEY).map((secret) => recoveryCodeDigest(env, user.id, factor.recoveryCode, secret)));
    const spent = await env.DB.prepare(
      'UPDATE two_factor_recovery_codes SET used_at = ?3 WHERE user_id = ?1 AND code_hash IN (SELECT value FROM json_each(?2)) AND used_at IS NULL',
    )
      .bind(user.id, JSON.stringify(digests), nowIso())
      .run();
    if (spent.meta.changes !== 1) throw wrongCode('recoveryCode', 'Not one of your recovery codes, or one already used.');
    return 'recoveryCode';
  }
  const enabled = await secretOf(env, user.id, true);
  const step = enabled === null ? null : stepOf(enabled.secret, user.email, factor.code);
  if (step === null) throw wrongCode('code', 'Not the code your app shows now.');
  const taken = await env.DB.prepare('UPDATE two_factor SET last_step = ?2 WHERE user_id = ?1 AND enabled_at IS NOT NULL AND last_step < ?2').bind(user.id, step).run();
  if (taken.meta.changes !== 1) throw wrongCode('code', 'That code was used already: wait for the next one your app shows.');
  return 'code';
}

/** Two-factor sign-in off: the secret and the recovery codes gone, as is any sign-in waiting for a code. */
export async function disableTwoFactor(db: D1Database, userId: string): Promise<void> {
  await db.batch(twoFactorErasure(db, userId));
}

/** What the account's address is told of its second factor, so a change nobody there made is noticed. */
const NOTICES = {
  enabled: {
    subject: 'Two-factor sign-in is on for your Sluice account',
    text: (email: string, app: string) =>
      `Hello,\n\nTwo-factor sign-in was turned on for the Sluice account of ${email}: signing in now takes a code from the authenticator app too.\n\nKeep the recovery codes shown then somewhere safe: each signs in once without the app.\n\nIf you did not turn it on, set a new password now (${app}/forgot-password) and turn it off in Settings.`,
  },
  disabled: {
    subject: 'Two-factor sign-in is off for your Sluice account',
    text: (email: string, app: string) =>
      `Hello,\n\nTwo-factor sign-in was turned off for the Sluice account of ${email}: the password alone signs in again.\n\nIf you did not turn it off, set a new password now (${app}/forgot-password) and turn it on again in Settings.`,
  },
  codesReplaced: {
    subject: 'New recovery codes for your Sluice account',
    text: (email: string, app: string) =>
      `Hello,\n\nNew recovery codes were made for the Sluice account of ${email}; the earlier ones no longer work.\n\nIf you did not make them, set a new password now (${app}/forgot-password).`,
  },
  wrongCode: {
    subject: 'A sign-in to your Sluice account gave a wrong code',
    text: (email: string, app: string) =>
      `Hello,\n\nSomeone signed in to the Sluice account of ${email} with its password just now, then gave a wrong two-factor code. If it was you, nothing needs doing.\n\nIf it was not, your password is known to someone: set a new one now (${app}/forgot-password). The code kept them out.`,
  },
  recoveryCodeUsed: {
    subject: 'A recovery code signed in to your Sluice account',
    text: (email: string, app: string) =>
      `Hello,\n\nA recovery code was just used to sign in to the Sluice account of ${email}, in place of the authenticator app. It cannot be used again.\n\nIf that was not you, set a new password now (${app}/forgot-password), then make new recovery codes in Settings.`,
  },
} as const;

/** Tells the account's address what changed in its second factor (after the answer: `later`). */
export function tellTwoFactorChange(env: Env, user: { id: string; email: string }, what: keyof typeof NOTICES): Promise<unknown> {
  const notice = NOTICES[what];
  return sendEmailOrLog(env, { to: user.email, subject: notice.subject, text: notice.text(user.email, publicUrls(env).app) }, { note: `two-factor notice not sent (${what})`, userId: user.id });
}
