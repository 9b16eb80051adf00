import { WorkflowEntrypoint, type WorkflowEvent, type WorkflowStep } from 'cloudflare:workers';
import type { Env } from '../src/core/config';
import type { DataJobParams } from '../src/core/protocols/job';
import { finishJob, runSlice } from '../src/services/jobs/run';

/** A slice that throws (D1 or an object unreachable) is tried again by the platform, backing off. */
const SLICE_STEP = { retries: { limit: 10, delay: '2 seconds', backoff: 'exponential' }, timeout: '10 minutes' } as const;

/**
 * One data job's run, on Cloudflare Workflows: a step per slice of items (src/services/jobs/run.ts),
 * and between slices a durable sleep when the job waits for the rate window, a retry's backoff or money.
 * A step's answer is kept by the platform, so a run that crashes or is evicted resumes at the slice it
 * was in; that slice's items already billed are answered again by the idempotency store, uncharged.
 * Locally Miniflare runs the same Workflow, so `npm start` runs jobs with no account.
 */
export class DataJobWorkflow extends WorkflowEntrypoint<Env, DataJobParams> {
  override async run(event: Readonly<WorkflowEvent<DataJobParams>>, step: WorkflowStep): Promise<void> {
    const { jobId } = event.payload;
    for (let slice = 0; ; slice++) {
      const outcome = await step.do(`slice ${slice}`, SLICE_STEP, () => runSlice(this.env, jobId));
      if (outcome.kind === 'done') break;
      if (outcome.kind === 'wait') await step.sleep(`wait ${slice}`, Math.max(1, Math.ceil(outcome.ms)));
    }
    await step.do('finish', SLICE_STEP, () => finishJob(this.env, jobId));
  }
}
