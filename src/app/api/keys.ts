import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { errorResponses, jsonContent, successEnvelope } from '../../core/schemas';
import { expiryIn, getKey, issueKey, listKeys, revealKey, revokeKey, setKeyExpiry, setKeyLimit } from '../../services/accounts';
import { type ApiKeyRecord } from '../../core/records';
import { listKeysWithSpend, lowerKeyLimit } from '../../services/key-spend';
import { success } from '../../core/envelope';
import { countAttempt, type ThrottleRule } from '../../core/throttle';
import { ApiError } from '../../core/errors';
import type { DashboardEnv } from '../context';
import { canManage, type WorkspaceAccess, workspaceAccess } from '../members';
import { jsonBody, Key, KeyExpiryBody, keyIdParam, KeyLimitBody, KeyWithSecret, KeyWithSpend, NewKeyBody, NewTokenBody, tokenIdParam, workspaceIdParam } from './schemas';

/**
 * Keys, MCP tokens, sandbox keys and agent deployments (each mints a key) one person makes in an hour, together. Each is a row kept for months and a
 * `key.created` event counted against the organization's monthly webhook events: a loop making them must not use up
 * either. A person making keys by hand never comes near it; an installation's scripts use the operator API.
 */
export const KEYS_MADE_PER_USER: ThrottleRule = { limit: 60, windowMs: 60 * 60_000, what: 'keys, MCP tokens, sandbox keys and agent deployments made by you this hour' };

export const countKeyMade = (db: D1Database, userId: string) => countAttempt(db, `keys-made:${userId}`, KEYS_MADE_PER_USER);

const routes = {
  listKeys: createRoute({
    method: 'get',
    path: '/api/workspaces/{workspaceId}/keys',
    tags: ['API keys'],
    summary: "The workspace's API keys (scope workspace), newest first, with each one's spend this month; never a secret",
    operationId: 'listKeys',
    request: { params: workspaceIdParam },
    responses: { 200: jsonContent(successEnvelope(z.object({ keys: z.array(KeyWithSpend) })), 'Keys of the workspace.'), ...errorResponses(400, 401, 404) },
  }),
  createKey: createRoute({
    method: 'post',
    path: '/api/workspaces/{workspaceId}/keys',
    tags: ['API keys'],
    summary: 'Create an API key, optionally with a monthly spend limit of its own; the answer carries the secret',
    operationId: 'createKey',
    request: { params: workspaceIdParam, body: jsonBody(NewKeyBody) },
    responses: { 201: jsonContent(successEnvelope(KeyWithSecret), 'The new key, with its secret.'), ...errorResponses(400, 401, 403, 404, 409, 429) },
  }),
  revealKey: createRoute({
    method: 'post',
    path: '/api/workspaces/{workspaceId}/keys/{keyId}/reveal',
    tags: ['API keys'],
    summary: 'Show a key again (owners and admins, or whoever made it)',
    operationId: 'revealKey',
    request: { params: keyIdParam },
    responses: { 200: jsonContent(successEnvelope(KeyWithSecret), 'The key with its secret.'), ...errorResponses(400, 401, 403, 404, 409) },
  }),
  revokeKey: createRoute({
    method: 'post',
    path: '/api/workspaces/{workspaceId}/keys/{keyId}/revoke',
    tags: ['API keys'],
    summary: 'Revoke a key: refused from the very next request, irreversibly',
    operationId: 'revokeKey',
    request: { params: keyIdParam },
    responses: { 200: jsonContent(successEnvelope(Key), 'The revoked key.'), ...errorResponses(400, 401, 403, 404) },
  }),
  setKeyLimit: createRoute({
    method: 'put',
    path: '/api/workspaces/{workspaceId}/keys/{keyId}/limit',
    tags: ['API keys'],
    summary:
      "Set, raise or remove (null) a key's monthly spend limit (owners and admins); a member may only set one on their own key or lower it. The very next call follows it",
    operationId: 'setKeyLimit',
    request: { params: keyIdParam, body: jsonBody(KeyLimitBody) },
    responses: { 200: jsonContent(successEnvelope(Key), 'The key with its new limit.'), ...errorResponses(400, 401, 403, 404, 409) },
  }),
  setKeyExpiry: createRoute({
    method: 'put',
    path: '/api/workspaces/{workspaceId}/keys/{keyId}/expiry',
    tags: ['API keys'],
    summary:
      "Give a key a new expiry, a number of days from now (longer or shorter), or none (owners and admins, or whoever made it); an expired or revoked key stays so (409). The notice of its expiry is owed again for the new date",
    operationId: 'setKeyExpiry',
    request: { params: keyIdParam, body: jsonBody(KeyExpiryBody) },
    responses: { 200: jsonContent(successEnvelope(Key), 'The key with its new expiry.'), ...errorResponses(400, 401, 403, 404, 409) },
  }),
  listTokens: createRoute({
    method: 'get',
    path: '/api/workspaces/{workspaceId}/mcp-tokens',
    tags: ['MCP tokens'],
    summary: "The workspace's MCP bearer tokens (scope workspace_mcp); never a secret",
    operationId: 'listMcpTokens',
    request: { params: workspaceIdParam },
    responses: { 200: jsonContent(successEnvelope(z.object({ tokens: z.array(Key) })), 'MCP tokens of the workspace.'), ...errorResponses(400, 401, 404) },
  }),
  createToken: createRoute({
    method: 'post',
    path: '/api/workspaces/{workspaceId}/mcp-tokens',
    tags: ['MCP tokens'],
    summary: 'Create an MCP bearer token; the answer carries the secret, shown this once',
    operationId: 'createMcpToken',
    request: { params: workspaceIdParam, body: jsonBody(NewTokenBody) },
    responses: { 201: jsonContent(successEnvelope(KeyWithSecret), 'The new token, with its secret.'), ...errorResponses(400, 401, 403, 404, 409, 429) },
  }),
  setTokenExpiry: createRoute({
    method: 'put',
    path: '/api/workspaces/{workspaceId}/mcp-tokens/{tokenId}/expiry',
    tags: ['MCP tokens'],
    summary: "Give an MCP token a new expiry, a number of days from now (longer or shorter), or none (owners and admins, or whoever made it); an expired or revoked token stays so (409)",
    operationId: 'setMcpTokenExpiry',
    request: { params: tokenIdParam, body: jsonBody(KeyExpiryBody) },
    responses: { 200: jsonContent(successEnvelope(Key), 'The token with its new expiry.'), ...errorResponses(400, 401, 403, 404, 409) },
  }),
  revokeToken: createRoute({
    method: 'post',
    path: '/api/workspaces/{workspaceId}/mcp-tokens/{tokenId}/revoke',
    tags: ['MCP tokens'],
    summary: 'Revoke an MCP token: refused by /mcp from the very next request',
    operationId: 'revokeMcpToken',
    request: { params: tokenIdParam },
    responses: { 200: jsonContent(successEnvelope(Key), 'The revoked token.'), ...errorResponses(400, 401, 403, 404) },
  }),
};

type DashboardScope = 'workspace' | 'workspace_mcp';
const NOUN: Record<DashboardScope, string> = { workspace: 'key', workspace_mcp: 'MCP token' };

/**
 * The key, if it is of this workspace and of the scope the route manages; anything else (another
 * workspace's key, an agent key, an MCP token asked for as an API key) reads as missing.
 */
async function keyOf(db: D1Database, access: WorkspaceAccess, keyId: string, scope: DashboardScope): Promise<ApiKeyRecord & { scope: DashboardScope }> {
  const key = await getKey(db, keyId).catch(() => undefined);
  if (!key || key.workspaceId !== access.workspace.id || key.scope !== scope) throw ApiError.notFound(`No ${NOUN[scope]} ${keyId} in workspace ${access.workspace.id}.`);
  return key as ApiKeyRecord & { scope: DashboardScope };
}

/** Members use their own keys; owners and admins also manage everybody else's. */
function requireOwnerOrManager(access: WorkspaceAccess, key: ApiKeyRecord, userId: string, action: string): void {
  if (key.createdBy === userId || canManage(access.role)) return;
  throw ApiError.forbidden(`Only owners, admins and the person who made it can ${action} this ${NOUN[key.scope as DashboardScope]}; your role is ${access.role}.`);
}

/**
 * Why a member may not set this limit on their own key: a limit an owner or admin set is a ceiling, so a
 * member may add one or lower it, never raise or remove it (issue 32: a member lifted an owner's limit).
 */
function limitRefusal(access: WorkspaceAccess, key: ApiKeyRecord, monthlyLimitCents: number | null): ApiError {
  if (key.revokedAt) return ApiError.conflict(`Key ${key.id} was revoked at ${key.revokedAt}; its limit no longer matters.`);
  const asked = monthlyLimitCents === null ? 'remove' : 'raise';
  return ApiError.forbidden(
    `Only owners and admins can ${asked} a key's monthly limit; you can set a limit on your own key or lower it (now ${key.monthlyLimitCents === null ? 'none' : `${key.monthlyLimitCents} cents`}). Your role in ${access.organization.name} is ${access.role}.`,
  );
}

function listed(keys: ApiKeyRecord[]) {
  return keys as (ApiKeyRecord & { scope: DashboardScope })[];
}

export function registerKeys(app: OpenAPIHono<DashboardEnv>) {
  const access = (c: { env: DashboardEnv['Bindings']; get(key: 'session'): DashboardEnv['Variables']['session'] }, workspaceId: string) =>
    workspaceAccess(c.env.DB, c.get('session').user.id, workspaceId);

  app.openapi(routes.listKeys, async (c) => {
    const { workspace } = await access(c, c.req.valid('param').workspaceId);
    const keys = await listKeysWithSpend(c.env, workspace.id);
    return c.json(success({ keys: keys as (typeof keys[number] & { scope: DashboardScope })[] }), 200);
  });

  app.openapi(routes.createKey, async (c) => {
    const { workspace } = await access(c, c.req.valid('param').workspaceId);
    await countKeyMade(c.env.DB, c.get('session').user.id);
    const { name, monthlyLimitCents, expiresInDays } = c.req.valid('json');
    const created = await issueKey(c.env, {
      workspaceId: workspace.id,
      scope: 'workspace',
      name,
      createdBy: c.get('session').user.id,
      monthlyLimitCents: monthlyLimitCents ?? null,
      ...(expiresInDays === undefined ? {} : { expiresAt: expiryIn(expiresInDays) }),
    });
    return c.json(success(created as typeof created & { scope: 'workspace' }), 201);
  });

  app.openapi(routes.revealKey, async (c) => {
    const { workspaceId, keyId } = c.req.valid('param');
    const workspace = await access(c, workspaceId);
    const key = await keyOf(c.env.DB, workspace, keyId, 'workspace');
    requireOwnerOrManager(workspace, key, c.get('session').user.id, 'reveal');
    const revealed = await revealKey(c.env.DB, c.env.KEY_ENCRYPTION_KEY, key.id);
    return c.json(success({ ...revealed, scope: 'workspace' as const }), 200);
  });

  app.openapi(routes.revokeKey, async (c) => {
    const { workspaceId, keyId } = c.req.valid('param');
    const workspace = await access(c, workspaceId);
    const key = await keyOf(c.env.DB, workspace, keyId, 'workspace');
    requireOwnerOrManager(workspace, key, c.get('session').user.id, 'revoke');
    if (key.revokedAt) c.set('unchanged', true);
    return c.json(success({ ...(await revokeKey(c.env, key.id)), scope: 'workspace' as const }), 200);
  });

  app.openapi(routes.setKeyLimit, async (c) => {
    const { workspaceId, keyId } = c.req.valid('param');
    const workspace = await access(c, workspaceId);
    const key = await keyOf(c.env.DB, workspace, keyId, 'workspace');
    const { monthlyLimitCents } = c.req.valid('json');
    if (canManage(workspace.role)) return c.json(success({ ...(await setKeyLimit(c.env, key.id, monthlyLimitCents)), scope: 'workspace' as const }), 200);
    requireOwnerOrManager(workspace, key, c.get('session').user.id, 'change the limit of');
    const lowered = monthlyLimitCents === null ? null : await lowerKeyLimit(c.env, key, monthlyLimitCents);
    if (lowered) return c.json(success({ ...lowered, scope: 'workspace' as const }), 200);
    // The write refused: say why from the key as it is now (revoked, or its limit is lower than asked).
    throw limitRefusal(workspace, await keyOf(c.env.DB, workspace, keyId, 'workspace'), monthlyLimitCents);
  });

  app.openapi(routes.setKeyExpiry, async (c) => {
    const { workspaceId, keyId } = c.req.valid('param');
    const workspace = await access(c, workspaceId);
    const key = await keyOf(c.env.DB, workspace, keyId, 'workspace');
    requireOwnerOrManager(workspace, key, c.get('session').user.id, 'change the expiry of');
    return c.json(success({ ...(await setKeyExpiry(c.env.DB, key.id, c.req.valid('json').expiresInDays)), scope: 'workspace' as const }), 200);
  });

  app.openapi(routes.setTokenExpiry, async (c) => {
    const { workspaceId, tokenId } = c.req.valid('param');
    const workspace = await access(c, workspaceId);
    const token = await keyOf(c.env.DB, workspace, tokenId, 'workspace_mcp');
    requireOwnerOrManager(workspace, token, c.get('session').user.id, 'change the expiry of');
    return c.json(success({ ...(await setKeyExpiry(c.env.DB, token.id, c.req.valid('json').expiresInDays)), scope: 'workspace_mcp' as const }), 200);
  });

  app.openapi(routes.listTokens, async (c) => {
    const { workspace } = await access(c, c.req.valid('param').workspaceId);
    return c.json(success({ tokens: listed(await listKeys(c.env.DB, workspace.id, 'workspace_mcp')) }), 200);
  });

  app.openapi(routes.createToken, async (c) => {
    const { workspace } = await access(c, c.req.valid('param').workspaceId);
    await countKeyMade(c.env.DB, c.get('session').user.id);
    const { name, expiresInDays } = c.req.valid('json');
    const created = await issueKey(c.env, {
      workspaceId: workspace.id,
      scope: 'workspace_mcp',
      name,
      createdBy: c.get('session').user.id,
      ...(expiresInDays === undefined ? {} : { expiresAt: expiryIn(expiresInDays) }),
    });
    return c.json(success(created as typeof created & { scope: 'workspace_mcp' }), 201);
  });

  app.openapi(routes.revokeToken, async (c) => {
    const { workspaceId, tokenId } = c.req.valid('param');
    const workspace = await access(c, workspaceId);
    const token = await keyOf(c.env.DB, workspace, tokenId, 'workspace_mcp');
    requireOwnerOrManager(workspace, token, c.get('session').user.id, 'revoke');
    if (token.revokedAt) c.set('unchanged', true);
    return c.json(success({ ...(await revokeKey(c.env, token.id)), scope: 'workspace_mcp' as const }), 200);
  });
}
