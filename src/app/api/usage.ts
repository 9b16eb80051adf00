import { createRoute } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { errorResponses, jsonContent, successEnvelope } from '../../core/schemas';
import { success } from '../../core/envelope';
import { UsageQuery, UsageReport, usageReport } from '../../services/usage-report';
import type { DashboardEnv } from '../context';
import { workspaceAccess } from '../members';
import { workspaceIdParam } from './schemas';

const route = createRoute({
  method: 'get',
  path: '/api/workspaces/{workspaceId}/usage',
  tags: ['Usage'],
  summary: "The workspace's calls, as GET /v1/usage shows them",
  operationId: 'getWorkspaceUsage',
  request: { params: workspaceIdParam, query: UsageQuery },
  responses: { 200: jsonContent(successEnvelope(UsageReport), 'Usage of the workspace over [from, to).'), ...errorResponses(400, 401, 404) },
});

export function registerUsage(app: OpenAPIHono<DashboardEnv>) {
  app.openapi(route, async (c) => {
    const { workspace } = await workspaceAccess(c.env.DB, c.get('session').user.id, c.req.valid('param').workspaceId);
    return c.json(success(await usageReport(c.env.DB, workspace.id, c.req.valid('query'))), 200);
  });
}
