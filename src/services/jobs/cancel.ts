import type { Env } from '../../core/config';
import { nowIso } from '../../core/clock';
import { findJob, type JobRecord, setStatus } from './store';
import { revokeJobKey } from './run';

/**
 * Cancels a job that has not ended: its key is revoked at the workspace's gate first, so from that moment
 * no item of it is admitted (an item not started is never started nor charged), then the row says
 * `cancelled`. Items in flight finish, and are billed only if they succeed; the Workflow writes them and
 * stops at its next step. Cancelling an ended job changes nothing.
 */
export async function cancelJob(env: Env, job: JobRecord): Promise<JobRecord> {
  if (job.status === 'succeeded' || job.status === 'failed' || job.status === 'cancelled') return job;
  await revokeJobKey(env, job);
  await setStatus(env.DB, job.id, 'cancelled', 'Cancelled by request.', nowIso()).run();
  return (await findJob(env.DB, job.id))!;
}
