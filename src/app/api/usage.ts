import { createRoute } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { errorResponses, jsonContent, successEnvelope } from '../../core/schemas';
import { success } from '../../core/envelope';
import { exportRangeOf, USAGE_CSV_ANSWER, USAGE_EXPORT_DESCRIPTION, usageCsvResponse, UsageExportQuery, UsageQuery, UsageReport, usageReport } from '../../services/usage-report';
import type { DashboardEnv } from '../context';
import { workspaceAccess } from '../members';
import { workspaceIdParam } from './schemas';
import { countAttempt, type ThrottleRule } from '../../core/throttle';

const route = createRoute({
  method: 'get',
  path: '/api/workspaces/{workspaceId}/usage',
  tags: ['Usage'],
  summary: "The workspace's calls, as GET /v1/usage shows them",
  operationId: 'getWorkspaceUsage',
  request: { params: workspaceIdParam, query: UsageQuery },
  responses: { 200: jsonContent(successEnvelope(UsageReport), 'Usage of the workspace over [from, to).'), ...errorResponses(400, 401, 404) },
});

/** Exports a person may download an hour. */
export const USAGE_EXPORTS_PER_USER: ThrottleRule = { limit: 30, windowMs: 60 * 60_000, what: 'usage exports by this account' };

const exportRoute = createRoute({
  method: 'get',
  path: '/api/workspaces/{workspaceId}/usage/export',
  tags: ['Usage'],
  summary: "Every call of the workspace over whole UTC days, as CSV",
  description: `${USAGE_EXPORT_DESCRIPTION} ${USAGE_EXPORTS_PER_USER.limit} exports an hour per person (429 with Retry-After).`,
  operationId: 'exportWorkspaceUsage',
  request: { params: workspaceIdParam, query: UsageExportQuery },
  responses: { 200: USAGE_CSV_ANSWER, ...errorResponses(400, 401, 404, 429) },
});

export function registerUsage(app: OpenAPIHono<DashboardEnv>) {
  app.openapi(exportRoute, async (c) => {
    const { user } = c.get('session');
    const { workspace } = await workspaceAccess(c.env.DB, user.id, c.req.valid('param').workspaceId);
    // Each reads up to 400 days of rows: a person's exports are counted, as other costly asks are.
    const range = exportRangeOf(c.req.valid('query'));
    await countAttempt(c.env.DB, `usage-export:${user.id}`, USAGE_EXPORTS_PER_USER);
    return usageCsvResponse(c.env.DB, workspace.id, range) as never;
  });

  app.openapi(route, async (c) => {
    const { workspace } = await workspaceAccess(c.env.DB, c.get('session').user.id, c.req.valid('param').workspaceId);
    return c.json(success(await usageReport(c.env.DB, workspace.id, c.req.valid('query'))), 200);
  });
}
