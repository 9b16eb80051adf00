/**
 * A data job (the `agnt` source) as the rest of Sluice sees it. The job runs as one instance of the
 * DATA_JOBS Workflow (durable-objects/job-workflow.ts), whose instance id is the job's id; its state and
 * its items' outcomes are rows in D1 (migrations/0012_data_jobs.sql).
 */
export interface DataJobParams {
  jobId: string;
}

export const JOB_STATUSES = ['queued', 'running', 'waiting_for_credits', 'succeeded', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
/** A job in one of these has ended: its key is revoked and nothing of it runs again. */
export const ENDED_STATUSES: readonly JobStatus[] = ['succeeded', 'failed', 'cancelled'];

export const ITEM_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type ItemStatus = (typeof ITEM_STATUSES)[number];

/**
 * What one slice of a run tells the Workflow to do next. A wait for money or for the submitting key's limit is
 * `wakeable`: a top-up, a plan change or a raised limit ends it early (services/jobs/wake.ts).
 */
export type SliceOutcome = { kind: 'more' } | { kind: 'wait'; ms: number; why: string; wakeable?: true } | { kind: 'done' };
