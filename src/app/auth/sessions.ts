import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { clock } from '../../core/clock';
import { sha256Hex } from '../../core/digest';
import { randomHex } from '../../core/ids';
import type { DashboardEnv, Session, SessionUser } from '../context';

/** A session lasts this long from sign-in, whatever happens in between; then the person signs in again. */
export const SESSION_LIFETIME_MS = 30 * 24 * 60 * 60 * 1000;

/** How often a session's last use is written: enough to tell a browser in use from one forgotten. */
export const LAST_SEEN_EVERY_MS = 60 * 60 * 1000;

/** The characters of a browser's User-Agent kept with its session, to name it in the person's list. */
const USER_AGENT_KEPT = 256;


/**
 * Off localhost the cookie is Secure and takes the `__Host-` prefix, which browsers accept only from a
 * secure origin, for the whole host (Path=/) and never for a parent domain. On http://127.0.0.1 neither
 * is possible, so the plain name is used.
 */
function cookieName(c: Context<DashboardEnv>): string {
  return isSecure(c) ? '__Host-sluice_session' : 'sluice_session';
}

/** Whether the dashboard is served over https (cookies are then Secure and `__Host-` named). */
export function isSecure(c: Context<DashboardEnv>): boolean {
  return new URL(c.env.APP_URL).protocol === 'https:';
}

/**
 * Starts a session for a user: a fresh random id in the cookie, only its hash in D1. Made only while the password's
 * hash is still `passwordHash`, the one the caller checked or set: a new password (changed or reset) ends every
 * session in the same batch as it is set, so one made after it under the old one would outlive it. Answers false,
 * setting nothing, when the password changed meanwhile.
 */
export async function startSession(c: Context<DashboardEnv>, userId: string, passwordHash: string): Promise<boolean> {
  // Rotation: whatever session this browser had ends here, so a planted cookie cannot be carried into an account.
  await forgetSession(c);
  const id = randomHex(32);
  const now = clock.now();
  const expiresAt = new Date(now + SESSION_LIFETIME_MS);
  const made = await c.env.DB.prepare(
    `INSERT INTO sessions (id_hash, user_id, created_at, expires_at, user_agent, last_seen_at)
     SELECT ?1, id, ?3, ?4, ?6, ?3 FROM users WHERE id = ?2 AND password_hash = ?5 AND deleted_at IS NULL`,
  )
    .bind(await sha256Hex(id), userId, new Date(now).toISOString(), expiresAt.toISOString(), passwordHash, c.req.header('user-agent')?.slice(0, USER_AGENT_KEPT) ?? null)
    .run();
  if (made.meta.changes !== 1) return false;
  setCookie(c, cookieName(c), id, {
    httpOnly: true,
    secure: isSecure(c),
    sameSite: 'Lax',
    path: '/',
    expires: expiresAt,
  });
  return true;
}

/** The signed-in person, or null. An expired session is deleted when it is next presented. */
export async function readSession(c: Context<DashboardEnv>): Promise<Session | null> {
  const id = getCookie(c, cookieName(c));
  if (!id || !/^[0-9a-f]{64}$/.test(id)) return null;
  const idHash = await sha256Hex(id);
  const row = await c.env.DB.prepare(
    `SELECT s.expires_at AS expiresAt, s.last_seen_at AS lastSeenAt, u.id, u.email, u.name, u.created_at AS createdAt, u.email_verified_at AS emailVerifiedAt,
            u.password_changed_at AS passwordChangedAt
       FROM sessions s JOIN users u ON u.id = s.user_id
      WHERE s.id_hash = ?`,
  )
    .bind(idHash)
    .first<SessionUser & { expiresAt: string; lastSeenAt: string | null }>();
  if (!row) return null;
  const now = clock.now();
  if (Date.parse(row.expiresAt) <= now) {
    await c.env.DB.prepare('DELETE FROM sessions WHERE id_hash = ?').bind(idHash).run();
    return null;
  }
  const { expiresAt, lastSeenAt, ...user } = row;
  // When it was last used, for the person's list of browsers: a write an hour at most, after the answer.
  if (!lastSeenAt || Date.parse(lastSeenAt) <= now - LAST_SEEN_EVERY_MS) {
    c.executionCtx.waitUntil(c.env.DB.prepare('UPDATE sessions SET last_seen_at = ? WHERE id_hash = ?').bind(new Date(now).toISOString(), idHash).run());
  }
  return { idHash, expiresAt, user };
}

/** Ends this browser's session, if any, in D1 and in the browser. */
export async function endSession(c: Context<DashboardEnv>): Promise<void> {
  await forgetSession(c);
  deleteCookie(c, cookieName(c), { path: '/', secure: isSecure(c) });
}

/** Deletes the session the browser presents from D1, so its cookie is worth nothing from now on. */
async function forgetSession(c: Context<DashboardEnv>): Promise<void> {
  const id = getCookie(c, cookieName(c));
  if (id) await c.env.DB.prepare('DELETE FROM sessions WHERE id_hash = ?').bind(await sha256Hex(id)).run();
}
