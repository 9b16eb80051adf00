import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { errorResponses, jsonContent, successEnvelope } from '../../core/schemas';
import { success } from '../../core/envelope';
import { createServer, deleteServer, findServer, listServers, serverOrNotFound, setDefaultServer, unknownTools } from '../../services/custom-mcp-servers';
import { resourceUrl } from '../../services/oauth/resources';
import type { DashboardEnv } from '../context';
import { requireManager, workspaceAccess } from '../members';
import { jsonBody, name, workspaceIdParam } from './schemas';

export const McpServer = z
  .object({
    id: z.string(),
    workspaceId: z.string(),
    name: z.string(),
    tools: z.array(z.string()).openapi({ description: 'MCP tool names served (data tools); the discovery tools are always served.' }),
    isDefault: z.boolean().openapi({ description: 'What the bare /mcp serves to this workspace.' }),
    url: z.string().openapi({ description: 'Its own MCP endpoint; point OAuth clients at it.' }),
    createdAt: z.string(),
  })
  .openapi('McpServer');

const CreateServerBody = z
  .strictObject({
    name,
    tools: z
      .array(z.string())
      .min(1, 'Choose at least one tool.')
      .max(500)
      .superRefine((tools, context) => {
        const unknown = unknownTools(tools);
        if (unknown.length > 0) context.addIssue({ code: 'custom', message: `Unknown tools: ${unknown.join(', ')}.` });
      }),
  })
  .openapi('CreateMcpServer');

const serverIdParam = workspaceIdParam.extend({
  serverId: z.string().regex(/^mcps_[0-9a-f]{24}$/, 'Expected a server id (mcps_ and 24 hex characters).').openapi({ param: { name: 'serverId', in: 'path' } }),
});

const routes = {
  list: createRoute({
    method: 'get',
    path: '/api/workspaces/{workspaceId}/mcp-servers',
    tags: ['MCP servers'],
    summary: "The workspace's own MCP servers",
    operationId: 'listMcpServers',
    request: { params: workspaceIdParam },
    responses: { 200: jsonContent(successEnvelope(z.object({ servers: z.array(McpServer) })), 'Servers of the workspace.'), ...errorResponses(400, 401, 404) },
  }),
  create: createRoute({
    method: 'post',
    path: '/api/workspaces/{workspaceId}/mcp-servers',
    tags: ['MCP servers'],
    summary: 'Create an MCP server with a chosen set of tools (owners and admins)',
    operationId: 'createMcpServer',
    request: { params: workspaceIdParam, body: jsonBody(CreateServerBody) },
    responses: { 201: jsonContent(successEnvelope(McpServer), 'The new server.'), ...errorResponses(400, 401, 403, 404, 409) },
  }),
  makeDefault: createRoute({
    method: 'post',
    path: '/api/workspaces/{workspaceId}/mcp-servers/{serverId}/default',
    tags: ['MCP servers'],
    summary: 'Make this server what the bare /mcp serves to the workspace (owners and admins)',
    operationId: 'setDefaultMcpServer',
    request: { params: serverIdParam },
    responses: { 200: jsonContent(successEnvelope(McpServer), 'The server, now the default.'), ...errorResponses(400, 401, 403, 404) },
  }),
  remove: createRoute({
    method: 'delete',
    path: '/api/workspaces/{workspaceId}/mcp-servers/{serverId}',
    tags: ['MCP servers'],
    summary: 'Delete a server; OAuth clients connected to it are disconnected (owners and admins)',
    operationId: 'deleteMcpServer',
    request: { params: serverIdParam },
    responses: { 200: jsonContent(successEnvelope(z.object({ id: z.string(), deleted: z.literal(true) })), 'Deleted.'), ...errorResponses(400, 401, 403, 404) },
  }),
};

export function registerMcpServers(app: OpenAPIHono<DashboardEnv>) {
  const shown = (env: DashboardEnv['Bindings'], server: Awaited<ReturnType<typeof listServers>>[number]) => ({
    ...server,
    url: resourceUrl(new URL(env.MCP_URL).origin, { kind: 'server', serverId: server.id }),
  });

  app.openapi(routes.list, async (c) => {
    const { workspace } = await workspaceAccess(c.env.DB, c.get('session').user.id, c.req.valid('param').workspaceId);
    return c.json(success({ servers: (await listServers(c.env.DB, workspace.id)).map((server) => shown(c.env, server)) }), 200);
  });

  app.openapi(routes.create, async (c) => {
    const access = await workspaceAccess(c.env.DB, c.get('session').user.id, c.req.valid('param').workspaceId);
    requireManager(access, 'create MCP servers');
    const server = await createServer(c.env.DB, { workspaceId: access.workspace.id, ...c.req.valid('json') });
    return c.json(success(shown(c.env, server)), 201);
  });

  app.openapi(routes.makeDefault, async (c) => {
    const { workspaceId, serverId } = c.req.valid('param');
    const access = await workspaceAccess(c.env.DB, c.get('session').user.id, workspaceId);
    const server = serverOrNotFound(await findServer(c.env.DB, serverId), access.workspace.id, serverId);
    requireManager(access, 'choose the default MCP server');
    await setDefaultServer(c.env.DB, access.workspace.id, server.id);
    return c.json(success(shown(c.env, { ...server, isDefault: true })), 200);
  });

  app.openapi(routes.remove, async (c) => {
    const { workspaceId, serverId } = c.req.valid('param');
    const access = await workspaceAccess(c.env.DB, c.get('session').user.id, workspaceId);
    const server = serverOrNotFound(await findServer(c.env.DB, serverId), access.workspace.id, serverId);
    requireManager(access, 'delete MCP servers');
    await deleteServer(c.env.DB, server, shown(c.env, server).url);
    return c.json(success({ id: server.id, deleted: true as const }), 200);
  });
}
