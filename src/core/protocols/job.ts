/**
 * A data job (the `agnt` source) as the rest of Sluice sees it. The job runs as one instance of the
 * DATA_JOBS Workflow (durable-objects/job-workflow.ts), whose instance id is the job's id; its state and
 * its items' outcomes are rows in D1 (migrations/0012_data_jobs.sql).
 */
export interface DataJobParams {
  jobId: string;
}

/** Where a workspace's data jobs are, over REST. */
export const JOBS_PATH = '/v1/data/agnt/jobs';

/** The most items one job holds. */
export const MAX_JOB_ITEMS = 10_000;
/** Items one slice (one Workflow step) takes at most: a crash re-runs at most this many, each uncharged twice. */
export const SLICE_ITEMS = 100;
/** Item rows read from D1 per page of a streamed download (services/jobs/download.ts). */
export const DOWNLOAD_PAGE_ITEMS = 100;
/**
 * The most subrequests one download makes: an R2 read per item (every answer over 2 KB), a D1 read per page
 * and one more that finds the page empty, and the request's own few (its key, the job, the gate). A worker
 * that serves downloads must allow this many (`[limits] subrequests`, checked by `npm run deploy:check`).
 */
export const MOST_DOWNLOAD_SUBREQUESTS = MAX_JOB_ITEMS + Math.ceil(MAX_JOB_ITEMS / DOWNLOAD_PAGE_ITEMS) + 1 + 10;

export const JOB_STATUSES = ['queued', 'running', 'waiting_for_credits', 'succeeded', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
/** What a job `waiting_for_credits` waits for: the way out differs (credit or a plan, or the submitting key's limit raised). */
export const WAITING_ON = ['money', 'plan', 'key_limit'] as const;
export type WaitingOn = (typeof WAITING_ON)[number];
/** A job in one of these has ended: its key is revoked and nothing of it runs again. */
export const ENDED_STATUSES: readonly JobStatus[] = ['succeeded', 'failed', 'cancelled'];

export const ITEM_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type ItemStatus = (typeof ITEM_STATUSES)[number];

/**
 * What one slice of a run tells the Workflow to do next. A wait for money or for the submitting key's limit is
 * `wakeable`: a top-up, a plan change or a raised limit ends it early (services/jobs/wake.ts).
 */
export type SliceOutcome = { kind: 'more' } | { kind: 'wait'; ms: number; why: string; wakeable?: true } | { kind: 'done' };
/** A slice's outcome and the subrequests it made at most (services/jobs/subrequests.ts), which the run adds up. */
export type SliceRun = SliceOutcome & { subrequests: number };

/**
 * The subrequests the worker that runs the jobs' Workflow allows, which Cloudflare counts over a whole Workflow
 * instance, every step of it ("Maximum number of subrequests per Workflow instance": 10,000 unless raised, 10
 * million at most). A job's items all run in its one instance: a scrape item makes about ten (its idempotency
 * claim and kept answer, the cache, the gate's meter and settle, the upstream and its name's lookup, R2 for a
 * large answer), so a job of 10,000 makes some 100,000; a call makes at most CALL_SUBREQUESTS through its
 * provider (core/subrequests.ts), and the run stops before a slice that could take it past this
 * (services/jobs/subrequests.ts). The api worker allows the most Cloudflare does (`[limits] subrequests`,
 * checked by `npm run deploy:check`).
 */
export const JOB_WORKFLOW_SUBREQUESTS = 10_000_000;
