import type { Env } from '../../core/config';
import { release } from './instances';

/**
 * The event a data job's Workflow waits for, beside its next look, while it waits for money or for its
 * submitting key's limit (durable-objects/job-workflow.ts): whatever may have ended the wait sends it, so the
 * job looks again now rather than at its next recheck (up to 15 minutes away after a long wait).
 */
export const LOOK_AGAIN_EVENT = 'look-again';

/**
 * Jobs woken by one change at most, the latest to start waiting first (a job whose run died keeps its
 * status and its old `waiting_since`, and must not take the place of live ones): each wake is a subrequest
 * of the request that made the change (a Stripe webhook, a limit set in the dashboard). The rest look again
 * at their recheck.
 */
export const WAKE_AT_ONCE = 100;

/**
 * Wakes the jobs that wait for money or a key's limit: an organization's (money came: a top-up, a new plan or
 * allowance), or those spending one key's limit (that limit was raised). A job woken in vain looks again and
 * goes back to waiting; one that cannot be reached (it ended meanwhile) is skipped: the wake is a shortcut,
 * its own recheck still comes. Never throws, so the change that woke them stands whatever happens here.
 * Answers the ids woken.
 */
export async function wakeWaitingJobs(env: Env, waitingOn: { organizationId: string } | { budgetKeyId: string }): Promise<string[]> {
  try {
    const statement =
      'budgetKeyId' in waitingOn
        ? env.DB.prepare("SELECT id FROM data_jobs WHERE budget_key_id = ? AND status = 'waiting_for_credits' ORDER BY waiting_since DESC LIMIT ?").bind(waitingOn.budgetKeyId, WAKE_AT_ONCE)
        : env.DB.prepare("SELECT id FROM data_jobs WHERE organization_id = ? AND status = 'waiting_for_credits' ORDER BY waiting_since DESC LIMIT ?").bind(waitingOn.organizationId, WAKE_AT_ONCE);
    const { results } = await statement.all<{ id: string }>();
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
