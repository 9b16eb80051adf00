import type { Env } from '../../core/config';
import { clock, nowIso } from '../../core/clock';
import { findRun, release } from './instances';
import { finishJob } from './run';
import { setReason } from './store';

/**
 * Starts again the run of every data job that has not ended, for the local stack (`npm start` calls it
 * through `POST /ops/v1/jobs/resume` once workerd is up). Cloudflare resumes a Workflow instance by itself
 * after a crash or an eviction; Miniflare does not: its engine runs an instance only in the memory of the
 * workerd that started it (it has no alarm for it), so an instance that was running or sleeping when
 * workerd stopped, killed or not, stays 'running' and does nothing. Each such instance is restarted. A
 * restart runs the Workflow from its first step, which for a job is resuming it: every slice reads the
 * pending items from D1, and an item billed before the crash but not yet written is answered again by the
 * idempotency store under its own key, uncharged. A job with no instance (its submission was answered with
 * an error) is ended, as the nightly check ends it, never started.
 */
export async function resumeUnfinishedJobs(env: Env): Promise<{ resumed: string[] }> {
  const rows = await env.DB.prepare("SELECT id FROM data_jobs WHERE status NOT IN ('succeeded', 'failed', 'cancelled') ORDER BY created_at").all<{ id: string }>();
  const resumed: string[] = [];
  for (const { id } of rows.results) {
    // As the nightly check: only a run the platform says it does not have is missing; any other failure leaves the job as it is.
    const instance = await findRun(env, id).catch((error: unknown) => {
      console.error(JSON.stringify({ level: 'error', event: 'job_resume_failed', jobId: id, error: String(error) }));
      return undefined;
    });
    if (instance === undefined) continue;
    if (instance === null) {
      await endWithoutRun(env, id);
      continue;
    }
    await instance.restart();
    release(instance);
    resumed.push(id);
  }
  return { resumed };
}

/** Jobs the nightly check looks at, at most: two subrequests each (the instance, its status), about ten more for one it ends. */
const STRANDED_CHECKS = 1_000;
/** A job younger than this is left alone: its instance may be being created as the check runs. */
const STRANDED_AFTER_MS = 60 * 60_000;

/** The reason of a job the check ends because its run cannot be found. */
export const MISSING_RUN =
  "The job's run could not be found on the platform (never started, or ended so long ago that the platform no longer keeps it); nothing more runs for it, and the items not run stay pending. Submit them again to run them.";

/**
 * The nightly check (the api's cron) for jobs Cloudflare will not move on by itself: a thousand of those not
 * ended and over an hour old a night, those it looked at least recently (or never) first. A job whose run
 * errored (a slice that failed through every retry, the Workflow's 10,000 steps spent) or was terminated ends
 * failed with the run's error as its reason; one whose run cannot be found ends failed too; either way its key
 * is revoked, job.failed is sent and the items not run stay pending. One whose run completed but is not marked
 * ended is finished. Without it such a job said "running" or "waiting" for good, and its key stayed valid.
 *
 * A missing run is never started here. It is missing because its creation failed after the job was stored
 * (the submitter was answered an error, and may have sent the items again as a new job), or because the
 * platform dropped an ended run after its retention (days): a run started then would call and bill items
 * their owner believes were never accepted, or were told had failed. `checks` bounds a night's work (the
 * cron's subrequests); each job looked at is stamped (`checked_at`) whatever came of it, so with N jobs not
 * ended a stranded one is looked at within N / `checks` nights, and one the platform cannot say about does not
 * keep the others waiting.
 */
export async function reviveStrandedJobs(env: Env, checks = STRANDED_CHECKS): Promise<{ ended: string[] }> {
  const before = new Date(clock.now() - STRANDED_AFTER_MS).toISOString();
  // Never looked at first (NULL sorts first), then the longest ago; stamped before they are looked at.
  const { results } = await env.DB.prepare(
    "SELECT id FROM data_jobs WHERE status NOT IN ('succeeded', 'failed', 'cancelled') AND created_at < ? ORDER BY checked_at, created_at LIMIT ?",
  )
    .bind(before, checks)
    .all<{ id: string }>();
  if (results.length === 0) return { ended: [] };
  await env.DB.prepare('UPDATE data_jobs SET checked_at = ? WHERE id IN (SELECT value FROM json_each(?))')
    .bind(nowIso(), JSON.stringify(results.map((row) => row.id)))
    .run();
  const ended: string[] = [];
  for (const { id } of results) {
    // One job's failure (the platform unreachable for it) is logged and leaves the rest to be looked at.
    const outcome = await checkOne(env, id).catch((error: unknown) => {
      console.error(JSON.stringify({ level: 'error', event: 'job_check_failed', jobId: id, error: String(error) }));
      return null;
    });
    if (outcome === 'ended') ended.push(id);
  }
  return { ended };
}

/** What the nightly check did with one job: ended it, or nothing (null). */
async function checkOne(env: Env, id: string): Promise<'ended' | null> {
  // Only an instance the platform says it does not have is missing; any other failure leaves the job for another night.
  const instance = await findRun(env, id);
  if (!instance) {
    await endWithoutRun(env, id);
    return 'ended';
  }
  try {
    const { status, error } = await instance.status();
    if (status !== 'errored' && status !== 'terminated' && status !== 'complete') return null;
    if (status !== 'complete') {
      const why = error ? `${error.name}: ${error.message}` : status;
      await setReason(env.DB, id, `The job's run stopped on the platform (${why}); the items not run stay pending. Submit them again to run them.`).run();
    }
    await finishJob(env, id);
    return 'ended';
  } finally {
    release(instance);
  }
}

/** Ends a job whose run the platform does not have: failed, `MISSING_RUN` its reason, its key revoked, announced. */
async function endWithoutRun(env: Env, id: string): Promise<void> {
  await setReason(env.DB, id, MISSING_RUN).run();
  await finishJob(env, id);
}
