import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { errorResponses, jsonContent, successEnvelope } from '../../core/schemas';
import { success } from '../../core/envelope';
import { ApiError } from '../../core/errors';
import { listSandboxKeys, mintSandboxKey, revokeSandboxKey, SANDBOX_KEY_DAYS, sandboxKeyOf } from '../../services/sandbox-keys';
import type { DashboardEnv } from '../context';
import { canManage, workspaceAccess } from '../members';
import { jsonBody, keyIdParam, NameBody, workspaceIdParam } from './schemas';
import { countKeyMade } from './keys';

const SandboxKey = z
  .object({
    id: z.string(),
    workspaceId: z.string(),
    name: z.string(),
    hint: z.string().openapi({ description: 'The prefix and the last four characters, safe to show.' }),
    createdAt: z.string(),
    createdBy: z.string().nullable(),
    lastUsedAt: z.string().nullable(),
    revokedAt: z.string().nullable(),
    expiresAt: z.string().openapi({ description: `When the key stops working: ${SANDBOX_KEY_DAYS} days after it was minted.` }),
  })
  .openapi('SandboxKey');

const SandboxKeyWithSecret = SandboxKey.extend({ key: z.string().openapi({ description: 'The whole secret, shown this once.' }) }).openapi('SandboxKeyWithSecret');

const TAGS = ['Sandbox keys'];

const routes = {
  list: createRoute({
    method: 'get',
    path: '/api/workspaces/{workspaceId}/sandbox-keys',
    tags: TAGS,
    summary: "The workspace's sandbox keys (scope workspace_dryrun), newest first; never a secret",
    operationId: 'listSandboxKeys',
    request: { params: workspaceIdParam },
    responses: { 200: jsonContent(successEnvelope(z.object({ keys: z.array(SandboxKey) })), 'Sandbox keys of the workspace.'), ...errorResponses(400, 401, 404) },
  }),
  mint: createRoute({
    method: 'post',
    path: '/api/workspaces/{workspaceId}/sandbox-keys',
    tags: TAGS,
    summary: `Mint a sandbox key, valid ${SANDBOX_KEY_DAYS} days: on /runtime/data it answers each operation's documented example at no cost; the answer carries the secret, shown this once`,
    operationId: 'createSandboxKey',
    request: { params: workspaceIdParam, body: jsonBody(NameBody) },
    responses: { 201: jsonContent(successEnvelope(SandboxKeyWithSecret), 'The new sandbox key, with its secret.'), ...errorResponses(400, 401, 403, 404, 409, 429) },
  }),
  revoke: createRoute({
    method: 'post',
    path: '/api/workspaces/{workspaceId}/sandbox-keys/{keyId}/revoke',
    tags: TAGS,
    summary: 'Revoke a sandbox key: refused from the very next request',
    operationId: 'revokeSandboxKey',
    request: { params: keyIdParam },
    responses: { 200: jsonContent(successEnvelope(SandboxKey), 'The revoked sandbox key.'), ...errorResponses(400, 401, 403, 404) },
  }),
};

/** Sandbox keys, listed apart from live keys: any member mints one; members revoke their own, owners and admins any. */
export function registerSandboxKeys(app: OpenAPIHono<DashboardEnv>) {
  app.openapi(routes.list, async (c) => {
    const { workspace } = await workspaceAccess(c.env.DB, c.get('session').user.id, c.req.valid('param').workspaceId);
    return c.json(success({ keys: await listSandboxKeys(c.env.DB, workspace.id) }), 200);
  });

  app.openapi(routes.mint, async (c) => {
    const { workspace } = await workspaceAccess(c.env.DB, c.get('session').user.id, c.req.valid('param').workspaceId);
    await countKeyMade(c.env.DB, c.get('session').user.id);
    const created = await mintSandboxKey(c.env, { workspaceId: workspace.id, name: c.req.valid('json').name, createdBy: c.get('session').user.id });
    return c.json(success(created), 201);
  });

  app.openapi(routes.revoke, async (c) => {
    const { workspaceId, keyId } = c.req.valid('param');
    const userId = c.get('session').user.id;
    const access = await workspaceAccess(c.env.DB, userId, workspaceId);
    const key = await sandboxKeyOf(c.env.DB, access.workspace.id, keyId);
    if (key.createdBy !== userId && !canManage(access.role)) {
      throw ApiError.forbidden(`Only owners, admins and the person who made it can revoke this sandbox key; your role is ${access.role}.`);
    }
    if (key.revokedAt) c.set('unchanged', true);
    return c.json(success(await revokeSandboxKey(c.env, access.workspace.id, keyId)), 200);
  });
}
