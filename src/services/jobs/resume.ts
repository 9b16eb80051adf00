import type { Env } from '../../core/config';
import { release } from './instances';

/**
 * Starts again the run of every data job that has not ended, for the local stack (`npm start` calls it
 * through `POST /ops/v1/jobs/resume` once workerd is up). Cloudflare resumes a Workflow instance by itself
 * after a crash or an eviction; Miniflare does not: its engine runs an instance only in the memory of the
 * workerd that started it (it has no alarm for it), so an instance that was running or sleeping when
 * workerd stopped, killed or not, stays 'running' and does nothing. Each such instance is restarted (a
 * job whose instance was never created, a crash between storing the job and creating it, gets one). A
 * restart runs the Workflow from its first step, which for a job is resuming it: every slice reads the
 * pending items from D1, and an item billed before the crash but not yet written is answered again by the
 * idempotency store under its own key, uncharged.
 */
export async function resumeUnfinishedJobs(env: Env): Promise<{ resumed: string[] }> {
  const rows = await env.DB.prepare("SELECT id FROM data_jobs WHERE status NOT IN ('succeeded', 'failed', 'cancelled') ORDER BY created_at").all<{ id: string }>();
  const resumed: string[] = [];
  for (const { id } of rows.results) {
    const instance = await env.DATA_JOBS.get(id).catch(() => null);
    if (instance) {
      await instance.restart();
      release(instance);
    } else release(await env.DATA_JOBS.create({ id, params: { jobId: id } }));
    resumed.push(id);
  }
  return { resumed };
}
