import type { Env } from '../../core/config';
import { clock, nowIso } from '../../core/clock';
import { release } from './instances';
import { finishJob } from './run';
import { setStatus } from './store';

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

/** Jobs the nightly check looks at, at most: two subrequests each (the instance, its status). */
const STRANDED_CHECKS = 1_000;
/** A job younger than this is left alone: its instance may be being created as the check runs. */
const STRANDED_AFTER_MS = 60 * 60_000;

/**
 * The nightly check (the api's cron) for jobs Cloudflare will not move on by itself, a random thousand of
 * those not ended a night: one whose instance was never created (a failure between storing the job and
 * creating its instance) gets one, as `npm start` does; one whose run errored (a slice that failed through
 * every retry, the Workflow's 10,000 steps spent) or was terminated ends failed with the run's error as its
 * reason, its key revoked and job.failed sent, the items not run left pending; one whose run completed but
 * is not marked ended is finished. Without it such a job said "running" or "waiting" for good, and its key
 * stayed valid.
 */
export async function reviveStrandedJobs(env: Env): Promise<{ started: string[]; ended: string[] }> {
  const before = new Date(clock.now() - STRANDED_AFTER_MS).toISOString();
  const { results } = await env.DB.prepare(
    "SELECT id FROM data_jobs WHERE status NOT IN ('succeeded', 'failed', 'cancelled') AND created_at < ? ORDER BY RANDOM() LIMIT ?",
  )
    .bind(before, STRANDED_CHECKS)
    .all<{ id: string }>();
  const started: string[] = [];
  const ended: string[] = [];
  for (const { id } of results) {
    // One job's failure (the platform unreachable for it) is logged and leaves the rest to be looked at.
    const outcome = await reviveOne(env, id).catch((error: unknown) => {
      console.error(JSON.stringify({ level: 'error', event: 'job_check_failed', jobId: id, error: String(error) }));
      return null;
    });
    if (outcome === 'started') started.push(id);
    else if (outcome === 'ended') ended.push(id);
  }
  return { started, ended };
}

/** What the nightly check did with one job: started its missing run, ended it, or nothing (null). */
async function reviveOne(env: Env, id: string): Promise<'started' | 'ended' | null> {
  const instance = await env.DATA_JOBS.get(id).catch(() => null);
  if (!instance) {
    release(await env.DATA_JOBS.create({ id, params: { jobId: id } }));
    return 'started';
  }
  try {
    const { status, error } = await instance.status();
    if (status !== 'errored' && status !== 'terminated' && status !== 'complete') return null;
    if (status !== 'complete') {
      const why = error ? `${error.name}: ${error.message}` : status;
      await setStatus(env.DB, id, 'running', `The job's run stopped on the platform (${why}); the items not run stay pending. Submit them again to run them.`, nowIso()).run();
    }
    await finishJob(env, id);
    return 'ended';
  } finally {
    release(instance);
  }
}
