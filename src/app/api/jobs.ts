import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { errorResponses, jsonContent, successEnvelope } from '../../core/schemas';
import { success } from '../../core/envelope';
import { ApiError } from '../../core/errors';
import { cancelJob } from '../../services/jobs/cancel';
import { streamItems } from '../../services/jobs/download';
import { Job } from '../../services/jobs/schemas';
import { assertResultsKept, findWorkspaceJob, isEnded, listJobs, viewOf } from '../../services/jobs/store';
import { JobSubmission, refuseUnconfigured, submitJob } from '../../services/jobs/submit';
import { missingSettingsHere } from '../operation-settings';
import type { DashboardEnv } from '../context';
import { workspaceAccess } from '../members';
import { jsonBody, workspaceIdParam } from './schemas';

const TAGS = ['Data jobs'];
/** The page lists this many of the latest jobs; older ones are reached through /v1/data/agnt/jobs. */
export const DASHBOARD_JOBS = 50;

const jobIdParam = workspaceIdParam.extend({
  jobId: z.string().regex(/^job_[0-9a-f]{24}$/, 'Expected a data job id (job_ and 24 hex characters).').openapi({ param: { name: 'jobId', in: 'path' } }),
});

const routes = {
  list: createRoute({
    method: 'get',
    path: '/api/workspaces/{workspaceId}/jobs',
    tags: TAGS,
    summary: "The workspace's latest data jobs, newest first",
    operationId: 'listWorkspaceJobs',
    request: { params: workspaceIdParam },
    responses: { 200: jsonContent(successEnvelope(z.object({ jobs: z.array(Job) })), 'The latest 50 jobs.'), ...errorResponses(400, 401, 404) },
  }),
  submit: createRoute({
    method: 'post',
    path: '/api/workspaces/{workspaceId}/jobs',
    tags: TAGS,
    summary: "Start a data job (the rows of an uploaded CSV, mapped to the operation's fields)",
    operationId: 'submitWorkspaceJob',
    request: { params: workspaceIdParam, body: jsonBody(JobSubmission) },
    responses: { 202: jsonContent(successEnvelope(Job), 'Queued.'), ...errorResponses(400, 401, 402, 404, 503) },
  }),
  cancel: createRoute({
    method: 'post',
    path: '/api/workspaces/{workspaceId}/jobs/{jobId}/cancel',
    tags: TAGS,
    summary: 'Cancel a data job: items not started never start nor are charged',
    operationId: 'cancelWorkspaceJob',
    request: { params: jobIdParam },
    responses: { 200: jsonContent(successEnvelope(Job), 'The job, cancelled (or as it ended).'), ...errorResponses(400, 401, 404) },
  }),
  results: createRoute({
    method: 'get',
    path: '/api/workspaces/{workspaceId}/jobs/{jobId}/results.csv',
    tags: TAGS,
    summary: "A data job's results as CSV, streamed (index, status, costCents, errorCode, errorMessage, input, data)",
    operationId: 'downloadWorkspaceJobResults',
    request: { params: jobIdParam },
    responses: { 200: { description: 'The CSV, one row per item in input order.', content: { 'text/csv': { schema: z.string() } } }, ...errorResponses(400, 401, 404) },
  }),
};

/**
 * Data jobs for the dashboard's Jobs page: the same services as /v1/data/agnt/jobs, for members of the
 * workspace signed in with a session (no key: the wallet, not a key's gate, answers the pre-check).
 */
export function registerJobs(app: OpenAPIHono<DashboardEnv>) {
  const access = (c: { env: DashboardEnv['Bindings']; get(key: 'session'): DashboardEnv['Variables']['session'] }, workspaceId: string) =>
    workspaceAccess(c.env.DB, c.get('session').user.id, workspaceId);
  const jobOf = async (c: Parameters<typeof access>[0], params: { workspaceId: string; jobId: string }) => {
    const { workspace } = await access(c, params.workspaceId);
    const job = await findWorkspaceJob(c.env.DB, workspace.id, params.jobId);
    if (!job) throw ApiError.notFound(`No data job ${params.jobId} in this workspace.`);
    return job;
  };

  app.openapi(routes.list, async (c) => {
    const { workspace } = await access(c, c.req.valid('param').workspaceId);
    return c.json(success({ jobs: (await listJobs(c.env.DB, workspace.id, DASHBOARD_JOBS, null)).map(viewOf) }), 200);
  });

  app.openapi(routes.submit, async (c) => {
    const { workspace, organization } = await access(c, c.req.valid('param').workspaceId);
    // Refused at once, as over REST, when this installation cannot run the operation: not accepted to fail item by item.
    const missingOf = await missingSettingsHere(c.env);
    if (missingOf) refuseUnconfigured(c.req.valid('json'), missingOf);
    const view = await submitJob(c.env, { organizationId: organization.id, workspaceId: workspace.id, keyId: null }, c.req.valid('json'));
    return c.json(success(view), 202);
  });

  app.openapi(routes.cancel, async (c) => {
    const job = await jobOf(c, c.req.valid('param'));
    // A job that had ended already is not cancelled again (nor recorded so).
    if (isEnded(job.status)) c.set('unchanged', true);
    return c.json(success(viewOf(await cancelJob(c.env, job))), 200);
  });

  app.openapi(routes.results, (async (c: Parameters<typeof access>[0] & { req: { valid(target: 'param'): { workspaceId: string; jobId: string } } }) => {
    const job = await jobOf(c, c.req.valid('param'));
    assertResultsKept(job);
    return new Response(streamItems(c.env, job.id, null, 'csv'), {
      status: 200,
      headers: { 'Content-Type': 'text/csv; charset=utf-8', 'Content-Disposition': `attachment; filename="${job.id}.csv"`, 'Cache-Control': 'no-store' },
    });
  }) as never);
}
