import type { Env } from '../../core/config';
import { clock } from '../../core/clock';
import { release } from './instances';

/**
 * The event a data job's Workflow waits for, beside its next look, while it waits for money or for its
 * submitting key's limit (durable-objects/job-workflow.ts): whatever may have ended the wait sends it, so the
 * job looks again now rather than at its next recheck (up to 15 minutes away after a long wait).
 */
export const LOOK_AGAIN_EVENT = 'look-again';

/**
 * Jobs woken by one change at most, those waiting longest first: each wake is two subrequests (the instance, the
 * event) of the request that made the change (a Stripe webhook, a limit set in the dashboard). A long wait's
 * next look is up to 15 minutes away, a new one's 30 s, so the long waits gain most. The rest look again at
 * their recheck.
 */
export const WAKE_AT_ONCE = 100;

/**
 * A waiting job whose next look is further past than this is left out of a wake: its run died (it keeps its
 * status, its old `waiting_since` and a `resume_at` in the past, until the nightly check ends it), and waking it
 * would take a live job's place. A live job's next look is in the future, or a moment past while it looks.
 */
const DEAD_AFTER_MS = 10 * 60_000;

/**
 * Wakes the jobs that wait for money or a key's limit: an organization's (money came: a top-up, a new plan or
 * allowance), or those spending one key's limit (that limit was raised). A job woken in vain looks again and
 * goes back to waiting; one that cannot be reached (it ended meanwhile) is skipped: the wake is a shortcut,
 * its own recheck still comes. Never throws, so the change that woke them stands whatever happens here.
 * Answers the ids woken.
 */
export async function wakeWaitingJobs(env: Env, waitingOn: { organizationId: string } | { budgetKeyId: string }): Promise<string[]> {
  try {
    const [column, value] = 'budgetKeyId' in waitingOn ? (['budget_key_id', waitingOn.budgetKeyId] as const) : (['organization_id', waitingOn.organizationId] as const);
    const { results } = await env.DB.prepare(
      `SELECT id FROM data_jobs WHERE ${column} = ? AND status = 'waiting_for_credits' AND resume_at > ? ORDER BY waiting_since LIMIT ?`,
    )
      .bind(value, clock.now() - DEAD_AFTER_MS, WAKE_AT_ONCE)
      .all<{ id: string }>();
    const failures = await Promise.all(results.map(({ id }) => wake(env, id)));
    const failed = failures.filter((failure) => failure !== null);
    if (failed.length > 0) console.warn(JSON.stringify({ level: 'warn', event: 'jobs_not_woken', ...waitingOn, jobs: failed.length, error: failed[0] }));
    return results.filter((_, index) => failures[index] === null).map(({ id }) => id);
  } catch (error) {
    console.error(JSON.stringify({ level: 'error', event: 'jobs_not_woken', ...waitingOn, error: String(error) }));
    return [];
  }
}

/** Sends the event; answers null, or what stopped it (an instance gone, the binding missing). */
async function wake(env: Env, jobId: string): Promise<string | null> {
  try {
    const instance = await env.DATA_JOBS.get(jobId);
    try {
      await instance.sendEvent({ type: LOOK_AGAIN_EVENT, payload: null });
    } finally {
      release(instance);
    }
    return null;
  } catch (error) {
    return `${jobId}: ${String(error)}`;
  }
}
