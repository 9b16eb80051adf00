import type { Env } from '../core/config';
import { clock } from '../core/clock';
import { ApiError } from '../core/errors';
import { issueKey, revokeKey } from './accounts';

/** How long a sandbox key (scope workspace_dryrun) works after it is minted. */
export const SANDBOX_KEY_DAYS = 7;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface SandboxKey {
  id: string;
  workspaceId: string;
  name: string;
  hint: string;
  createdAt: string;
  createdBy: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
  expiresAt: string;
}

const COLUMNS = `id, workspace_id AS workspaceId, name, key_hint AS hint, created_at AS createdAt, created_by AS createdBy,
  last_used_at AS lastUsedAt, revoked_at AS revokedAt, expires_at AS expiresAt`;

/** Mints a sandbox key valid for SANDBOX_KEY_DAYS; the answer carries the secret, shown this once. */
export async function mintSandboxKey(env: Env, input: { workspaceId: string; name: string; createdBy: string }): Promise<SandboxKey & { key: string }> {
  const expiresAt = new Date(clock.now() + SANDBOX_KEY_DAYS * DAY_MS).toISOString();
  const created = await issueKey(env, { ...input, scope: 'workspace_dryrun', expiresAt });
  const { scope: _scope, monthlyLimitCents: _limit, ...record } = created;
  return { ...record, expiresAt };
}

/** A workspace's sandbox keys, newest first; never a secret. */
export async function listSandboxKeys(db: D1Database, workspaceId: string): Promise<SandboxKey[]> {
  const { results } = await db
    .prepare(`SELECT ${COLUMNS} FROM api_keys WHERE workspace_id = ? AND scope = 'workspace_dryrun' ORDER BY created_at DESC, id DESC`)
    .bind(workspaceId)
    .all<SandboxKey>();
  return results;
}

/** The workspace's sandbox key, or 404: another workspace's key or a live key reads as missing. */
export async function sandboxKeyOf(db: D1Database, workspaceId: string, keyId: string): Promise<SandboxKey> {
  const key = await db
    .prepare(`SELECT ${COLUMNS} FROM api_keys WHERE id = ? AND workspace_id = ? AND scope = 'workspace_dryrun'`)
    .bind(keyId, workspaceId)
    .first<SandboxKey>();
  if (!key) throw ApiError.notFound(`No sandbox key ${keyId} in workspace ${workspaceId}.`);
  return key;
}

/** Revokes a sandbox key: refused from the very next request (the workspace's gate knows it first). */
export async function revokeSandboxKey(env: Env, workspaceId: string, keyId: string): Promise<SandboxKey> {
  await sandboxKeyOf(env.DB, workspaceId, keyId);
  await revokeKey(env, keyId);
  return sandboxKeyOf(env.DB, workspaceId, keyId);
}
