import { z } from '@hono/zod-openapi';
import { ITEM_STATUSES, JOB_STATUSES, WAITING_ON } from '../../core/protocols/job';

/** A data job as the REST routes and the MCP tools answer it (store.ts's JobView). */
export const Job = z
  .object({
    id: z.string().openapi({ example: 'job_5f1c2a9b7d3e4f6a8b0c1d2e' }),
    operation: z.string().openapi({ example: 'linkedin/get-company-by-domain' }),
    name: z.string().nullable(),
    status: z.enum(JOB_STATUSES).openapi({ description: 'queued, running, waiting_for_credits (the reason says why: money, a plan or the monthly limit of the key that submitted it; it resumes by itself the moment that comes), then succeeded, failed or cancelled.' }),
    reason: z.string().nullable().openapi({ description: 'Why the job waits, failed or was cancelled; null while it simply runs.' }),
    items: z.number().int(),
    counts: z.object({ total: z.number().int(), succeeded: z.number().int(), failed: z.number().int(), pending: z.number().int() }),
    spentCents: z.number().openapi({ description: 'What its successful items cost; only successes are billed.' }),
    quotedCents: z.number().openapi({ description: 'The most the job can cost: the sum of its items’ quotes.' }),
    maxCostCents: z.number().nullable(),
    connectionId: z.string().nullable().openapi({ description: "The workspace's connection every item runs through (its own vendor credentials, the plan's fee per success); null: Sluice's accounts at the operation's price.", example: null }),
    into: z
      .object({ databaseId: z.string(), table: z.string() })
      .nullable()
      .openapi({ description: 'The workspace database table each success is written into as a row; null: none.', example: null }),
    resumesAt: z.string().nullable().openapi({ description: 'While the job waits (the window, a retry, money, runtime hours): when it looks again.' }),
    waitingOn: z
      .enum(WAITING_ON)
      .nullable()
      .openapi({
        description: "While waiting_for_credits, what ends the wait: money (a top-up, or a plan with an allowance), plan (a plan in force) or key_limit (the submitting key's monthly limit raised, or its reset); null otherwise.",
        example: null,
      }),
    createdAt: z.string(),
    startedAt: z.string().nullable(),
    finishedAt: z.string().nullable(),
    resultsKeptUntil: z.string().nullable().openapi({ description: 'The items (inputs and answers) are deleted after this, 30 days after the job ended; null while it runs.' }),
    resultsDeleted: z.boolean().openapi({ description: 'Its items are gone: the results answer 404; the counts and spend remain.' }),
  })
  .openapi('DataJob');

/** One item's outcome, as results answer it. */
export const JobItem = z
  .object({
    index: z.number().int(),
    input: z.record(z.string(), z.unknown()),
    status: z.enum(ITEM_STATUSES),
    data: z.unknown().optional(),
    error: z
      .object({ code: z.string(), message: z.string() })
      .optional()
      .openapi({ description: "A failure's reason; on a success, why it carries no data: ANSWER_TOO_LARGE (an answer over 1 MB, charged, is not kept by a job) or ANSWER_LOST (the call was charged, and its answer lost when the job's run stopped during it)." }),
    costCents: z.number(),
  })
  .openapi('DataJobItem');

/** One page of a job's results. */
export const JobResultsPage = z.object({ items: z.array(JobItem), nextCursor: z.string().nullable() });
