import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { success } from '../../core/envelope';
import { ApiError } from '../../core/errors';
import type { AppEnv } from '../../core/context';
import { ITEM_STATUSES, JOBS_PATH } from '../../core/protocols/job';
import { Job, JobResultsPage } from '../../services/jobs/schemas';
import { errorResponses, jsonContent, successEnvelope } from '../../core/schemas';
import { validationErrorFromZod } from '../../core/validation';
import { admitFreeCall } from '../../services/pipeline';
import { cancelJob } from '../../services/jobs/cancel';
import { assertResultsKept, findWorkspaceJob, listJobs, resultsPage, viewOf } from '../../services/jobs/store';
import { streamItems } from '../../services/jobs/download';
import { JobSubmission, MAX_JOB_BODY_BYTES, submitJobOnce } from '../../services/jobs/submit';
import { IDEMPOTENCY_KEY_HEADER, idempotencyKeyFromHeader, REPLAYED_HEADER, sentIdempotencyKey } from '../../services/idempotency';

/** POST /v1/data/agnt/jobs reads up to 10 MB; everything else keeps the 1 MB cap. */
export function jobsBodyLimit(method: string, path: string): number | undefined {
  return method === 'POST' && path === JOBS_PATH ? MAX_JOB_BODY_BYTES : undefined;
}

const TAGS = ['Data jobs'];

const EXAMPLE_JOB = {
  id: 'job_5f1c2a9b7d3e4f6a8b0c1d2e',
  operation: 'linkedin/get-company-by-domain',
  name: 'Q4 enrichment',
  status: 'running' as const,
  reason: null,
  items: 2,
  counts: { total: 2, succeeded: 1, failed: 0, pending: 1 },
  spentCents: 1,
  quotedCents: 2,
  maxCostCents: null,
  connectionId: null,
  into: null,
  resumesAt: null,
  waitingOn: null,
  createdAt: '2026-11-24T09:00:00.000Z',
  startedAt: '2026-11-24T09:00:01.000Z',
  finishedAt: null,
  resultsKeptUntil: null,
  resultsDeleted: false,
} satisfies z.infer<typeof Job>;

const JobId = z.object({ id: z.string().openapi({ param: { name: 'id', in: 'path' }, example: 'job_5f1c2a9b7d3e4f6a8b0c1d2e' }) });

const submitRoute = createRoute({
  method: 'post',
  path: JOBS_PATH,
  tags: TAGS,
  summary: 'Submit a data job: one operation over 1 to 10,000 inputs, run in the background',
  description:
    "Validates every input against the operation's own schema (a refusal's details name the item: `inputs[17].domain`), quotes the job, and queues it; " +
    'nothing is queued when it is refused. Its items spend the submitting key\'s monthly limit: past it the job waits for credits, saying so, until the limit is raised or the month turns; a job that would take the items waiting in the workspace past 100,000 is refused with 409 CONFLICT. Each item then runs through the same pipeline as a /v1/data call (window, wallet, usage), billed only if it succeeds; ' +
    'the job paces itself to the workspace\'s window and leaves a fifth of it to other calls. Bodies up to 10 MB. ' +
    "`connectionId` runs every item through one of the workspace's connections (its own vendor credentials, the plan's fee per success instead of the price; the quote uses the fee). " +
    '`into` writes each success as a row of a workspace database table, created if missing (columns job_id, item_index, input, data as JSON text, written_at), so the results can be queried with SQL. ' +
    'An `Idempotency-Key` header (1 to 255 printable ASCII characters) makes a retry safe: the same key with the same body answers the job it made (`Idempotent-Replayed: true`) and makes no other; the same key with another body is 409 CONFLICT.',
  operationId: 'submitDataJob',
  request: {
    body: {
      content: { 'application/json': { schema: JobSubmission, example: { operation: 'linkedin/get-company-by-domain', inputs: [{ domain: 'stripe.com' }, { domain: 'apple.com' }], name: 'Q4 enrichment' } } },
      required: true,
    },
  },
  responses: {
    202: jsonContent(successEnvelope(Job), 'Queued.', { example: success({ ...EXAMPLE_JOB, status: 'queued', counts: { total: 2, succeeded: 0, failed: 0, pending: 2 }, spentCents: 0, startedAt: null }) }),
    ...errorResponses(400, 401, 402, 403, 404, 409, 429),
  },
});

const ListQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(20).openapi({ example: 20 }),
    cursor: z.string().optional().openapi({ description: 'nextCursor of the previous page.', example: 'WyIyMDI2LTExLTI0VDA5OjAwOjAwLjAwMFoiLCJqb2JfNWYxYyJd' }),
  })
  .strict();

const listRoute = createRoute({
  method: 'get',
  path: JOBS_PATH,
  tags: TAGS,
  summary: "The workspace's data jobs, newest first",
  operationId: 'listDataJobs',
  request: { query: ListQuery },
  responses: {
    200: jsonContent(successEnvelope(z.object({ jobs: z.array(Job), nextCursor: z.string().nullable() })), 'One page of jobs.', { example: success({ jobs: [EXAMPLE_JOB], nextCursor: null }) }),
    ...errorResponses(400, 401, 403, 429),
  },
});

const getRoute = createRoute({
  method: 'get',
  path: `${JOBS_PATH}/{id}`,
  tags: TAGS,
  summary: 'A data job: status, counts, spend and times',
  operationId: 'getDataJob',
  request: { params: JobId },
  responses: { 200: jsonContent(successEnvelope(Job), 'The job.', { example: success(EXAMPLE_JOB) }), ...errorResponses(400, 401, 403, 404, 429) },
});

const ResultsQuery = z
  .object({
    cursor: z.string().regex(/^\d+$/).optional().openapi({ description: 'nextCursor of the previous page (JSON only).', example: '99' }),
    limit: z.coerce.number().int().min(1).max(1000).default(100).openapi({ description: 'Items per page (JSON only; NDJSON and CSV stream every item).', example: 100 }),
    status: z.enum(ITEM_STATUSES).optional().openapi({ description: 'Only the items of this status.', example: 'failed' }),
  })
  .strict();

const resultsRoute = createRoute({
  method: 'get',
  path: `${JOBS_PATH}/{id}/results`,
  tags: TAGS,
  summary: "A data job's results, per item, in input order",
  description:
    'JSON (paged with `cursor`; a page holds up to `limit` items and at most 8 MB of answers, at least one item, and says where to go on) by default; with `Accept: application/x-ndjson` one JSON object per line, with `Accept: text/csv` a CSV (index, status, costCents, error code and message, input and data as JSON), ' +
    'both streamed whole, page by page, so a 10,000-item download never sits in memory at once. ' +
    'Kept 30 days after the job ends (`resultsKeptUntil`); after that 404, the job itself, its counts and spend remaining.',
  operationId: 'getDataJobResults',
  request: { params: JobId, query: ResultsQuery },
  responses: {
    200: {
      description: 'The items.',
      content: {
        'application/json': {
          schema: successEnvelope(JobResultsPage),
          example: success({ items: [{ index: 0, input: { domain: 'stripe.com' }, status: 'succeeded', data: { name: 'Stripe' }, costCents: 1 }], nextCursor: null }),
        },
        'application/x-ndjson': { schema: z.string() },
        'text/csv': { schema: z.string() },
      },
    },
    ...errorResponses(400, 401, 403, 404, 429),
  },
});

const cancelRoute = createRoute({
  method: 'post',
  path: `${JOBS_PATH}/{id}/cancel`,
  tags: TAGS,
  summary: 'Cancel a data job',
  description: "Items not started are never started nor charged; items in flight finish and are billed only if they succeed. The inputs of items the job never reached (past the first 100 pending) are deleted at once; the job's counts keep every item. Cancelling an ended job answers it as it is.",
  operationId: 'cancelDataJob',
  request: { params: JobId },
  responses: { 200: jsonContent(successEnvelope(Job), 'The job, cancelled.', { example: success({ ...EXAMPLE_JOB, status: 'cancelled', reason: 'Cancelled by request.' }) }), ...errorResponses(400, 401, 403, 404, 429) },
});

/** Counted in the workspace's window like every /v1/data route; answers the RateLimit-* headers. */
async function admitted(c: Context<AppEnv>): Promise<Record<string, string>> {
  return admitFreeCall(c.env, c.get('principal'));
}

async function jobOf(c: Context<AppEnv>, id: string) {
  const job = await findWorkspaceJob(c.env.DB, c.get('principal').workspaceId, id);
  if (!job) throw ApiError.notFound(`No data job ${id} in this workspace.`);
  return job;
}

/**
 * The `agnt` source: data jobs. One operation over up to 10,000 inputs, run in the background by a
 * Workflow; submitted, listed, read, collected and cancelled here. Every route counts against the
 * workspace's window as /v1/data does; submitting is free, each item is billed as its operation's call.
 */
export function registerJobs(app: OpenAPIHono<AppEnv>) {
  app.openapi(submitRoute, async (c) => {
    const headers = await admitted(c);
    const key = sentIdempotencyKey(idempotencyKeyFromHeader(c.req.header(IDEMPOTENCY_KEY_HEADER)));
    const { view, replayed } = await submitJobOnce(c.env, c.get('principal'), c.req.valid('json'), key);
    return c.json(success(view), 202, replayed ? { ...headers, [REPLAYED_HEADER]: 'true' } : headers);
  });

  app.openapi(listRoute, async (c) => {
    const headers = await admitted(c);
    const { limit, cursor } = c.req.valid('query');
    const jobs = await listJobs(c.env.DB, c.get('principal').workspaceId, limit + 1, cursor ? decodeCursor(cursor) : null);
    const page = jobs.slice(0, limit);
    const last = page.at(-1);
    const nextCursor = jobs.length > limit && last ? btoa(JSON.stringify([last.createdAt, last.id])) : null;
    return c.json(success({ jobs: page.map(viewOf), nextCursor }), 200, headers);
  });

  app.openapi(getRoute, async (c) => {
    const headers = await admitted(c);
    return c.json(success(viewOf(await jobOf(c, c.req.valid('param').id))), 200, headers);
  });

  app.openapi(cancelRoute, async (c) => {
    const headers = await admitted(c);
    const job = await jobOf(c, c.req.valid('param').id);
    return c.json(success(viewOf(await cancelJob(c.env, job))), 200, headers);
  });

  app.openapi(resultsRoute, (async (c: Context<AppEnv>) => {
    const headers = await admitted(c);
    const job = await jobOf(c, c.req.param('id')!);
    assertResultsKept(job);
    const parsed = ResultsQuery.safeParse(c.req.query());
    if (!parsed.success) throw validationErrorFromZod(parsed.error, 'query');
    const query = parsed.data;
    const accept = c.req.header('accept') ?? '';
    const format = accept.includes('application/x-ndjson') ? 'ndjson' : accept.includes('text/csv') ? 'csv' : 'json';
    if (format === 'json') return c.json(success(await resultsPage(c.env, job.id, query)), 200, headers);
    const stream = streamItems(c.env, job.id, query.status ?? null, format);
    const type = format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson';
    const disposition: Record<string, string> = format === 'csv' ? { 'Content-Disposition': `attachment; filename="${job.id}.csv"` } : {};
    return new Response(stream, { status: 200, headers: { ...headers, ...disposition, 'Content-Type': type, 'Cache-Control': 'no-store' } });
  }) as never);
}

function decodeCursor(cursor: string): { createdAt: string; id: string } {
  try {
    const [createdAt, id] = JSON.parse(atob(cursor)) as unknown[];
    if (typeof createdAt === 'string' && typeof id === 'string') return { createdAt, id };
  } catch {
    // Falls through to the refusal.
  }
  throw ApiError.validation([{ field: 'cursor', location: 'query', message: 'Not a cursor this API issued; pass nextCursor unchanged.' }]);
}
