import { clock, nowIso } from '../core/clock';
import type { Env } from '../core/config';
import { ApiError } from '../core/errors';
import { gateOf } from './gate';
import { newId } from '../core/ids';
import { decryptKey, encryptKey, generateKey, hashKey, keyHint, type KeyScope } from '../core/keys';
import { UNITS_PER_CENT, unitsFromCents } from '../core/money';
import type { Plan } from '../core/plans';
import { type ApiKeyRecord, type KeyPrincipal, lacksRequiredSecondFactorSql, type Organization, planInForceSql, type Workspace } from '../core/records';
import { announceKey } from './webhooks/announce';
import { configureWallet } from './wallet';
import { wakeWaitingJobs } from './jobs/wake';
import type { KeyLimit } from '../core/protocols/key-limits';

export async function createOrganization(db: D1Database, input: { name: string; plan?: Plan | null }): Promise<Organization> {
  const organization = newOrganization(input);
  await insertOrganization(db, organization).run();
  return organization;
}

/** A new organization's record, to insert alone or in a batch with what comes with it (a sign-up). */
export function newOrganization(input: { name: string; plan?: Plan | null }): Organization {
  return { id: newId('org'), name: input.name, plan: input.plan ?? null, rpmOverride: null, createdAt: new Date().toISOString() };
}

export function insertOrganization(db: D1Database, organization: Organization): D1PreparedStatement {
  return db
    .prepare('INSERT INTO organizations (id, name, plan, created_at) VALUES (?, ?, ?, ?)')
    .bind(organization.id, organization.name, organization.plan, organization.createdAt);
}

/**
 * The plan column as it applies now: none once the free trial that gave it has ended (the gates apply
 * the same end to metered calls). Binds one parameter, the current time (ISO 8601): `?` unless a
 * statement numbering its parameters names another (`?6`).
 */

export async function getOrganization(db: D1Database, id: string): Promise<Organization> {
  const row = await db
    .prepare(`SELECT id, name, ${planInForceSql('organizations')} AS plan, rpm_override AS rpmOverride, created_at AS createdAt FROM organizations WHERE id = ?`)
    .bind(nowIso(), id)
    .first<Organization>();
  if (!row) throw ApiError.notFound(`No organization ${id}.`);
  return row;
}

/**
 * Sets the plan (or none) and an optional custom requests-per-minute ceiling for all the organization's
 * workspaces, and starts a new period with the plan's allowance. Answered only once the wallet and every
 * workspace gate that has metered a call know it, so the very next call follows the new plan.
 *
 * With a `dedupeId` (a payment's event id) the change is applied once however often it is given: the
 * wallet, which recognises the id, goes first, so a repeat never grants the allowance again; D1 follows,
 * also on a repeat (repairing a first attempt that died in between), unless a later change has replaced
 * this one in the wallet since, in which case D1 already holds that later change.
 */
export async function setPlan(env: Env, id: string, input: { plan: Plan | null; rpm?: number | null }, dedupeId: string | null = null, options: { keepUsage?: boolean } = {}): Promise<Organization> {
  await getOrganization(env.DB, id);
  // A plan set here replaces a running free trial: it no longer ends by itself.
  const write = () => env.DB.prepare('UPDATE organizations SET plan = ?, rpm_override = ?, trial_ends_at = NULL WHERE id = ?').bind(input.plan, input.rpm ?? null, id).run();
  if (dedupeId !== null) {
    const configured = await configureWallet(env, { id, plan: input.plan, rpmOverride: input.rpm ?? null }, null, dedupeId, options);
    if (configured.current) await write();
    return getOrganization(env.DB, id);
  }
  await write();
  const organization = await getOrganization(env.DB, id);
  await configureWallet(env, organization);
  return organization;
}

export async function createWorkspace(db: D1Database, input: { organizationId: string; name: string }): Promise<Workspace> {
  await getOrganization(db, input.organizationId);
  const workspace = newWorkspace(input);
  await insertWorkspace(db, workspace).run();
  return workspace;
}

export function newWorkspace(input: { organizationId: string; name: string }): Workspace {
  return { id: newId('ws'), organizationId: input.organizationId, name: input.name, createdAt: new Date().toISOString() };
}

export function insertWorkspace(db: D1Database, workspace: Workspace): D1PreparedStatement {
  return db
    .prepare('INSERT INTO workspaces (id, organization_id, name, created_at) VALUES (?, ?, ?, ?)')
    .bind(workspace.id, workspace.organizationId, workspace.name, workspace.createdAt);
}

const KEY_COLUMNS = `id, workspace_id AS workspaceId, scope, name, key_hint AS hint, created_at AS createdAt,
  created_by AS createdBy, last_used_at AS lastUsedAt, revoked_at AS revokedAt,
  monthly_limit_units / ${UNITS_PER_CENT}.0 AS monthlyLimitCents, expires_at AS expiresAt`;

/**
 * The live keys of one kind a workspace holds at most (API keys, MCP tokens, sandbox keys): keys are made by hand or
 * by an installation's own script, and each is listed, and counted on the keys page, for as long as it is kept.
 */
export const MAX_ACTIVE_KEYS_PER_WORKSPACE = 1_000;
const CAPPED_SCOPES: readonly KeyScope[] = ['workspace', 'workspace_mcp', 'workspace_dryrun'];

/** Creates a key and answers its plaintext: the only time it leaves the server unasked. */
export async function createKey(
  db: D1Database,
  encryptionSecret: string,
  input: { workspaceId: string; scope: KeyScope; name: string; createdBy?: string | null; monthlyLimitCents?: number | null; expiresAt?: string },
): Promise<ApiKeyRecord & { key: string }> {
  const workspace = await db.prepare('SELECT id FROM workspaces WHERE id = ? AND deleted_at IS NULL').bind(input.workspaceId).first();
  if (!workspace) throw ApiError.notFound(`No workspace ${input.workspaceId}.`);
  const id = newId('key');
  const key = generateKey();
  const record: ApiKeyRecord = {
    id,
    workspaceId: input.workspaceId,
    scope: input.scope,
    name: input.name,
    hint: keyHint(key),
    createdAt: new Date().toISOString(),
    createdBy: input.createdBy ?? null,
    lastUsedAt: null,
    revokedAt: null,
    monthlyLimitCents: input.monthlyLimitCents ?? null,
    expiresAt: input.expiresAt ?? null,
  };
  // No gate is told: a new key is in no isolate's memory, so its first call reads the limit from here.
  const limitUnits = record.monthlyLimitCents === null ? null : unitsFromCents(record.monthlyLimitCents);
  // A capped kind counts its live keys (neither revoked nor expired) in the insert itself, so two made at once cannot
  // both take the last place.
  const capped = CAPPED_SCOPES.includes(record.scope);
  const written = await db
    .prepare(
      `INSERT INTO api_keys (id, workspace_id, key_hash, key_ciphertext, key_hint, scope, name, created_at, created_by, monthly_limit_units, limit_version, expires_at)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12
        WHERE ?13 = 0 OR (SELECT COUNT(*) FROM api_keys WHERE workspace_id = ?2 AND scope = ?6 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?8)) < ?14`,
    )
    .bind(
      id, record.workspaceId, await hashKey(key), await encryptKey(key, id, encryptionSecret), record.hint, record.scope, record.name, record.createdAt, record.createdBy,
      limitUnits, limitUnits === null ? 0 : 1, input.expiresAt ?? null, capped ? 1 : 0, MAX_ACTIVE_KEYS_PER_WORKSPACE,
    )
    .run();
  if (written.meta.changes !== 1) {
    const kind = record.scope === 'workspace_mcp' ? 'MCP tokens' : 'API keys';
    throw ApiError.conflict(`A workspace holds at most ${MAX_ACTIVE_KEYS_PER_WORKSPACE} ${kind} neither revoked nor expired; revoke one first.`);
  }
  return { ...record, key };
}

/** A workspace's keys of one scope, newest first; never a secret. */
export async function listKeys(db: D1Database, workspaceId: string, scope: KeyScope): Promise<ApiKeyRecord[]> {
  const { results } = await db
    .prepare(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE workspace_id = ? AND scope = ? ORDER BY created_at DESC, id DESC`)
    .bind(workspaceId, scope)
    .all<ApiKeyRecord>();
  return results;
}

export async function getKey(db: D1Database, id: string): Promise<ApiKeyRecord> {
  const row = await db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ?`).bind(id).first<ApiKeyRecord>();
  if (!row) throw ApiError.notFound(`No key ${id}.`);
  return row;
}

/** Decrypts a key for its owner. A revoked key stays revoked, so revealing it would only invite confusion. */
export async function revealKey(db: D1Database, encryptionSecret: string, id: string): Promise<ApiKeyRecord & { key: string }> {
  const row = await db
    .prepare(`SELECT ${KEY_COLUMNS}, key_ciphertext AS ciphertext FROM api_keys WHERE id = ?`)
    .bind(id)
    .first<ApiKeyRecord & { ciphertext: string }>();
  if (!row) throw ApiError.notFound(`No key ${id}.`);
  if (row.revokedAt) throw ApiError.conflict(`Key ${id} was revoked at ${row.revokedAt}; issue a new key.`);
  const { ciphertext, ...record } = row;
  return { ...record, key: await decryptKey(ciphertext, id, encryptionSecret) };
}

/**
 * Revocation is irreversible and idempotent: revoking twice keeps the first timestamp. The workspace's
 * gate learns of it first, so from this moment no isolate's memory of the key is trusted; then the row.
 */
export async function revokeKey(env: Env, id: string): Promise<ApiKeyRecord> {
  const key = await getKey(env.DB, id);
  await gateOf(env, key.workspaceId).revoke(id);
  const revoked = await env.DB.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').bind(new Date().toISOString(), id).run();
  const record = await getKey(env.DB, id);
  // Announced once: revoking an already revoked key changes nothing and says nothing.
  if (revoked.meta.changes > 0) await announceKey(env, 'key.revoked', record);
  return record;
}

/** createKey, then key.created to the workspace's webhook endpoints: what every surface that makes keys calls. */
export async function issueKey(env: Env, input: Parameters<typeof createKey>[2]): Promise<ApiKeyRecord & { key: string }> {
  const created = await createKey(env.DB, env.KEY_ENCRYPTION_KEY, input);
  const { key: _secret, ...record } = created;
  await announceKey(env, 'key.created', record);
  return created;
}

/**
 * Sets or removes (null) a key's monthly spend limit. D1 first, with a new version, then the workspace's
 * gate, before this answers: the very next call follows the new limit, and the jobs the key submitted that
 * wait for its limit look again. Were the gate unreachable, the change is refused here and the key's next
 * principal read (at most 30 s later) carries it to the gate.
 */
export async function setKeyLimit(env: Env, id: string, monthlyLimitCents: number | null): Promise<ApiKeyRecord> {
  const key = await getKey(env.DB, id);
  if (key.revokedAt) throw ApiError.conflict(`Key ${id} was revoked at ${key.revokedAt}; its limit no longer matters.`);
  const written = await env.DB.prepare(
    'UPDATE api_keys SET monthly_limit_units = ?, limit_version = limit_version + 1 WHERE id = ? RETURNING monthly_limit_units AS limitUnits, limit_version AS version',
  )
    .bind(monthlyLimitCents === null ? null : unitsFromCents(monthlyLimitCents), id)
    .first<KeyLimit>();
  await gateOf(env, key.workspaceId).setKeyLimit(id, written!);
  // A raise (or none) may end the wait of the jobs this key submitted; a lower limit wakes them in vain, harmlessly.
  await wakeWaitingJobs(env, { budgetKeyId: id });
  return getKey(env.DB, id);
}


/** The instant a key given `days` from now expires. */
export function expiryIn(days: number): string {
  return new Date(clock.now() + days * 86_400_000).toISOString();
}

/**
 * Gives an API key or an MCP token a new expiry, `days` from now, or none (null): longer or shorter, while it is
 * neither revoked nor expired (an expired key stays expired: make a new one). When it was set is kept, as the notice
 * of a short life is not sent (app/key-expiry-notice.ts). The day's notice is owed again for the new date. No cache
 * has to be told: a principal an isolate remembers is read again within ten minutes (PRINCIPAL_USABLE_MS), and a
 * new expiry is a day away at the soonest.
 */
export async function setKeyExpiry(db: D1Database, id: string, days: number | null): Promise<ApiKeyRecord> {
  const now = clock.now();
  const expiresAt = days === null ? null : expiryIn(days);
  const changed = await db
    .prepare(
      `UPDATE api_keys SET expires_at = ?1, expiry_set_at = ?3, expiry_noticed_at = NULL
        WHERE id = ?2 AND scope IN ('workspace', 'workspace_mcp') AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?3)`,
    )
    .bind(expiresAt, id, new Date(now).toISOString())
    .run();
  const key = await getKey(db, id);
  if (changed.meta.changes === 1) return key;
  if (key.scope !== 'workspace' && key.scope !== 'workspace_mcp') throw ApiError.conflict(`Key ${id} is of scope ${key.scope}: only API keys and MCP tokens are given an expiry.`);
  throw ApiError.conflict(
    key.revokedAt ? `Key ${id} was revoked at ${key.revokedAt}; make a new key.` : `Key ${id} expired at ${key.expiresAt}; an expired key stays expired: make a new key.`,
  );
}

export async function findPrincipal(db: D1Database, keyHash: string): Promise<KeyPrincipal | null> {
  const row = await db
    .prepare(
      `SELECT k.id AS keyId, k.scope, (k.revoked_at IS NOT NULL OR w.deleted_at IS NOT NULL) AS revoked, w.id AS workspaceId,
              w.organization_id AS organizationId,
              k.monthly_limit_units AS limitUnits, k.limit_version AS limitVersion, a.id AS agentId, k.expires_at AS expiresAt,
              (k.scope IN ('workspace_mcp', 'workspace_dryrun') AND k.created_by IS NOT NULL AND ${lacksRequiredSecondFactorSql('o', 'k.created_by')}) AS makerLacksTwoFactor
         FROM api_keys k
         JOIN workspaces w ON w.id = k.workspace_id
         JOIN organizations o ON o.id = w.organization_id
         LEFT JOIN agents a ON a.key_id = k.id
        WHERE k.key_hash = ?`,
    )
    .bind(keyHash)
    .first<Omit<KeyPrincipal, 'revoked' | 'monthlyLimit' | 'makerLacksTwoFactor'> & { revoked: number; limitUnits: number | null; limitVersion: number; makerLacksTwoFactor: number }>();
  if (!row) return null;
  const { limitUnits, limitVersion, makerLacksTwoFactor, ...principal } = row;
  return { ...principal, revoked: row.revoked === 1, monthlyLimit: { limitUnits, version: limitVersion }, ...(makerLacksTwoFactor ? { makerLacksTwoFactor: true } : {}) };
}

/**
 * Marks a person's email address confirmed (the free trial waits for it): by the link sent to it, or by the
 * operator's word for an installation that sends no email. An address confirmed already keeps its first time.
 */
export async function markEmailConfirmed(db: D1Database, email: string): Promise<{ userId: string; email: string; emailVerifiedAt: string }> {
  const row = await db
    .prepare('UPDATE users SET email_verified_at = COALESCE(email_verified_at, ?) WHERE email = ? RETURNING id AS userId, email, email_verified_at AS emailVerifiedAt')
    .bind(new Date(clock.now()).toISOString(), email)
    .first<{ userId: string; email: string; emailVerifiedAt: string }>();
  if (!row) throw ApiError.notFound(`No account has the email address ${email}.`);
  return row;
}
