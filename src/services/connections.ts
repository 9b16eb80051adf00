import type { Env, SettingName } from '../core/config';
import type { Operation } from '../core/operation';
import { clock } from '../core/clock';
import { ApiError, UPSTREAM_RETRY_AFTER_S } from '../core/errors';
import { isLiveWorkspace, workspaceIsLive } from './live-workspaces';
import { newId } from '../core/ids';
import { decryptKey, encryptKey } from '../core/keys';
import { unitsFromCents } from '../core/money';
import { PLAN_TABLE, type Plan } from '../core/plans';
import { planInForceSql } from '../core/records';
import { type CheckOutcome, type ConnectableVendor, connectableVendor, notServedBy } from './connections-vendors';
import type { ConnectionUse } from './pipeline';

export type ConnectionStatus = CheckOutcome['status'];

/** A connection as it is answered: never its credentials. */
export interface Connection {
  id: string;
  vendor: string;
  name: string;
  hint: string;
  status: ConnectionStatus;
  createdAt: string;
  lastCheckedAt: string;
}

const COLUMNS = 'id, vendor, name, hint, status, created_at AS createdAt, last_checked_at AS lastCheckedAt';

/** The vendor's refusal as a 400 naming the credential fields, or its being unreachable as a 503; nothing is stored either way. */
function refusalOf(vendor: ConnectableVendor, outcome: Exclude<CheckOutcome, { status: 'ok' }>): ApiError {
  if (outcome.status === 'unreachable') {
    return new ApiError('PROVIDER_UNAVAILABLE', `${vendor.label} could not be reached to check the credentials: ${outcome.reason}. Nothing was stored; retry shortly.`, { retryAfter: 30 });
  }
  return ApiError.validation(
    vendor.fields.map((field) => ({ field: `credentials.${field.name}`, location: 'body' as const, message: `${vendor.label}: ${outcome.reason}.` })),
    `${vendor.label} refused these credentials: ${outcome.reason}. Nothing was stored.`,
  );
}

/** What a credential sent as it is in a header may hold: printable ASCII, as every vendor's keys are. */
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

/** The credentials of a vendor's fields, each a non-empty string (printable ASCII unless sent encoded), or a 400 naming what is wrong. */
export function credentialsFor(vendor: ConnectableVendor, given: Record<string, unknown>): Record<string, string> {
  const details = vendor.fields.flatMap((field) => {
    const value = given[field.name];
    if (typeof value !== 'string' || value.trim() === '' || value.length > 500) {
      return [{ field: `credentials.${field.name}`, location: 'body' as const, message: `Required: ${field.description}` }];
    }
    // Anything else could not be sent in the vendor's header (a 500 for some vendors, an "unreachable" 503 for others).
    if (!field.encoded && !PRINTABLE_ASCII.test(value.trim())) return [{ field: `credentials.${field.name}`, location: 'body' as const, message: 'Printable ASCII characters only.' }];
    return [];
  });
  const unknown = Object.keys(given).filter((name) => !vendor.fields.some((field) => field.name === name));
  for (const name of unknown) details.push({ field: `credentials.${name}`, location: 'body', message: `Not a credential of ${vendor.slug}; its fields: ${vendor.fields.map((field) => field.name).join(', ')}.` });
  if (details.length > 0) throw ApiError.validation(details);
  return Object.fromEntries(vendor.fields.map((field) => [field.name, (given[field.name] as string).trim()]));
}

/**
 * A workspace's connections at most: a vendor account is connected by hand, once, so this is room to spare, while
 * the rows (sealed credentials, about 1 KB) cannot pile up without a bound, one a minute for good.
 */
export const MAX_CONNECTIONS_PER_WORKSPACE = 50;

function tooManyConnections(): ApiError {
  return ApiError.conflict(`A workspace has at most ${MAX_CONNECTIONS_PER_WORKSPACE} connections; delete one first.`);
}

/**
 * Checks the credentials with the vendor's cheapest authenticated call, then stores them sealed; a refusal stores
 * nothing. A workspace with its MAX_CONNECTIONS_PER_WORKSPACE is refused 409 before the vendor is asked, and the
 * insert counts again, so two made at once cannot both take the last place.
 */
export async function createConnection(
  env: Env,
  workspaceId: string,
  input: { vendor: ConnectableVendor; name?: string | undefined; credentials: Record<string, string> },
  signal: AbortSignal,
): Promise<Connection> {
  if ((await connectionCount(env.DB, workspaceId)) >= MAX_CONNECTIONS_PER_WORKSPACE) throw tooManyConnections();
  const outcome = await input.vendor.check(env, input.credentials, signal);
  if (outcome.status !== 'ok') throw refusalOf(input.vendor, outcome);
  const now = new Date(clock.now()).toISOString();
  const secret = input.credentials[input.vendor.hintField]!;
  const connection: Connection = {
    id: newId('con'),
    vendor: input.vendor.slug,
    name: input.name ?? input.vendor.label,
    hint: `…${secret.slice(-4)}`,
    status: 'ok',
    createdAt: now,
    lastCheckedAt: now,
  };
  const stored = await env.DB.prepare(
    `INSERT INTO connections (id, workspace_id, vendor, name, credentials_ciphertext, hint, status, created_at, last_checked_at)
     SELECT ?1, ?2, ?3, ?4, ?5, ?6, 'ok', ?7, ?7 WHERE (SELECT COUNT(*) FROM connections WHERE workspace_id = ?2) < ?8 AND ${workspaceIsLive('?2')}`,
  )
    .bind(connection.id, workspaceId, connection.vendor, connection.name, await encryptKey(JSON.stringify(input.credentials), connection.id, env.KEY_ENCRYPTION_KEY), connection.hint, now, MAX_CONNECTIONS_PER_WORKSPACE)
    .run();
  if (stored.meta.changes !== 1) throw (await isLiveWorkspace(env.DB, workspaceId)) ? tooManyConnections() : ApiError.notFound(`No workspace ${workspaceId}.`);
  return connection;
}

async function connectionCount(db: D1Database, workspaceId: string): Promise<number> {
  return (await db.prepare('SELECT COUNT(*) AS n FROM connections WHERE workspace_id = ?').bind(workspaceId).first<{ n: number }>())?.n ?? 0;
}

export async function listConnections(db: D1Database, workspaceId: string): Promise<Connection[]> {
  const { results } = await db.prepare(`SELECT ${COLUMNS} FROM connections WHERE workspace_id = ? ORDER BY created_at DESC, id DESC`).bind(workspaceId).all<Connection>();
  return results;
}

/** The workspace's connection, or 404: another workspace's reads as missing. */
export async function getConnection(db: D1Database, workspaceId: string, id: string): Promise<Connection> {
  const connection = await db.prepare(`SELECT ${COLUMNS} FROM connections WHERE id = ? AND workspace_id = ?`).bind(id, workspaceId).first<Connection>();
  if (!connection) throw ApiError.notFound(`No connection ${id} in this workspace.`);
  return connection;
}

export async function deleteConnection(db: D1Database, workspaceId: string, id: string): Promise<Connection> {
  const connection = await getConnection(db, workspaceId, id);
  await db.prepare('DELETE FROM connections WHERE id = ? AND workspace_id = ?').bind(id, workspaceId).run();
  return connection;
}

/** Checks the stored credentials again and records what the vendor said. */
export async function recheckConnection(env: Env, workspaceId: string, id: string, signal: AbortSignal): Promise<Connection & { reason?: string }> {
  const { connection, vendor, credentials } = await openConnection(env, workspaceId, id);
  const outcome = await vendor.check(env, credentials, signal);
  const checkedAt = new Date(clock.now()).toISOString();
  const written = await env.DB.prepare('UPDATE connections SET status = ?, last_checked_at = ? WHERE id = ? AND workspace_id = ?').bind(outcome.status, checkedAt, id, workspaceId).run();
  // Deleted while the vendor was asked: there is nothing left to report on.
  if (written.meta.changes !== 1) throw ApiError.notFound(`No connection ${id} in this workspace.`);
  return { ...connection, status: outcome.status, lastCheckedAt: checkedAt, ...(outcome.status === 'ok' ? {} : { reason: outcome.reason }) };
}

async function openConnection(env: Env, workspaceId: string, id: string) {
  const row = await env.DB.prepare(
    `SELECT ${COLUMNS.split(', ').map((column) => `c.${column}`).join(', ')}, c.credentials_ciphertext AS ciphertext, ${planInForceSql('o')} AS plan
       FROM connections c JOIN workspaces w ON w.id = c.workspace_id JOIN organizations o ON o.id = w.organization_id
      WHERE c.id = ? AND c.workspace_id = ?`,
  )
    .bind(new Date(clock.now()).toISOString(), id, workspaceId)
    .first<Connection & { ciphertext: string; plan: Plan | null }>();
  if (!row) throw ApiError.notFound(`No connection ${id} in this workspace.`);
  const { ciphertext, plan, ...connection } = row;
  const vendor = connectableVendor(connection.vendor);
  if (!vendor) throw ApiError.notFound(`Connection ${id} is to ${connection.vendor}, which this installation no longer connects.`);
  const credentials = JSON.parse(await decryptKey(ciphertext, id, env.KEY_ENCRYPTION_KEY)) as Record<string, string>;
  return { connection, vendor, credentials, plan };
}

/**
 * What the pipeline needs for a call through a connection: settings carrying the workspace's credentials
 * and the plan's platform fee (no plan: the pipeline's own 402 answers). An operation the vendor does not
 * serve is 404 ENDPOINT_NOT_FOUND naming the vendors that do.
 */
export async function connectionUse(env: Env, workspaceId: string, id: string, operation: Operation): Promise<{ use: ConnectionUse; connection: Connection; vendor: ConnectableVendor }> {
  const { connection, vendor, credentials, plan } = await openConnection(env, workspaceId, id);
  if (!vendor.operations.includes(operation)) throw notServedBy(vendor, operation);
  const settings: Partial<Record<SettingName, string>> = { ...vendor.settings };
  for (const field of vendor.fields) settings[field.setting] = credentials[field.name]!;
  return { use: { id, env: { ...env, ...settings }, feeUnits: plan ? unitsFromCents(PLAN_TABLE[plan].connectionFeeCents) : 0 }, connection, vendor };
}

/**
 * A vendor failure of a call through a connection, read as the workspace's own account's (spec: a 429 on
 * /v1/connections may be the vendor throttling the user's credentials): a throttle is 429 PROVIDER_ERROR with
 * the vendor's Retry-After; refused credentials mark the connection rejected; a vendor's 402 (its credits,
 * the workspace's quota there) passes as PROVIDER_ERROR, not UPSTREAM_CREDITS_EXHAUSTED.
 */
export async function connectionFailure(db: D1Database, connection: Connection, vendor: ConnectableVendor, error: unknown): Promise<unknown> {
  if (!(error instanceof ApiError) || !error.upstream) return error;
  const named = `connection ${connection.id} (${connection.name})`;
  const headers = { ...error.headers };
  switch (error.upstream.kind) {
    case 'throttled': {
      const retryAfter = error.retryAfter ?? UPSTREAM_RETRY_AFTER_S;
      return new ApiError(
        'PROVIDER_ERROR',
        `${vendor.label} is throttling the requests of this workspace's own account (${named}): retry in ${retryAfter} s. This is the vendor's limit on your credentials, not Sluice's rate window; a plan change will not help. This call was not charged.`,
        { status: 429, retryAfter, headers },
      );
    }
    case 'credentials_refused': {
      await db.prepare("UPDATE connections SET status = 'rejected', last_checked_at = ? WHERE id = ?").bind(new Date(clock.now()).toISOString(), connection.id).run();
      const status = error.upstream.status === 401 || error.upstream.status === 403 ? error.upstream.status : 401;
      return new ApiError(
        'PROVIDER_ERROR',
        `${vendor.label} refused the credentials of ${named}; the connection is now marked rejected. Update them (delete it and add it again), or re-check it with POST /v1/connections/${connection.id}/check. This call was not charged.`,
        { status, headers },
      );
    }
    case 'out_of_credits':
      return new ApiError(
        'PROVIDER_ERROR',
        `${vendor.label} says the account of ${named} is out of credits or over its quota (HTTP ${error.upstream.status ?? 402}): top up with the vendor; Sluice's balance is not involved. This call was not charged.`,
        { status: 402, headers },
      );
  }
}
