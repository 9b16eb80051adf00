import { z } from '@hono/zod-openapi';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { CreateDatabase, Database, DatabaseQuery, DatabaseQueryResult } from './databases';
import { OnboardingIntent, OnboardingRecord } from './onboarding';
import { Delivery } from '../core/webhook-delivery';
import { WebhookEndpoint } from './webhooks/endpoints';
import { portableSchema } from '../core/portable-schema';
import { ITEM_STATUSES } from '../core/protocols/job';
import { Job, JobResultsPage } from './jobs/schemas';
import { JobSubmission } from './jobs/submit';

const JobIdArgument = z.string().regex(/^job_[0-9a-f]{24}$/, 'Expected a job id (job_ and 24 hex characters).').describe('The job, as sluice_jobs_submit answered it.');

/**
 * Tools about the workspace itself rather than a data source, served on every MCP endpoint beside the
 * discovery tools: onboarding (the successor of POST /v1/register), the workspace's databases, where
 * an agent keeps what it collected between runs, its webhook endpoints, and its data jobs. They run in the api worker (McpGateway), through the
 * same functions as their REST twins; database tools count against the workspace's window, free.
 */
export const WORKSPACE_TOOLS = {
  sluice_onboarding: {
    description:
      'Tells Sluice who is setting it up and what for: the agent or client name, the person\'s email and organization when known, the use case and the sources planned (slugs of GET /v1/platforms). Recorded for this workspace; answers where to go next. Free. (Successor of the deprecated POST /v1/register.)',
    input: OnboardingIntent,
    output: OnboardingRecord,
    hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  },
  sluice_db_list: {
    description: "Lists this workspace's SQLite databases (id, name, created). Free; counts against the workspace's requests per minute.",
    input: z.strictObject({}),
    output: z.object({ databases: z.array(Database) }),
    hints: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  },
  sluice_db_create: {
    description: "Creates a named SQLite database for this workspace, to keep data between runs. The plan caps how many the organization has. Free; counts against the workspace's requests per minute.",
    input: CreateDatabase,
    output: Database,
    hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  },
  sluice_db_query: {
    description:
      "Runs parameterized SQLite SQL in one of this workspace's databases (databaseId from sluice_db_list) and answers columns, rows (arrays in column order), rowsRead, rowsWritten and durationMs. Several statements separated by ';' run in one transaction; only the last may take params and only its rows are answered. At most 10,000 rows or 4 MB per answer, 5 s per request. Free; counts against the workspace's requests per minute.",
    input: z.strictObject({
      databaseId: z.string().regex(/^db_[0-9a-f]{24}$/, 'Expected a database id (db_ and 24 hex characters).').describe('The database, from sluice_db_list.'),
      ...DatabaseQuery.shape,
    }),
    output: DatabaseQueryResult,
    hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  },
  sluice_webhook_endpoints_list: {
    description:
      "Lists this workspace's webhook endpoints (URL, events, credits.low threshold), each with its latest deliveries and their attempts, as GET /v1/webhook-endpoints and .../deliveries of the REST API show them. Free.",
    input: z.strictObject({}),
    output: z.object({ endpoints: z.array(WebhookEndpoint.extend({ deliveries: z.array(Delivery) })) }),
    hints: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  },
  sluice_jobs_submit: {
    description:
      "Submits a data job: one operation ('<slug>/<operation>', e.g. 'linkedin/get-company-by-domain') over 1 to 10,000 inputs, each that operation's own arguments, run in the background. Every input is validated first (a refusal names inputs[<i>].<field>) and nothing is queued when one is wrong. Submitting is free; each item is billed at its operation's price (cents per request), only if it succeeds, and the job leaves room in the workspace's requests per minute for other calls. With connectionId, every item runs through that connection of the workspace (its own vendor credentials), each success charged the plan's platform fee instead of the price. With into {databaseId, table}, each success is also written as a row of that workspace database table (created if missing; columns job_id, item_index, input, data as JSON text), so the results can be queried with sluice_db_query. Answers the job (id, status, counts, quotedCents); follow it with sluice_jobs_status and sluice_jobs_results. Counts against the workspace's requests per minute.",
    input: JobSubmission,
    output: Job,
    hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  },
  sluice_jobs_status: {
    description:
      "A data job of this workspace: status (queued, running, waiting_for_credits, succeeded, failed, cancelled), its reason when it waits, counts (total, succeeded, failed, pending), spentCents and quotedCents, and its times. Free; counts against the workspace's requests per minute.",
    input: z.strictObject({ jobId: JobIdArgument }),
    output: Job,
    hints: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  },
  sluice_jobs_results: {
    description:
      "A page of a data job's results in input order: per item its index, input, status, data (success) or error {code, message}, and costCents. Pass nextCursor back as cursor for the next page; status keeps one status. Free; counts against the workspace's requests per minute.",
    input: z.strictObject({
      jobId: JobIdArgument,
      cursor: z.string().regex(/^\d+$/).optional().describe('nextCursor of the previous page.'),
      limit: z.number().int().min(1).max(1000).default(100).describe('Items per page, 1 to 1,000.'),
      status: z.enum(ITEM_STATUSES).optional().describe('Only the items of this status.'),
    }),
    output: JobResultsPage,
    hints: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  },
} as const;

export type WorkspaceToolName = keyof typeof WORKSPACE_TOOLS;

export function isWorkspaceTool(name: string): name is WorkspaceToolName {
  return Object.hasOwn(WORKSPACE_TOOLS, name);
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> & { type: 'object' } {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return { ...(portableSchema(rest) as Record<string, unknown>), type: 'object' };
}

/** How tools/list shows them: the input schema, the hints, and `{data}` as the answer's shape. */
export const WORKSPACE_LISTINGS: Tool[] = (Object.keys(WORKSPACE_TOOLS) as WorkspaceToolName[]).map((name) => {
  const tool = WORKSPACE_TOOLS[name];
  return {
    name,
    description: tool.description,
    inputSchema: jsonSchema(tool.input, 'input'),
    annotations: { ...tool.hints, openWorldHint: false },
    outputSchema: { type: 'object', properties: { data: jsonSchema(tool.output, 'output') }, required: ['data'] },
  };
});
