import type { Env } from '../../core/config';
import { nowIso } from '../../core/clock';
import { JOB_WORKFLOW_SUBREQUESTS, SLICE_ITEMS } from '../../core/protocols/job';
import { CALL_OVERHEAD_SUBREQUESTS, CALL_SUBREQUESTS, type SubrequestBudget } from '../../core/subrequests';
import { setStatus } from './store';

/**
 * A job's run and the subrequests Cloudflare counts over its Workflow instance (JOB_WORKFLOW_SUBREQUESTS). Each
 * call of an item makes at most CALL_SUBREQUESTS through its provider and CALL_OVERHEAD_SUBREQUESTS besides, so
 * every item called once fits with room to spare; but an item is called again after a transient failure (three
 * times more), after a conflict (no attempt counted: a render queue that was full, money held by calls in
 * flight) and when the platform runs its slice again after a fault, and those have no bound of their own. So the
 * run adds up what each slice made and starts a slice only while one tried at its most, every attempt at its
 * most, still fits.
 */

/**
 * A slice's own subrequests besides its items' calls: the job, its items and its key read, the key's limit and
 * the gate's figures asked (twice), the status and the outcomes written, and the Workflow's step and its sleep
 * or wait. About 20.
 */
export const SLICE_OVERHEAD_SUBREQUESTS = 30;

/** The most one slice makes: every item called, each at its most. */
export const MOST_SLICE_SUBREQUESTS = SLICE_ITEMS * (CALL_SUBREQUESTS + CALL_OVERHEAD_SUBREQUESTS) + SLICE_OVERHEAD_SUBREQUESTS;

/**
 * How many times the platform tries a slice again after it throws (the Workflow step's `retries.limit`,
 * durable-objects/job-workflow.ts): a slice may be attempted this many times and once more.
 */
export const SLICE_RETRIES = 10;

/**
 * Kept for the run's end: the stop and the finish, each tried again up to ten times, the finish revoking the key
 * and announcing the job's end to up to 20 webhook endpoints (about 70 a try).
 */
export const RUN_END_SUBREQUESTS = 1_000;

/**
 * What a slice made: its own, and each call's overhead and what its provider took of its budget. A slice run again
 * by the platform (`attempt` above 1) counts each attempt before it at its most, since what those made is lost
 * with them.
 */
export function sliceSubrequests(calls: readonly SubrequestBudget[], attempt: number): number {
  const own = SLICE_OVERHEAD_SUBREQUESTS + calls.reduce((sum, call) => sum + CALL_OVERHEAD_SUBREQUESTS + call.spent, 0);
  return own + Math.max(0, attempt - 1) * MOST_SLICE_SUBREQUESTS;
}

/**
 * The most a slice's step makes over all its attempts: each attempt at most MOST_SLICE_SUBREQUESTS (a retried
 * attempt counts those before it at their most), SLICE_RETRIES + 1 attempts.
 */
export const MOST_SLICE_STEP_SUBREQUESTS = (SLICE_RETRIES + 1) * MOST_SLICE_SUBREQUESTS;

/** Whether a run that has made `spent` may start another slice and still end within its instance's subrequests, however often the slice is tried. */
export function roomForSlice(spent: number): boolean {
  return spent + MOST_SLICE_STEP_SUBREQUESTS + RUN_END_SUBREQUESTS <= JOB_WORKFLOW_SUBREQUESTS;
}

/**
 * What a slice's answer adds to the run's count: its `subrequests`, or, for an answer without a finite figure
 * (one the platform kept from before slices counted theirs, replayed on a resumed run), a slice at its most.
 */
export function countedSubrequests(answer: { subrequests?: unknown }): number {
  const figure = answer.subrequests;
  return typeof figure === 'number' && Number.isFinite(figure) && figure >= 0 ? figure : MOST_SLICE_SUBREQUESTS;
}

/** Ends a run with no room for another slice: the finish then marks the job failed, its items not run pending, saying why. */
export async function stopForSubrequests(env: Env, jobId: string, spent: number): Promise<void> {
  const reason =
    `The job stopped before its run could pass the ${JOB_WORKFLOW_SUBREQUESTS.toLocaleString('en-US')} subrequests Cloudflare allows one run ` +
    `(requests to sites, vendors and storage): it had made about ${spent.toLocaleString('en-US')}, its items' retries included. ` +
    'The items not run stay pending; submit them again as a new job.';
  await setStatus(env.DB, jobId, 'running', reason, nowIso()).run();
}
