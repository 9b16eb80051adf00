import { createRoute } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { success } from '../../core/envelope';
import { countAttempt, type ThrottleRule } from '../../core/throttle';
import { exportRangeOf, USAGE_CSV_ANSWER, USAGE_EXPORT_DESCRIPTION, usageCsvResponse, UsageExportQuery, UsageQuery, UsageReport, usageReport } from '../../services/usage-report';
import type { AppEnv } from '../../core/context';
import { errorResponses, jsonContent, successEnvelope } from '../../core/schemas';

const route = createRoute({
  method: 'get',
  path: '/v1/usage',
  tags: ['Account'],
  summary: "The workspace's calls: totals, per-operation breakdown and rows",
  operationId: 'getUsage',
  request: { query: UsageQuery },
  responses: {
    200: jsonContent(successEnvelope(UsageReport), 'Usage of the calling workspace over [from, to).', {
      example: success({
        workspaceId: 'ws_0a1b2c3d4e5f6a7b8c9d0e1f',
        from: '2026-10-23T10:00:00.000Z',
        to: '2026-11-22T10:00:00.000Z',
        summarizedBefore: null,
        totals: { calls: 3, succeeded: 2, failed: 1, costCents: 1.1 },
        byOperation: [
          { operation: 'linkedin.get-company-by-domain', calls: 2, succeeded: 1, failed: 1, costCents: 1 },
          { operation: 'web.scrape', calls: 1, succeeded: 1, failed: 0, costCents: 0.1 },
        ],
        sandbox: { calls: 4, byOperation: [{ operation: 'seo.serp', calls: 4 }] },
        rows: [
          { id: 'use_01a202b0f28c9f8e7d6c5b4a39281706f5e4', requestId: 'req_1a2b3c4d5e6f7a8b9c0d1e2f', keyId: 'key_4d5e6f7a8b9c0d1e2f3a4b5c', operation: 'web.scrape', status: 200, errorCode: null, costCents: 0.1, cached: false, latencyMs: 412, createdAt: '2026-11-22T09:58:01.000Z', sandbox: false, connectionId: null, jobId: null },
        ],
        nextCursor: 'WyIyMDI2LTExLTIyVDA5OjU4OjAxLjAwMFoiLCJ1c2VfMDFhMjAyYjBmMjhjOWY4ZTdkNmM1YjRhMzkyODE3MDZmNWU0Il0',
      }),
    }),
    ...errorResponses(400, 401, 403),
  },
});

/** Exports a workspace's keys may download an hour, all together (a person's dashboard exports are counted apart). */
export const USAGE_EXPORTS_PER_WORKSPACE: ThrottleRule = { limit: 30, windowMs: 60 * 60_000, what: 'usage exports by this workspace' };

const exportRoute = createRoute({
  method: 'get',
  path: '/v1/usage/export',
  tags: ['Account'],
  summary: "Every call of the workspace over whole UTC days, as CSV",
  description: `${USAGE_EXPORT_DESCRIPTION} ${USAGE_EXPORTS_PER_WORKSPACE.limit} exports an hour per workspace (429 RATE_LIMITED with Retry-After); a range refused with 400 is not counted.`,
  operationId: 'exportUsage',
  request: { query: UsageExportQuery },
  responses: { 200: USAGE_CSV_ANSWER, ...errorResponses(400, 401, 403, 429) },
});

export function registerUsage(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => c.json(success(await usageReport(c.env.DB, c.get('principal').workspaceId, c.req.valid('query'))), 200));
  app.openapi(exportRoute, async (c) => {
    const { workspaceId } = c.get('principal');
    const range = exportRangeOf(c.req.valid('query'));
    await countAttempt(c.env.DB, `usage-export:workspace:${workspaceId}`, USAGE_EXPORTS_PER_WORKSPACE);
    return usageCsvResponse(c.env.DB, workspaceId, range) as never;
  });
}
