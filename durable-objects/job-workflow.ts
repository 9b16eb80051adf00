import { WorkflowEntrypoint, type WorkflowEvent, type WorkflowStep } from 'cloudflare:workers';
import type { Env } from '../src/core/config';
import type { DataJobParams } from '../src/core/protocols/job';
import { release } from '../src/services/jobs/instances';
import { finishJob, runSlice } from '../src/services/jobs/run';
import { countedSubrequests, roomForSlice, SLICE_RETRIES, stopForSubrequests } from '../src/services/jobs/subrequests';
import { LOOK_AGAIN_EVENT } from '../src/services/jobs/wake';

/** A slice that throws (D1 or an object unreachable) is tried again by the platform, backing off. */
const SLICE_STEP = { retries: { limit: SLICE_RETRIES, delay: '2 seconds', backoff: 'exponential' }, timeout: '10 minutes' } as const;

/**
 * Waits `ms`, or less when something that may end a wait for money (a top-up, a plan change, a raised key
 * limit) sends the look-again event: either way the next slice looks again. A wait that times out throws
 * (WorkflowTimeoutError, which reaches this code through an RPC boundary with its message and not always its
 * name, and whose shape on Cloudflare's own engine is not documented), and ends as its timeout would. The
 * engine's own aborts (a pause, a restart, a termination: "Aborting engine: ...") go on up. Any other error
 * is logged and the wait is made a plain sleep of the same time: taken for a real failure it would have left
 * the instance errored and the job waiting for good, and taken for a timeout an error that came at once, again
 * and again, would have run look after look with no wait between, spending the run's steps and a look's calls
 * in minutes. Were Cloudflare's timeout of yet another shape, a wait would last twice its time, logged.
 */
export async function lookAgainAfter(step: Pick<WorkflowStep, 'waitForEvent' | 'sleep'>, name: string, ms: number): Promise<void> {
  try {
    release(await step.waitForEvent(name, { type: LOOK_AGAIN_EVENT, timeout: ms }));
  } catch (error) {
    const { name: kind, message } = error instanceof Error ? error : { name: 'unknown', message: String(error) };
    if (message.startsWith(ENGINE_ABORT)) throw error;
    if (kind === 'WorkflowTimeoutError' || TIMED_OUT.test(message)) return;
    console.warn(JSON.stringify({ level: 'warn', event: 'job_wait_ended_by_error', step: name, error: `${kind}: ${message}`, then: `a sleep of ${ms} ms` }));
    await step.sleep(`${name} after error`, ms);
  }
}

/** What a wait's timeout says, by name or by message, whichever survived the RPC crossing. */
const TIMED_OUT = /WorkflowTimeoutError|timed out/i;

/** How the Workflow engine's own aborts begin (Miniflare's ABORT_PREFIX): they end the run, not a wait. */
const ENGINE_ABORT = 'Aborting engine:';

/**
 * One data job's run, on Cloudflare Workflows: a step per slice of items (src/services/jobs/run.ts),
 * and between slices a durable sleep when the job waits for the rate window or a retry's backoff, and a
 * wait that the look-again event may cut short when it waits for money or its key's limit.
 * A step's answer is kept by the platform, so a run that crashes or is evicted resumes at the slice it
 * was in; that slice's items already billed are answered again by the idempotency store, uncharged.
 * Locally Miniflare runs the same Workflow, so `npm start` runs jobs with no account.
 */
export class DataJobWorkflow extends WorkflowEntrypoint<Env, DataJobParams> {
  override async run(event: Readonly<WorkflowEvent<DataJobParams>>, step: WorkflowStep): Promise<void> {
    await runJob(this.env, event.payload.jobId, step);
  }
}

/**
 * The run's steps. Locally the step is Miniflare's engine, reached by RPC, so what each step answers is an RPC
 * result that holds the callback it carried until it is let go of, once read (`release`); an answer that is plain
 * data is left as it is. The subrequests its slices made are added up (each step's answer is kept by the
 * platform, so a run resumed adds up the same; an answer kept from before slices counted theirs counts as a
 * slice at its most), and a slice starts only while one tried as often as the step allows, each try at its
 * most, still fits in the instance's: past that the run stops, and the job ends failed saying why, its items not run pending.
 */
export async function runJob(env: Env, jobId: string, step: Pick<WorkflowStep, 'do' | 'sleep' | 'waitForEvent'>): Promise<void> {
  let subrequests = 0;
  for (let slice = 0; ; slice++) {
    if (!roomForSlice(subrequests)) {
      release(await step.do('stop', SLICE_STEP, () => stopForSubrequests(env, jobId, subrequests)));
      break;
    }
    const outcome = await step.do(`slice ${slice}`, SLICE_STEP, (context) => runSlice(env, jobId, context?.attempt ?? 1));
    release(outcome);
    subrequests += countedSubrequests(outcome);
    if (outcome.kind === 'done') break;
    if (outcome.kind !== 'wait') continue;
    const ms = Math.max(1, Math.ceil(outcome.ms));
    if (outcome.wakeable) await lookAgainAfter(step, `wait ${slice}`, ms);
    else await step.sleep(`wait ${slice}`, ms);
  }
  release(await step.do('finish', SLICE_STEP, () => finishJob(env, jobId)));
}
