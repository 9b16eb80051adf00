import type { Env } from '../../core/config';
import { nowIso } from '../../core/clock';
import { findJob, type JobRecord, setStatus } from './store';
import { SLICE_ITEMS } from '../../core/protocols/job';
import { revokeJobKey } from './run';

/**
 * Cancels a job that has not ended: its key is revoked at the workspace's gate first, so from that moment
 * no item of it is admitted (an item not started is never started nor charged), then the row says
 * `cancelled`. Items in flight finish, and are billed only if they succeed; the Workflow writes them and
 * stops at its next step. Cancelling an ended job changes nothing.
 *
 * With the status go the items the job never reached: those past the first SLICE_ITEMS still pending, which a
 * slice takes from, so no item in flight is among them. A cancelled job's inputs were otherwise kept for its
 * results' 30 days, and a cancel frees the room unfinished items take (MAX_UNFINISHED_ITEMS): submitting 10 MB
 * and cancelling it again and again stored them without a bound. The first SLICE_ITEMS pending go when the run
 * ends (`finishJob`, the Workflow's last step). The job's counts keep every item.
 */
export async function cancelJob(env: Env, job: JobRecord): Promise<JobRecord> {
  if (job.status === 'succeeded' || job.status === 'failed' || job.status === 'cancelled') return job;
  await revokeJobKey(env, job);
  await env.DB.batch([
    setStatus(env.DB, job.id, 'cancelled', 'Cancelled by request.', nowIso()),
    env.DB.prepare(
      // Only when the status written is the cancel's: a job that ended meanwhile keeps its items (its reason may say to submit them again).
      `DELETE FROM data_job_items WHERE job_id = ?1 AND status = 'pending'
         AND (SELECT status FROM data_jobs WHERE id = ?1) = 'cancelled'
         AND idx > (SELECT idx FROM data_job_items WHERE job_id = ?1 AND status = 'pending' ORDER BY idx LIMIT 1 OFFSET ?2 - 1)`,
    ).bind(job.id, SLICE_ITEMS),
  ]);
  return (await findJob(env.DB, job.id))!;
}

/**
 * Cancels every unfinished job of a workspace being deleted, in one statement whatever their number (a workspace
 * may have thousands waiting): its gate refuses every key of it already (services/workspace-deletion.ts), so no
 * item of them is admitted, and each run stops at its next step as after `cancelJob`. Their pending items stay
 * until the jobs' results are pruned (30 days), as a job's that ended on its own do.
 */
export async function cancelWorkspaceJobs(env: Env, workspaceId: string): Promise<void> {
  await env.DB.prepare(
    `UPDATE data_jobs SET status = 'cancelled', reason = 'Cancelled: its workspace was deleted.', waiting_since = NULL, waiting_on = NULL, finished_at = ?2
      WHERE workspace_id = ?1 AND status IN ('queued', 'running', 'waiting_for_credits')`,
  )
    .bind(workspaceId, nowIso())
    .run();
}
