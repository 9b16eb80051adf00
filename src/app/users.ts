import { insertOrganization, insertWorkspace, newOrganization, newWorkspace } from '../services/accounts';
import { type Organization, type Workspace } from '../core/records';
import { ApiError } from '../core/errors';
import { newId } from '../core/ids';
import type { SessionUser } from './context';
import { hashPassword, verifyPassword } from './auth/passwords';
import { countAttempt, type ThrottleRule } from '../core/throttle';

export interface SignUp {
  user: SessionUser;
  organization: Organization;
  workspace: Workspace;
}

/**
 * A new person with an organization of their own (no plan: the dashboard offers the plans) and a first
 * workspace, in one D1 batch, so a failure leaves no half-made account behind. `secret` is
 * KEY_ENCRYPTION_KEY, which peppers the password hash.
 */
export async function signUp(db: D1Database, input: { email: string; password: string; name: string }, secret: string): Promise<SignUp & { passwordHash: string }> {
  const existing = await db.prepare('SELECT id FROM users WHERE email = ?').bind(input.email).first();
  if (existing) throw ApiError.conflict('An account with this email address already exists. Sign in instead.');
  const createdAt = new Date().toISOString();
  const user: SessionUser = { id: newId('usr'), email: input.email, name: input.name, createdAt, emailVerifiedAt: null, passwordChangedAt: null };
  const organization = newOrganization({ name: `${input.name}'s organization` });
  const workspace = newWorkspace({ organizationId: organization.id, name: 'Default' });
  const passwordHash = await hashPassword(input.password, secret);
  try {
    await db.batch([
      db.prepare('INSERT INTO users (id, email, name, password_hash, created_at) VALUES (?, ?, ?, ?, ?)').bind(user.id, user.email, user.name, passwordHash, createdAt),
      insertOrganization(db, organization),
      db.prepare("INSERT INTO memberships (organization_id, user_id, role, created_at) VALUES (?, ?, 'owner', ?)").bind(organization.id, user.id, createdAt),
      insertWorkspace(db, workspace),
    ]);
  } catch (error) {
    // Two sign-ups for one address at once: the unique index lets one through.
    if (/UNIQUE constraint failed: users\.email/.test(String(error))) throw ApiError.conflict('An account with this email address already exists. Sign in instead.');
    throw error;
  }
  // The hash is for the session the route starts (auth/sessions.ts); it is never part of an answer.
  return { user, organization, workspace, passwordHash };
}

/** A person as sign-in finds them: who they are, and their password's hash. */
export type StoredUser = SessionUser & { passwordHash: string };

/** What a person is shown of their own record: nothing of their password. */
export function visibleUser({ passwordHash: _hash, ...user }: StoredUser): SessionUser {
  return user;
}

const STORED_USER =
  'SELECT id, email, name, created_at AS createdAt, email_verified_at AS emailVerifiedAt, password_hash AS passwordHash, password_changed_at AS passwordChangedAt FROM users';

export function findUserByEmail(db: D1Database, email: string): Promise<StoredUser | null> {
  return db.prepare(`${STORED_USER} WHERE email = ?`).bind(email).first<StoredUser>();
}

export function findUserById(db: D1Database, id: string): Promise<StoredUser | null> {
  return db.prepare(`${STORED_USER} WHERE id = ?`).bind(id).first<StoredUser>();
}

/**
 * Gives a person a new password (changed or reset), in one batch: the hash replaced, the moment kept (known-device
 * cookies are signed over it, auth/devices.ts), and every session and reset link of theirs ended, so a browser or
 * an inbox that had the account keeps nothing of it. `replacing`, when given, is the hash the caller checked the
 * current password against: were it replaced meanwhile (another change, a reset), nothing is written and the answer
 * is false. The caller starts this browser's session afresh, under the new hash (auth/sessions.ts).
 */
export async function setPassword(db: D1Database, userId: string, passwordHash: string, at: string, replacing?: string): Promise<boolean> {
  // Sessions and links go only when the new hash is the one in place: a change that lost its race ends nothing.
  const inPlace = '(SELECT password_hash FROM users WHERE id = ?1) = ?2';
  const [updated] = await db.batch([
    db
      .prepare(`UPDATE users SET password_hash = ?2, password_changed_at = ?3 WHERE id = ?1 AND deleted_at IS NULL${replacing === undefined ? '' : ' AND password_hash = ?4'}`)
      .bind(userId, passwordHash, at, ...(replacing === undefined ? [] : [replacing])),
    db.prepare(`DELETE FROM sessions WHERE user_id = ?1 AND ${inPlace}`).bind(userId, passwordHash),
    db.prepare(`DELETE FROM password_resets WHERE user_id = ?1 AND ${inPlace}`).bind(userId, passwordHash),
    // A change of address asked for before is void too: whoever had the password may have asked it, and its link would
    // otherwise move the account to their inbox after the owner had changed the password to shut them out.
    db.prepare(`DELETE FROM email_changes WHERE user_id = ?1 AND ${inPlace}`).bind(userId, passwordHash),
  ]);
  return updated!.meta.changes === 1;
}

/**
 * The same password, hashed afresh (a newer scheme or key): not a new password, so nothing else changes. Only over
 * the hash it was verified against (`replacing`): a sign-in that verified the old password while a reset set a new
 * one must not write the old one back. Answers whether it was written.
 */
export async function updatePasswordHash(db: D1Database, userId: string, passwordHash: string, replacing: string): Promise<boolean> {
  return (await db.prepare('UPDATE users SET password_hash = ? WHERE id = ? AND password_hash = ?').bind(passwordHash, userId, replacing).run()).meta.changes === 1;
}

/**
 * The signed-in person's record, once they have given its password again (a session left open is not enough to
 * change the address, the password or to delete the account). Each try counts in `bucket` under `rule`, right or
 * wrong; a wrong one is a 400 naming `currentPassword`.
 */
export async function withCurrentPassword(db: D1Database, userId: string, given: string, secret: string, bucket: string, rule: ThrottleRule): Promise<StoredUser> {
  await countAttempt(db, bucket, rule);
  const stored = await findUserById(db, userId);
  if (!stored || !(await verifyPassword(given, stored.passwordHash, secret)).ok) {
    throw new ApiError('VALIDATION_ERROR', 'The current password is not right.', { details: [{ field: 'currentPassword', location: 'body', message: 'Not your current password.' }] });
  }
  return stored;
}
