import type { Env } from '../../core/config';
import { clock, nowIso } from '../../core/clock';
import { ApiError } from '../../core/errors';
import { newId } from '../../core/ids';
import { centsInWords, unitsFromCents } from '../../core/money';
import type { Operation } from '../../core/operation';
import { SLICE_ITEMS, type SliceOutcome, type SliceRun, type WaitingOn } from '../../core/protocols/job';
import { planInForce } from '../../core/protocols/lease';
import { hasExpired, type KeyPrincipal } from '../../core/records';
import { grantStanding } from '../oauth/tokens';
import { gateOf } from '../gate';
import { plansPageUrl } from '../plan-caps';
import { PLAN_TABLE } from '../../core/plans';
import { execute } from '../pipeline';
import { findJob, isEnded, type ItemWrite, type JobRecord, pendingItems, setResumeAt, setStatus, sliceWrites } from './store';
import { operationOfJob } from './operations';
import { Pacer } from './pacer';
import { announceJobEnd } from './events';
import { admitJobHour } from '../runtime-hours';
import { connectionFailure, connectionUse } from '../connections';
import { type IntoRow, writeInto } from './into';
import { SubrequestBudget } from '../../core/subrequests';
import { sliceSubrequests } from './subrequests';

/** What a job's items run through when it names a connection (services/connections.ts). */
type Through = Awaited<ReturnType<typeof connectionUse>>;

/** Items of a slice in flight at once. */
export const CONCURRENCY = 8;
/** A transient failure is tried again this many times, after these waits. */
export const RETRY_BACKOFF_MS = [1_000, 4_000, 16_000] as const;
/**
 * How often a job waiting for money looks again: every 30 s at first (a top-up is usually minutes away), then
 * an eighth of the time it has waited, up to every 15 minutes, so a wait of a month takes about 6,000 of the
 * Workflow's 10,000 steps (at 30 s throughout, they ran out after 42 hours).
 */
export const CREDIT_RECHECK_MS = { first: 30_000, most: 15 * 60_000 } as const;

/** The next look of a job waiting for money, by how long it has waited (`waitingSince`, null: it just began). */
export function creditRecheckMs(waitingSince: string | null, now: number): number {
  const waited = waitingSince === null ? 0 : now - Date.parse(waitingSince);
  return Math.min(CREDIT_RECHECK_MS.most, Math.max(CREDIT_RECHECK_MS.first, Math.round(waited / 8)));
}
/** How often a job past the plan's runtime hours looks again (an upgrade is seen within this). */
export const HOURS_RECHECK_MS = 10 * 60_000;
/**
 * How often a job past its submitting key's monthly limit looks again when nothing wakes it (a raised limit
 * does: services/jobs/wake.ts): it asks the gate only, so the wait costs no runtime hour, request or usage
 * row, and a month of it is about 2,900 looks, 5,800 of the Workflow's 10,000 steps.
 */
export const KEY_LIMIT_RECHECK_MS = 15 * 60_000;

/**
 * A failure that may pass by itself: a vendor's 429 or 5xx (answered 429 or 502 PROVIDER_ERROR), a time
 * limit (502), an unavailable provider (503), our own 500. A vendor's exhausted quota is not: it fails now.
 */
function isTransient(error: ApiError): boolean {
  if (error.code === 'UPSTREAM_CREDITS_EXHAUSTED') return false;
  return error.status >= 500 || (error.status === 429 && error.code === 'PROVIDER_ERROR');
}

/** What became of one item's call. */
type ItemOutcome =
  | { kind: 'written'; write: ItemWrite }
  /** The window or the money stopped it before anything was spent: it stays pending as it was. */
  | { kind: 'pause'; status: 'running' | 'waiting_for_credits'; reason: string; ms: number; on?: WaitingOn }
  /** The job's key is refused: the job was cancelled or has ended. */
  | { kind: 'ended' }
  /** Nothing more can succeed until its owner acts (its connection's vendor account is out of credits): the job stops, saying why. */
  | { kind: 'stop'; reason: string };

/**
 * One step of a job's Workflow: up to SLICE_ITEMS pending items, CONCURRENCY at a time, each through the
 * one pipeline with the job's data_job key and the item as its own idempotency key (`<jobId>:<index>`),
 * so an item run again after a crash is answered from the idempotency store, never billed twice. The
 * outcomes are written in one batch (`sliceWrites`), which the job's counts and spend follow item by item.
 * Answers with the subrequests the slice made, `attempt` (the step's, from 1) counting the tries before it.
 */
export async function runSlice(env: Env, jobId: string, attempt = 1): Promise<SliceRun> {
  const calls: SubrequestBudget[] = [];
  const outcome = await sliceOf(env, jobId, calls);
  return { ...outcome, subrequests: sliceSubrequests(calls, attempt) };
}

/** The slice's work; each item's call is given a subrequest budget of its own, kept in `calls`. */
async function sliceOf(env: Env, jobId: string, calls: SubrequestBudget[]): Promise<SliceOutcome> {
  const job = await findJob(env.DB, jobId);
  if (!job || isEnded(job.status) || !job.keyId) return { kind: 'done' };
  const operation = operationOfJob(job.operation);
  if (!operation) return { kind: 'done' };
  if (job.status === 'queued') await setStatus(env.DB, jobId, 'running', null, nowIso()).run();
  let through: Through | null = null;
  if (job.connectionId) {
    // Deleted since, or its credentials refused by the vendor: every item would fail the same way, so the job stops.
    try {
      through = await connectionUse(env, job.workspaceId, job.connectionId, operation);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      return stopJob(env, jobId, `The job's connection ${job.connectionId} can no longer be used (${error.message}); the items not run stay pending.`);
    }
    if (through.connection.status === 'rejected') {
      return stopJob(env, jobId, `${through.vendor.label} refused the credentials of connection ${job.connectionId}; re-check it (POST /v1/connections/${job.connectionId}/check) or replace it, and submit the items not run again.`);
    }
  }

  const items = await pendingItems(env.DB, jobId, SLICE_ITEMS);
  if (items.length === 0) return { kind: 'done' };
  const now = clock.now();
  // maxCostCents binds the run too: a connection's fee is the plan's in force at each slice, which may have risen
  // since the quote (a trial that lapsed into Pay as you go), so the slice starts no more items than the cap has room for.
  const room = through ? roomUnderCap(job, through.use.feeUnits) : Number.POSITIVE_INFINITY;
  if (room === 0) {
    return stopJob(
      env,
      jobId,
      `The job reached its maxCostCents of ${centsInWords(job.maxCostUnits!)}: it has spent ${centsInWords(job.spentUnits)}, and the connection's fee is now ${centsInWords(through!.use.feeUnits)} an item (the plan changed since the job was quoted). The items not run stay pending; submit them again with a higher maxCostCents.`,
    );
  }
  const ready = items.filter((item) => item.retryAt <= now).slice(0, room);
  if (ready.length === 0) {
    const next = Math.min(...items.map((item) => item.retryAt));
    await setResumeAt(env.DB, jobId, next).run();
    return { kind: 'wait', ms: next - now, why: 'retry backoff' };
  }

  const principal = await jobPrincipal(env.DB, job);
  if (principal === 'revoked') {
    return stopJob(env, jobId, `The API key that submitted this job (${job.budgetKeyId}) was revoked, and the job stopped with it; the items not run stay pending.`);
  }
  if (typeof principal === 'object' && 'grantEnded' in principal) {
    return stopJob(env, jobId, `The MCP client that submitted this job (OAuth grant ${job.grantId}) ${principal.grantEnded}, and the job stopped with it; the items not run stay pending.`);
  }
  if (principal === 'expired') {
    return stopJob(env, jobId, `The API key that submitted this job (${job.budgetKeyId}) expired, and the job stopped with it; the items not run stay pending.`);
  }
  const nextUnits = through ? through.use.feeUnits : quoteOf(operation, ready[0]!.input, env);
  const overLimit = await pastKeyLimit(env, principal, nextUnits);
  if (overLimit) {
    const at = clock.now();
    await env.DB.batch([setResumeAt(env.DB, jobId, at + overLimit.ms), setStatus(env.DB, jobId, 'waiting_for_credits', overLimit.reason, nowIso(), 'key_limit')]);
    return { kind: 'wait', ms: overLimit.ms, why: overLimit.reason, wakeable: true };
  }
  const short = job.status === 'waiting_for_credits' ? await stillShortOfMoney(env, job, principal, nextUnits) : null;
  if (short) {
    // The reason is said again at each look: a wait begun on the key's limit that goes on for money says so.
    const ms = creditRecheckMs(job.waitingSince, clock.now());
    await env.DB.batch([setResumeAt(env.DB, jobId, clock.now() + ms), setStatus(env.DB, jobId, 'waiting_for_credits', short.reason, nowIso(), short.on)]);
    return { kind: 'wait', ms, why: short.reason, wakeable: true };
  }
  const pacer = new Pacer({ resetAt: job.windowResetAt, limit: job.windowLimit, remaining: job.windowRemaining });
  const writes: ItemWrite[] = [];
  let stop = null as Exclude<ItemOutcome, { kind: 'written' }> | null;
  let next = 0;
  const started = clock.now();
  let outOfTime = false;
  /** Runs the next item if the slice may still start one and the window has room for the job; false when not, or nothing is left. */
  const runNext = async (): Promise<boolean> => {
    if (stop !== null || next >= ready.length) return false;
    if (clock.now() - started >= SLICE_STARTS_ITEMS_MS) {
      outOfTime = true;
      return false;
    }
    if (!pacer.take(clock.now())) return false;
    const item = ready[next++]!;
    const subrequests = new SubrequestBudget();
    calls.push(subrequests);
    const outcome = await runItem(env, job, operation, principal, item, pacer, through, subrequests);
    pacer.done();
    if (outcome.kind === 'written') writes.push(outcome.write);
    else stop ??= outcome;
    return true;
  };
  const worker = async () => {
    while (await runNext());
  };
  // The first call of a job that does not know the workspace's limit runs alone: its answer tells it.
  if (!pacer.knowsLimit) await runNext();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));

  // Into the job's table before the outcomes are recorded: a crash between writes them again, as one row each.
  let sinkFailure: string | null = null;
  if (job.intoDatabaseId && job.intoTable) {
    const inputs = new Map(ready.map((item) => [item.idx, item.input]));
    const rows: IntoRow[] = writes.flatMap((write) => (write.status === 'succeeded' ? [{ idx: write.idx, input: inputs.get(write.idx)!, data: write.data }] : []));
    try {
      await writeInto(env, { id: jobId, workspaceId: job.workspaceId, intoDatabaseId: job.intoDatabaseId, intoTable: job.intoTable }, rows);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      sinkFailure = `Results could not be written into table ${job.intoTable} of database ${job.intoDatabaseId} (${error.message}); the job stopped. Its results so far are kept and listed by GET /v1/data/agnt/jobs/${jobId}/results.`;
    }
  }

  const at = clock.now();
  const pause = stop?.kind === 'pause' ? stop : null;
  const stopped = sinkFailure ?? (stop?.kind === 'stop' ? stop.reason : null);
  // Stopped by the window: the job's share of it is spent, it looks again when the window resets.
  const outcome: SliceOutcome =
    stop?.kind === 'ended' || stopped !== null
      ? { kind: 'done' }
      : pause
        ? { kind: 'wait', ms: pause.ms, why: pause.reason, ...(pause.status === 'waiting_for_credits' ? { wakeable: true as const } : {}) }
        : next < ready.length && !outOfTime
          ? { kind: 'wait', ms: pacer.msToReset(at), why: WINDOW_WAIT }
          : { kind: 'more' };
  // A refusal for money may have been the key's limit (the gate checks it first, and both answer 402): asked, not guessed.
  const waitingOn = pause?.on === 'money' && (await pastKeyLimit(env, principal, nextUnits)) ? 'key_limit' : (pause?.on ?? null);
  const reason = stopped ?? (outcome.kind === 'wait' && outcome.why !== 'retry backoff' ? outcome.why : null);
  const resumeAt = outcome.kind === 'wait' ? at + outcome.ms : 0;
  await env.DB.batch(await sliceWrites(env, jobId, writes, { window: pacer.window, resumeAt, status: pause?.status ?? 'running', reason, waitingOn }));
  return outcome;
}

/**
 * How long a slice goes on starting items: its step times out after 10 minutes (job-workflow.ts), and an item's call
 * may take 5 (a scrape's or map's `timeout` at its most), so one started later could be cut off with the slice, which
 * is then run again and counted as a slice at its most (subrequests.ts): a job of slow items would be stopped for
 * subrequests it never made. The items not started go to the next slice.
 */
export const SLICE_STARTS_ITEMS_MS = 4 * 60_000;

const WINDOW_WAIT = "Pacing: the job has used its share of this minute's requests (it leaves a fifth of each window to the workspace's other calls) and goes on when the window resets.";

/**
 * Who a job's items are called as: its data_job key, in its workspace, spending the monthly limit of the key
 * that submitted it, read from D1 at each slice (a limit's change is written there first, and told to the
 * gate, which keeps whichever version is newer).
 */
async function jobPrincipal(db: D1Database, job: JobRecord): Promise<KeyPrincipal | 'revoked' | 'expired' | { grantEnded: string }> {
  if (job.grantId) {
    const ended = await grantEnded(db, job.grantId);
    if (ended) return { grantEnded: ended };
  }
  const budget = job.budgetKeyId
    ? await db
        .prepare('SELECT monthly_limit_units AS limitUnits, limit_version AS version, revoked_at AS revokedAt, expires_at AS expiresAt FROM api_keys WHERE id = ?')
        .bind(job.budgetKeyId)
        .first<{ limitUnits: number | null; version: number; revokedAt: string | null; expiresAt: string | null }>()
    : null;
  if (budget?.revokedAt) return 'revoked';
  // A key made to expire takes its jobs with it, as a revoked one does: its items stop being called as it.
  if (budget && hasExpired(budget)) return 'expired';
  return {
    keyId: job.keyId!,
    scope: 'data_job',
    revoked: false,
    workspaceId: job.workspaceId,
    organizationId: job.organizationId,
    agentId: null,
    ...(job.budgetKeyId && budget ? { budgetKey: { keyId: job.budgetKeyId, monthlyLimit: { limitUnits: budget.limitUnits, version: budget.version } } } : {}),
  };
}

/**
 * Why the OAuth grant that submitted a job may no longer act, as `checkAccessToken` would refuse its tokens; null while
 * it may: revoked (disconnected, or ended as a stolen refresh token), past its life, its person no longer a member, or
 * lacking a second factor the organization requires.
 */
async function grantEnded(db: D1Database, grantId: string): Promise<string | null> {
  const grant = await grantStanding(db, grantId);
  if (!grant || grant.revokedAt) return 'was disconnected';
  if (grant.expiresAt <= clock.now()) return 'expired';
  if (!grant.member) return 'belongs to a person no longer a member of the organization';
  if (grant.lacksTwoFactor) return 'belongs to a person who lacks the two-factor sign-in the organization requires';
  return null;
}

/** The most the next item can cost, from its input as it was validated at submission. */
function quoteOf(operation: Operation, input: string, env: Env): number {
  const parsed = operation.input.safeParse(JSON.parse(input));
  return parsed.success ? operation.price.quote(parsed.data, env) : 0;
}

/**
 * When the submitting key's monthly limit has no room for the next item, the job's wait and why, found by
 * asking the gate (told the limit D1 has first, which it keeps if newer) rather than by calling: a refused call
 * would still count a runtime hour, a request of the window and a usage row, every recheck, for as long as
 * the limit stays as it is.
 */
async function pastKeyLimit(env: Env, principal: KeyPrincipal, nextUnits: number): Promise<{ ms: number; reason: string } | null> {
  const budgetKey = principal.budgetKey;
  if (!budgetKey || budgetKey.monthlyLimit.limitUnits === null) return null;
  const gate = gateOf(env, principal.workspaceId);
  await gate.setKeyLimit(budgetKey.keyId, budgetKey.monthlyLimit);
  const [budget] = await gate.keyBudgets([budgetKey.keyId]);
  if (!budget || budget.limitUnits === null || budget.spentUnits + budget.heldUnits + nextUnits <= budget.limitUnits) return null;
  const reason =
    `The API key that submitted this job (${budgetKey.keyId}) has spent ${centsInWords(budget.spentUnits)} of its monthly spend limit of ${centsInWords(budget.limitUnits)}` +
    `${budget.heldUnits > 0 ? `, and its calls in flight hold ${centsInWords(budget.heldUnits)} more` : ''}; the next item needs ${centsInWords(nextUnits)}. ` +
    `The job goes on when the key's limit is raised or the limit resets on ${new Date(budget.resetsAt).toISOString().slice(0, 10)} (UTC).`;
  return { ms: Math.max(1_000, Math.min(KEY_LIMIT_RECHECK_MS, budget.resetsAt - clock.now())), reason };
}

/**
 * Why a job waiting for money would still be refused it, and what it waits for (a plan or money), or null when
 * its next call may go: the gate's figures (read afresh after a top-up, which tells every gate to forget its own)
 * have no plan in force, or less than the next item's quote. Asked instead of calling, as for the key's limit:
 * a refused call would leave a 402 usage row and a request of the window at every look, a month's wait some
 * 2,900 rows in the workspace's usage. The gate's `meter` refuses on these same figures. A key the gate
 * refuses is left to the call, which ends the job.
 */
async function stillShortOfMoney(env: Env, job: JobRecord, principal: KeyPrincipal, nextUnits: number): Promise<{ reason: string; on: WaitingOn } | null> {
  const figures = await gateOf(env, job.workspaceId).credits(principal.keyId, { organizationId: job.organizationId, workspaceId: job.workspaceId });
  if (figures.revoked) return null;
  const { plan, planEndsAt } = figures.terms;
  if (planInForce(figures.terms, clock.now()) === null) {
    const plans = plansPageUrl(env, job.workspaceId);
    // A plan given for a time (the free trial) that lapsed, or none ever.
    const why = plan && planEndsAt !== null ? `The organization's ${PLAN_TABLE[plan].name} plan ended on ${new Date(planEndsAt).toISOString().slice(0, 10)} (UTC)` : 'This organization has no plan';
    return { reason: `${why}, and a data job's calls need one: choose a plan at ${plans}. The job goes on as soon as a plan starts.`, on: 'plan' };
  }
  const available = figures.balance.subscriptionUnits + figures.balance.purchasedUnits;
  if (available >= nextUnits) return null;
  return {
    reason: `The next item needs ${centsInWords(nextUnits)} but the organization has ${centsInWords(available)} available. The job goes on as soon as credit is added or a plan with an allowance starts.`,
    on: 'money',
  };
}

/** How many items at `feeUnits` each the job's maxCostCents still has room for (no cap, or no fee: no bound). */
function roomUnderCap(job: JobRecord, feeUnits: number): number {
  if (job.maxCostUnits === null || feeUnits <= 0) return Number.POSITIVE_INFINITY;
  return Math.max(0, Math.floor((job.maxCostUnits - job.spentUnits) / feeUnits));
}

/** Ends the job's run with a reason: the Workflow's last step then marks it failed with the items not run pending. */
async function stopJob(env: Env, jobId: string, reason: string): Promise<SliceOutcome> {
  await setStatus(env.DB, jobId, 'running', reason, nowIso()).run();
  return { kind: 'done' };
}

async function runItem(
  env: Env,
  job: JobRecord,
  operation: Operation,
  principal: KeyPrincipal,
  item: { idx: number; input: string; attempts: number },
  pacer: Pacer,
  through: Through | null,
  subrequests: SubrequestBudget,
): Promise<ItemOutcome> {
  const attempts = item.attempts + 1;
  try {
    const outcome = await execute(operation, JSON.parse(item.input), operation.method === 'GET' ? 'query' : 'body', {
      env,
      principal,
      requestId: newId('req'),
      waitUntil: () => {},
      idempotencyKey: { value: `${job.id}:${item.idx}`, field: 'Idempotency-Key', location: 'query' },
      // A job's hours count against the plan's runtimeHours as agents' do.
      admit: () => admitJobHour(env.DB, { jobId: job.id, organizationId: job.organizationId }),
      // Through the job's connection: the workspace's credentials, the plan's fee, the row marked with its id.
      ...(through ? { connection: through.use } : {}),
      subrequests,
    });
    pacer.observe(outcome.headers, clock.now());
    return { kind: 'written', write: { idx: item.idx, status: 'succeeded', data: outcome.data, costUnits: unitsFromCents(outcome.meta.costCents), attempts } };
  } catch (caught) {
    // A vendor's failure through a connection reads as the workspace's own account's (its throttle, its refused credentials).
    const error = through ? await connectionFailure(env.DB, through.connection, through.vendor, caught) : caught;
    const apiError = error instanceof ApiError ? error : new ApiError('INTERNAL_ERROR', 'The call failed unexpectedly.');
    pacer.observe(apiError.headers, clock.now());
    // The workspace's own vendor account is out of credits: every item would fail the same way until its owner tops it
    // up with the vendor, so the job stops here with the rest pending, as it does when the connection is rejected.
    if (through && apiError.code === 'PROVIDER_ERROR' && apiError.status === 402) {
      const pending = `GET /v1/data/agnt/jobs/${job.id}/results?status=pending`;
      return { kind: 'stop', reason: `${apiError.message} The job stopped there, its items not run left pending: top the account up with ${through.vendor.label} and submit them again (${pending} lists them).` };
    }
    return classify(apiError, item.idx, attempts, pacer, job.waitingSince);
  }
}

function classify(error: ApiError, idx: number, attempts: number, pacer: Pacer, waitingSince: string | null): ItemOutcome {
  const now = clock.now();
  // The job's key refused: it ended or was cancelled. (A vendor refusing a connection's credentials is 401 PROVIDER_ERROR: the item's failure.)
  if (error.status === 401 && error.code !== 'PROVIDER_ERROR') return { kind: 'ended' };
  if (error.code === 'RATE_LIMITED') {
    pacer.exhaust(now);
    return { kind: 'pause', status: 'running', reason: 'The workspace used its requests for this minute; the job goes on when the window resets.', ms: pacer.msToReset(now) };
  }
  if (error.code === 'INSUFFICIENT_CREDITS' || error.code === 'SUBSCRIPTION_REQUIRED') {
    const on = error.code === 'SUBSCRIPTION_REQUIRED' ? 'plan' : 'money';
    return { kind: 'pause', status: 'waiting_for_credits', reason: error.message, ms: creditRecheckMs(waitingSince, now), on };
  }
  if (error.code === 'PLAN_LIMIT_REACHED') {
    // The plan's runtime hours are used up: the job waits, saying so, until an upgrade or the month's end.
    return { kind: 'pause', status: 'running', reason: error.message, ms: HOURS_RECHECK_MS };
  }
  if (error.code === 'CONFLICT' && error.retryAfter !== undefined) {
    // Money held by calls in flight, or this item's own first call still running (soon again) or lost (when
    // its claim lapses): again after retryAfter, not counted as an attempt.
    return { kind: 'written', write: { idx, status: 'pending', attempts: attempts - 1, retryAt: now + error.retryAfter * 1000 } };
  }
  if (error.answerGone) {
    // The item's first call, on a run of its slice that stopped before writing it, succeeded and was charged, and
    // its answer is gone (too large to keep, or lost with that run): it succeeded, as that run would have written it.
    return { kind: 'written', write: { idx, status: 'succeeded', data: null, costUnits: error.answerGone.costUnits, attempts, goneBytes: error.answerGone.answerBytes } };
  }
  if (isTransient(error) && attempts <= RETRY_BACKOFF_MS.length) {
    // No sooner than the vendor (or the spec's 502) said to wait: its Retry-After, when longer than the backoff.
    const wait = Math.max(RETRY_BACKOFF_MS[attempts - 1]!, (error.retryAfter ?? 0) * 1000);
    return { kind: 'written', write: { idx, status: 'pending', attempts, retryAt: now + wait } };
  }
  return { kind: 'written', write: { idx, status: 'failed', code: error.code, message: error.message, attempts } };
}

/**
 * The Workflow's last step: the job's key revoked (the gate first, so the very next request with it is
 * 401), its end status and its event announced (unless `announce` is false: a job whose submission was answered
 * with an error). Run again after a crash it changes nothing twice.
 */
export async function finishJob(env: Env, jobId: string, options: { announce?: boolean } = {}): Promise<void> {
  const job = await findJob(env.DB, jobId);
  if (!job) return;
  // The key before the end status: were the revocation to fail, the job is not yet ended, so whatever runs this
  // again (the step's retry, the nightly check) still finds it and revokes the key.
  await revokeJobKey(env, job);
  // A cancelled job's run has ended: the items it kept for a slice that might have been in flight go now, not
  // with its results 30 days on (submitting up to 10 MB of inputs and cancelling, again and again, kept them all).
  if (job.status === 'cancelled') await env.DB.prepare("DELETE FROM data_job_items WHERE job_id = ? AND status = 'pending'").bind(jobId).run();
  if (!isEnded(job.status)) {
    const pending = job.items - job.succeeded - job.failed;
    const failed = pending > 0 || job.succeeded === 0;
    const reason = pending > 0 ? (job.reason ?? 'The job stopped before every item ran.') : job.succeeded === 0 ? 'Every item failed.' : null;
    await setStatus(env.DB, jobId, failed ? 'failed' : 'succeeded', reason, nowIso()).run();
  }
  if (options.announce === false) return;
  const ended = (await findJob(env.DB, jobId))!;
  await announceJobEnd(env, ended);
}

/** The key dies with its run: refused by the gate from the next request, and marked revoked in D1. */
export async function revokeJobKey(env: Env, job: JobRecord): Promise<void> {
  if (!job.keyId) return;
  await gateOf(env, job.workspaceId).revoke(job.keyId);
  await env.DB.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').bind(nowIso(), job.keyId).run();
}
