import { nowIso } from '../core/clock';
import { ApiError } from '../core/errors';
import { type Env, publicUrls } from '../core/config';
import { sendEmailOrLog } from '../services/email';

/**
 * The browsers signed in to a person's account, as Settings lists them: each session (only its hash is stored, so a
 * session is named by the hash's first 16 hex digits, which sign nobody in), the browser it began in, and when it
 * was last used. A person ends one, or every one but this browser's: a laptop left signed in somewhere.
 */

export interface SignedInBrowser {
  id: string;
  browser: string;
  signedInAt: string;
  lastSeenAt: string | null;
  current: boolean;
}

const SESSION_ID_DIGITS = 16;

export async function signedInBrowsers(db: D1Database, userId: string, currentIdHash: string): Promise<SignedInBrowser[]> {
  const { results } = await db
    .prepare(
      `SELECT id_hash AS idHash, user_agent AS userAgent, created_at AS signedInAt, last_seen_at AS lastSeenAt FROM sessions
        WHERE user_id = ? AND expires_at > ? ORDER BY COALESCE(last_seen_at, created_at) DESC, id_hash`,
    )
    .bind(userId, nowIso())
    .all<{ idHash: string; userAgent: string | null; signedInAt: string; lastSeenAt: string | null }>();
  return results.map((row) => ({
    id: row.idHash.slice(0, SESSION_ID_DIGITS),
    browser: browserOf(row.userAgent),
    signedInAt: row.signedInAt,
    lastSeenAt: row.lastSeenAt,
    current: row.idHash === currentIdHash,
  }));
}

/** Signs out one of the person's browsers; another person's session, or none, is 404. */
export async function signOutBrowser(db: D1Database, userId: string, id: string): Promise<void> {
  const ended = await db.prepare('DELETE FROM sessions WHERE user_id = ? AND substr(id_hash, 1, ?) = ?').bind(userId, SESSION_ID_DIGITS, id).run();
  if (ended.meta.changes === 0) throw ApiError.notFound(`No signed-in browser ${id}.`);
}

/**
 * Signs out every browser of the person but this one, and voids a change of address waiting for its link (another
 * browser may have asked it: someone signing the others out suspects one); answers how many were signed out.
 */
export async function signOutOtherBrowsers(db: D1Database, userId: string, currentIdHash: string): Promise<number> {
  const [signedOut] = await db.batch([
    db.prepare('DELETE FROM sessions WHERE user_id = ? AND id_hash <> ?').bind(userId, currentIdHash),
    db.prepare('DELETE FROM email_changes WHERE user_id = ?').bind(userId),
  ]);
  return signedOut!.meta.changes;
}

/** Browser families by their User-Agent token, most specific first (Edge and Opera say Chrome too, Chrome says Safari). */
const BROWSERS: [RegExp, string][] = [
  [/\bEdg(?:e|A|iOS)?\//, 'Edge'],
  [/\bOPR\//, 'Opera'],
  [/\bFirefox\/|\bFxiOS\//, 'Firefox'],
  [/\b(?:Headless)?Chrom(?:e|ium)\/|\bCriOS\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*\bSafari\//, 'Safari'],
];

const SYSTEMS: [RegExp, string][] = [
  [/\b(?:iPhone|iPad|iPod)\b/, 'iOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bLinux\b/, 'Linux'],
];

/** "Firefox on macOS", from a User-Agent; what cannot be told is said as such. The full string is not shown: it says little more. */
export function browserOf(userAgent: string | null): string {
  if (!userAgent) return 'An unknown browser';
  const browser = BROWSERS.find(([pattern]) => pattern.test(userAgent))?.[1];
  const system = SYSTEMS.find(([pattern]) => pattern.test(userAgent))?.[1];
  if (browser && system) return `${browser} on ${system}`;
  return browser ?? (system ? `A browser on ${system}` : 'An unknown browser');
}

/**
 * Tells the account's address of a sign-in from a browser that had not signed in to it before (no known-device
 * cookie for it, auth/devices.ts): which browser, and when. A sign-in the owner did not make is then noticed, with the
 * way out (a new password signs every browser out).
 */
export function tellNewBrowser(env: Env, user: { id: string; email: string }, userAgent: string | null | undefined): Promise<unknown> {
  const at = nowIso().slice(0, 16).replace('T', ' ');
  return sendEmailOrLog(
    env,
    {
      to: user.email,
      subject: 'A new browser signed in to your Sluice account',
      text: `Hello,\n\n${browserOf(userAgent?.slice(0, 256) ?? null)} signed in to the Sluice account of ${user.email} at ${at} UTC, for the first time.\n\nIf it was you, nothing needs doing. If it was not, set a new password now (${publicUrls(env).app}/forgot-password): that signs out every browser. Settings lists the browsers signed in.`,
    },
    { note: 'new browser notice not sent', userId: user.id },
  );
}
