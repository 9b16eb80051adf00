import type { JobStatus, WaitingOn } from '../../core/protocols/job';

/**
 * How the Jobs page names a job's state, the same on the server and in the script that follows a running job.
 * A wait is named by what it waits for, in one sentence: the API's reason (the refusal of the item that
 * stopped it, a dozen lines naming the key's id) said "credits" under a wait for the key's own limit.
 */
const WAITS: Record<WaitingOn, { label: string; sentence: string }> = {
  money: { label: 'waiting for credits', sentence: "The organization's credit ran out; the job goes on once there is more." },
  plan: { label: 'waiting for a plan', sentence: 'The organization has no plan; the job goes on once it has one.' },
  key_limit: { label: 'waiting on the key limit', sentence: "Its key reached its monthly spend limit; the job goes on once the limit is raised or the month ends." },
};

/** The badge's colour: grey while it runs, green once it succeeded, red for a wait or an end that is not success. */
export const JOB_STATUS_BADGE: Record<JobStatus, string> = {
  queued: 'badge plain',
  running: 'badge plain',
  waiting_for_credits: 'badge off',
  succeeded: 'badge ok',
  failed: 'badge off',
  cancelled: 'badge off',
};

export function jobStatusLabel(status: JobStatus, waitingOn: WaitingOn | null): string {
  return waitingOn ? WAITS[waitingOn].label : status.replaceAll('_', ' ');
}

export function jobReason(reason: string | null, waitingOn: WaitingOn | null): string {
  return waitingOn ? WAITS[waitingOn].sentence : (reason ?? '');
}
