import { insertOrganization, insertWorkspace, newOrganization, newWorkspace } from '../services/accounts';
import { type Organization, type Workspace } from '../core/records';
import { ApiError } from '../core/errors';
import { newId } from '../core/ids';
import type { SessionUser } from './context';
import { hashPassword } from './auth/passwords';

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
export async function signUp(db: D1Database, input: { email: string; password: string; name: string }, secret: string): Promise<SignUp> {
  const existing = await db.prepare('SELECT id FROM users WHERE email = ?').bind(input.email).first();
  if (existing) throw ApiError.conflict('An account with this email address already exists. Sign in instead.');
  const createdAt = new Date().toISOString();
  const user: SessionUser = { id: newId('usr'), email: input.email, name: input.name, createdAt, emailVerifiedAt: null };
  const organization = newOrganization({ name: `${input.name}'s organization` });
  const workspace = newWorkspace({ organizationId: organization.id, name: 'Default' });
  try {
    await db.batch([
      db.prepare('INSERT INTO users (id, email, name, password_hash, created_at) VALUES (?, ?, ?, ?, ?)').bind(user.id, user.email, user.name, await hashPassword(input.password, secret), createdAt),
      insertOrganization(db, organization),
      db.prepare("INSERT INTO memberships (organization_id, user_id, role, created_at) VALUES (?, ?, 'owner', ?)").bind(organization.id, user.id, createdAt),
      insertWorkspace(db, workspace),
    ]);
  } catch (error) {
    // Two sign-ups for one address at once: the unique index lets one through.
    if (/UNIQUE constraint failed: users\.email/.test(String(error))) throw ApiError.conflict('An account with this email address already exists. Sign in instead.');
    throw error;
  }
  return { user, organization, workspace };
}

export function findUserByEmail(db: D1Database, email: string) {
  return db
    .prepare('SELECT id, email, name, created_at AS createdAt, email_verified_at AS emailVerifiedAt, password_hash AS passwordHash FROM users WHERE email = ?')
    .bind(email)
    .first<SessionUser & { passwordHash: string }>();
}

export function updatePasswordHash(db: D1Database, userId: string, passwordHash: string) {
  return db.prepare('UPDATE users SET password_hash = ? WHERE id = ?').bind(passwordHash, userId).run();
}
