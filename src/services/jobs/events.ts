import type { Env } from '../../core/config';
import { logEvent } from '../../core/log';
import { newEvent } from '../../core/webhook-events';
import { announce } from '../webhooks/announce';
import { type JobRecord, viewOf } from './store';

/**
 * job.completed (the job ran every item: `succeeded`) or job.failed (it could not, or every item failed),
 * carrying the counts, to the workspace's endpoints that want it. Its id is the job's, so the finishing
 * step run again after a crash sends the same event id, which a receiver drops as a repeat. An endpoint
 * that could not be given it fails the step, whose retry reaches only the endpoints not yet given it.
 * A cancelled job announces nothing: whoever cancelled it knows.
 */
export async function announceJobEnd(env: Env, job: JobRecord): Promise<void> {
  if (job.status !== 'succeeded' && job.status !== 'failed') return;
  const type = job.status === 'succeeded' ? 'job.completed' : 'job.failed';
  const view = viewOf(job);
  // The job's end in the logs too, whether or not an endpoint wants the event: ids and counts, never the key.
  logEvent(job.status === 'succeeded' ? 'info' : 'warn', type, { jobId: job.id, workspaceId: job.workspaceId, status: job.status, counts: view.counts, spentCents: view.spentCents });
  const data = { workspaceId: job.workspaceId, job: view };
  await announce(env, { workspaceId: job.workspaceId }, type, newEvent(type, data, `evt_${job.id.slice('job_'.length)}`));
}
