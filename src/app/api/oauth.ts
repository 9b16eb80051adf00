import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { errorResponses, jsonContent, successEnvelope } from '../../core/schemas';
import { success } from '../../core/envelope';
import { ApiError } from '../../core/errors';
import { decide, describeAuthorization } from '../../services/oauth/authorization';
import { findGrant, listConnectedClients } from '../../services/oauth/grants';
import { revokeGrant } from '../../services/oauth/tokens';
import type { DashboardEnv } from '../context';
import { recordChange } from '../activity';
import { canManage, workspaceAccess } from '../members';
import { jsonBody, workspaceIdParam } from './schemas';

const ConsentBody = z
  .strictObject({
    request: z.string().min(1, 'Required.').max(200),
    workspaceId: z.string().regex(/^ws_[0-9a-f]{24}$/, 'Expected a workspace id (ws_ and 24 hex characters).').optional(),
    decision: z.enum(['allow', 'deny']),
  })
  .openapi('ConsentDecision');

const ConnectedClient = z
  .object({
    grantId: z.string(),
    clientId: z.string(),
    clientName: z.string(),
    verified: z.boolean().openapi({ description: "True when the name comes from a metadata document at the client's own https URL." }),
    redirectHost: z.string(),
    resource: z.string().openapi({ description: 'The MCP endpoint its tokens work on.' }),
    userId: z.string(),
    userName: z.string().nullable(),
    createdAt: z.string(),
    lastUsedAt: z.string().nullable(),
  })
  .openapi('ConnectedClient');

const grantIdParam = workspaceIdParam.extend({
  grantId: z.string().regex(/^grant_[0-9a-f]{24}$/, 'Expected a grant id (grant_ and 24 hex characters).').openapi({ param: { name: 'grantId', in: 'path' } }),
});

const routes = {
  consent: createRoute({
    method: 'post',
    path: '/api/oauth/consent',
    tags: ['OAuth'],
    summary: "Allow or deny an MCP client's authorization request; answers where the browser goes next",
    operationId: 'decideConsent',
    request: { body: jsonBody(ConsentBody) },
    responses: { 200: jsonContent(successEnvelope(z.object({ redirectTo: z.string() })), "The client's redirect URI with a code, or with error=access_denied."), ...errorResponses(400, 401, 404) },
  }),
  list: createRoute({
    method: 'get',
    path: '/api/workspaces/{workspaceId}/oauth-clients',
    tags: ['OAuth'],
    summary: 'MCP clients connected to the workspace by OAuth, newest first',
    operationId: 'listConnectedClients',
    request: { params: workspaceIdParam },
    responses: { 200: jsonContent(successEnvelope(z.object({ clients: z.array(ConnectedClient) })), 'Grants in force.'), ...errorResponses(400, 401, 404) },
  }),
  revoke: createRoute({
    method: 'post',
    path: '/api/workspaces/{workspaceId}/oauth-clients/{grantId}/revoke',
    tags: ['OAuth'],
    summary: "Disconnect a client: its tokens are refused from the very next request",
    operationId: 'revokeConnectedClient',
    request: { params: grantIdParam },
    responses: { 200: jsonContent(successEnvelope(z.object({ grantId: z.string(), revoked: z.literal(true) })), 'Revoked.'), ...errorResponses(400, 401, 403, 404) },
  }),
};

export function registerOAuthConsent(app: OpenAPIHono<DashboardEnv>) {
  app.openapi(routes.consent, async (c) => {
    const { request, workspaceId, decision } = c.req.valid('json');
    const pending = await describeAuthorization(c.env, request);
    const gone = () => ApiError.notFound('This authorization request is unknown, has expired (they last ten minutes) or was already answered. Start again from the app.');
    if (!pending) throw gone();
    let redirectTo: string | undefined;
    if (decision === 'deny') {
      redirectTo = await decide(c.env, request, { allow: false });
    } else {
      if (!workspaceId) throw ApiError.validation([{ field: 'workspaceId', location: 'body', message: 'Choose the workspace the client will act for.' }]);
      const access = await workspaceAccess(c.env.DB, c.get('session').user.id, workspaceId);
      if (pending.serverWorkspaceId !== null && pending.serverWorkspaceId !== access.workspace.id) {
        throw ApiError.validation([{ field: 'workspaceId', location: 'body', message: 'This MCP server belongs to another workspace.' }]);
      }
      redirectTo = await decide(c.env, request, { allow: true, userId: c.get('session').user.id, workspaceId: access.workspace.id });
      // A client given a workspace's access is the organization's activity (the path names no workspace: recorded here).
      if (redirectTo) {
        await recordChange(c.env.DB, { workspaceId: access.workspace.id, actorUserId: c.get('session').user.id, action: 'oauth_client.connected', target: pending.client.id, detail: pending.client.name }).catch((error: unknown) => {
          console.error(JSON.stringify({ level: 'error', note: 'activity not recorded', route: 'POST /api/oauth/consent', error: String(error) }));
        });
      }
    }
    if (!redirectTo) throw gone();
    return c.json(success({ redirectTo }), 200);
  });

  app.openapi(routes.list, async (c) => {
    const { workspace } = await workspaceAccess(c.env.DB, c.get('session').user.id, c.req.valid('param').workspaceId);
    return c.json(success({ clients: await listConnectedClients(c.env.DB, workspace.id) }), 200);
  });

  app.openapi(routes.revoke, async (c) => {
    const { workspaceId, grantId } = c.req.valid('param');
    const userId = c.get('session').user.id;
    const access = await workspaceAccess(c.env.DB, userId, workspaceId);
    const grant = await findGrant(c.env.DB, grantId);
    if (!grant || grant.workspaceId !== access.workspace.id) throw ApiError.notFound(`No connected client ${grantId} in workspace ${access.workspace.id}.`);
    if (grant.userId !== userId && !canManage(access.role)) {
      throw ApiError.forbidden(`Only owners, admins and the person who connected it can disconnect this client; your role is ${access.role}.`);
    }
    if (grant.revokedAt) c.set('unchanged', true);
    await revokeGrant(c.env.DB, grant.id, 'revoked in the dashboard');
    return c.json(success({ grantId: grant.id, revoked: true as const }), 200);
  });
}
