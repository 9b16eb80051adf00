import { createRoute } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { success } from '../../core/envelope';
import { errorResponses, jsonContent, successEnvelope } from '../../core/schemas';
import { ActivityPage, ActivityQuery, activityOf } from '../activity';
import type { DashboardEnv } from '../context';
import { organizationAccess, requireManager } from '../members';
import { organizationIdParam } from './schemas';

const route = createRoute({
  method: 'get',
  path: '/api/organizations/{organizationId}/activity',
  tags: ['Organizations'],
  summary: "What the organization's people changed through the dashboard, newest first",
  description: 'Keys, MCP tokens and servers, connections, endpoints, databases, agents, workspaces, members and the plan: who, what, where and when, kept 400 days. Owners and admins only (403).',
  operationId: 'getOrganizationActivity',
  request: { params: organizationIdParam, query: ActivityQuery },
  responses: { 200: jsonContent(successEnvelope(ActivityPage), 'A page of events; `nextBefore` asks for the next.'), ...errorResponses(400, 401, 403, 404) },
});

export function registerActivity(app: OpenAPIHono<DashboardEnv>) {
  app.openapi(route, async (c) => {
    const access = await organizationAccess(c.env.DB, c.get('session').user.id, c.req.valid('param').organizationId);
    requireManager(access, "read the organization's activity");
    return c.json(success(await activityOf(c.env.DB, access.organization.id, c.req.valid('query'))), 200);
  });
}
