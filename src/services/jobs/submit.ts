import { z } from '@hono/zod-openapi';
import type { Env } from '../../core/config';
import { clock, nowIso } from '../../core/clock';
import { ApiError, type ErrorDetail } from '../../core/errors';
import { newId } from '../../core/ids';
import { centsInWords, unitsFromCents } from '../../core/money';
import { planInForce } from '../../core/protocols/lease';
import type { Operation } from '../../core/operation';
import type { KeyPrincipal } from '../../core/records';
import { detailsFromZod } from '../../core/validation';
import { MAX_REQUEST_BODY_BYTES } from '../../core/request-body';
import { createKey, revokeKey } from '../accounts';
import { canonicalize, sha256Hex } from '../../core/digest';
import { IDEMPOTENCY_KEY_HEADER } from '../idempotency';
import { gateOf } from '../gate';
import { walletOf } from '../wallet';
import { revokedKeyError } from '../auth';
import { plansPageUrl, subscriptionRequired } from '../plan-caps';
import { operationOfJob } from './operations';
import { insertJob, type JobRecord, type JobView, jobOfIdempotencyKey, releaseIdempotencyKey, viewOf, findJob, setReason, unfinishedItems } from './store';
import { finishJob } from './run';
import { JobInto, prepareInto } from './into';
import { connectionUse } from '../connections';
import { release, runExists } from './instances';
import { JOBS_PATH, MAX_JOB_ITEMS } from '../../core/protocols/job';
import { missingSettings } from '../../operations/availability';
import { normalizeUpstream } from '../../providers/normalize';

/** The most POST /v1/data/agnt/jobs reads: 10,000 inputs of about 1 KB each. The rest of the API keeps 1 MB. */
export const MAX_JOB_BODY_BYTES = 10 * 1024 * 1024;
/** At most this many invalid items are named in one refusal. */
const MAX_DETAILS = 100;
/**
 * An item's input, as JSON, carries at most what a synchronous call's body may (1 MB). A larger one passed the
 * body's bound and the operation's schema (a scrape's `includeTags` has no length) and then failed D1's own
 * bound on a value (2,000,000 bytes) as a 500 that a retry would meet again.
 */
const MAX_ITEM_BYTES = MAX_REQUEST_BODY_BYTES;
const encoder = new TextEncoder();

export const JobSubmission = z
  .object({
    operation: z.string().min(1).openapi({ description: "The operation every input is run through, as '<slug>/<operation>' (see GET /v1/platforms).", example: 'linkedin/get-company-by-domain' }),
    inputs: z
      .array(z.record(z.string(), z.unknown()))
      .min(1)
      .max(MAX_JOB_ITEMS)
      .openapi({ description: "1 to 10,000 objects, each the operation's own input: its query parameters (GET) or JSON body (POST), at most 1 MB as JSON.", example: [{ domain: 'stripe.com' }, { domain: 'apple.com' }] }),
    name: z.string().trim().min(1).max(200).optional().openapi({ description: 'A name to know the job by.', example: 'Q4 enrichment' }),
    maxCostCents: z.number().nonnegative().optional().openapi({ description: 'Refuse the job (402) if its quote, the most it can cost, is above this.', example: 100 }),
    connectionId: z
      .string()
      .min(1)
      .optional()
      .openapi({
        description:
          "Run every item through this connection of the workspace (GET /v1/connections): the workspace's own vendor credentials, each success charged the plan's platform fee instead of the operation's price (the quote uses the fee). Its vendor must serve the operation: 404 ENDPOINT_NOT_FOUND names the vendors that do.",
        example: 'con_5f1c2a9b7d3e4f6a8b0c1d2e',
      }),
    into: JobInto.optional(),
  })
  .strict()
  .openapi('JobSubmission');
export type JobSubmission = z.infer<typeof JobSubmission>;

/** Who submits a job: a key of the workspace (REST, MCP), or a member signed in to the dashboard (no key). */
export type JobSubmitter = Pick<KeyPrincipal, 'organizationId' | 'workspaceId' | 'monthlyLimit' | 'grant'> & { keyId: string | null };

/**
 * Submits a job: every refusal comes before anything is stored or queued. The inputs are validated each
 * against the operation's own schema (details name `inputs[<i>].<field>`), the quote is the sum of each
 * item's quote (through a connection, the plan's fee per item), the plan and the balance are the gate's (as
 * a metered call sees them), and last an `into` table is checked (made if missing). Then the job and its
 * items are stored in one batch, its data_job key minted (never shown: the Workflow reads the key's id from
 * the job's row) and its Workflow instance created under the job's id.
 */
export async function submitJob(env: Env, principal: JobSubmitter, submission: JobSubmission, once?: { key: string; digest: string }): Promise<JobView> {
  const operation = operationOfJob(submission.operation);
  if (!operation) {
    throw new ApiError(
      'ENDPOINT_NOT_FOUND',
      `No operation '${submission.operation}'. Name one as '<slug>/<operation>', e.g. 'linkedin/get-company-by-domain'; GET /v1/platforms lists them.`,
    );
  }
  // Through a connection: 404 for one the workspace does not have, 404 ENDPOINT_NOT_FOUND when its vendor does not serve the operation.
  const through = submission.connectionId === undefined ? null : await connectionUse(env, principal.workspaceId, submission.connectionId, operation);
  const details: ErrorDetail[] = [];
  let quotedUnits = 0;
  let cheapestUnits = Number.POSITIVE_INFINITY;
  const location = operation.method === 'GET' ? 'query' : 'body';
  submission.inputs.forEach((input, index) => {
    const bytes = encoder.encode(JSON.stringify(input)).byteLength;
    if (bytes > MAX_ITEM_BYTES) {
      if (details.length < MAX_DETAILS) {
        details.push({ field: `inputs[${index}]`, location: 'body', message: `This input is ${(bytes / 1024 / 1024).toFixed(1)} MB as JSON; an item's input is at most 1 MB, as a synchronous call's body is.` });
      }
      return;
    }
    const parsed = operation.input.safeParse(input);
    if (!parsed.success) {
      if (details.length < MAX_DETAILS) {
        for (const detail of detailsFromZod(parsed.error, location)) {
          const field = detail.field === location ? `inputs[${index}]` : `inputs[${index}].${detail.field}`;
          details.push({ field, location: 'body', message: detail.message });
        }
      }
      return;
    }
    const refused = checked(operation, parsed.data, through ? through.use.env : env);
    if (refused) {
      for (const detail of refused) if (details.length < MAX_DETAILS) details.push({ ...detail, field: `inputs[${index}].${detail.field}`, location: 'body' });
      return;
    }
    const quote = through ? through.use.feeUnits : operation.price.quote(parsed.data, env);
    quotedUnits += quote;
    cheapestUnits = Math.min(cheapestUnits, quote);
  });
  if (details.length > 0) throw ApiError.validation(details.slice(0, MAX_DETAILS));

  const maxCostUnits = submission.maxCostCents === undefined ? null : unitsFromCents(submission.maxCostCents);
  // A key's submission is checked by its workspace's gate (revoked there, or not); a person's, from the dashboard, by the wallet's own figures.
  const credits =
    principal.keyId === null
      ? { revoked: false as const, ...(await walletOf(env, principal.organizationId).summary(principal.workspaceId)) }
      : await gateOf(env, principal.workspaceId).credits(principal.keyId, { organizationId: principal.organizationId, workspaceId: principal.workspaceId });
  if (credits.revoked) throw revokedKeyError(env);
  if (!planInForce(credits.terms, clock.now())) throw subscriptionRequired('data jobs', plansPageUrl(env, principal.workspaceId));
  if (maxCostUnits !== null && quotedUnits > maxCostUnits) {
    throw new ApiError(
      'INSUFFICIENT_CREDITS',
      `This job's quote is ${centsInWords(quotedUnits)} (${submission.inputs.length} items at most), above its maxCostCents of ${centsInWords(maxCostUnits)}. Raise maxCostCents or send fewer inputs; nothing was queued.`,
    );
  }
  const available = credits.balance.purchasedUnits + credits.balance.subscriptionUnits - credits.balance.heldUnits;
  if (available < cheapestUnits) {
    throw new ApiError(
      'INSUFFICIENT_CREDITS',
      `One item of this job costs up to ${centsInWords(cheapestUnits)} but the organization has ${centsInWords(Math.max(0, available))} available; the whole job is quoted at ${centsInWords(quotedUnits)}. Top up to run it; nothing was queued.`,
    );
  }

  const waiting = await unfinishedItems(env.DB, principal.workspaceId);
  if (waiting + submission.inputs.length > MAX_UNFINISHED_ITEMS) throw tooManyWaiting(waiting, submission.inputs.length);

  // Last of the checks, as it makes the table: a refusal above leaves the database as it was.
  if (submission.into) await prepareInto(env, principal.workspaceId, submission.into);

  const job: JobRecord = {
    id: newId('job'),
    organizationId: principal.organizationId,
    workspaceId: principal.workspaceId,
    operation: submission.operation,
    name: submission.name ?? null,
    status: 'queued',
    reason: null,
    items: submission.inputs.length,
    succeeded: 0,
    failed: 0,
    spentUnits: 0,
    quotedUnits,
    maxCostUnits,
    keyId: null,
    // Its items count in the submitting API key's monthly limit and spend (the gate's, by this id); an OAuth
    // grant, which has no limit (and no api_keys row), leaves none.
    budgetKeyId: principal.monthlyLimit ? principal.keyId : null,
    // An OAuth grant's job stops when the grant ends, as an API key's stops when the key is revoked.
    grantId: principal.grant ? principal.keyId : null,
    connectionId: submission.connectionId ?? null,
    intoDatabaseId: submission.into?.databaseId ?? null,
    intoTable: submission.into?.table ?? null,
    windowResetAt: 0,
    windowLimit: 0,
    windowRemaining: 0,
    resumeAt: 0,
    createdAt: nowIso(),
    startedAt: null,
    finishedAt: null,
    resultsPrunedAt: null,
    waitingSince: null,
    waitingOn: null,
  };
  // The key first, so the row names it from the start; its secret is dropped here and never stored in the clear.
  const key = await createKey(env.DB, env.KEY_ENCRYPTION_KEY, { workspaceId: job.workspaceId, scope: 'data_job', name: `data job ${job.id}` });
  job.keyId = key.id;
  try {
    // Counted again in the write: submissions at once cannot both take the last of the room checked above.
    if (!(await insertJob(env.DB, job, submission.inputs, once, MAX_UNFINISHED_ITEMS))) throw tooManyWaiting(await unfinishedItems(env.DB, principal.workspaceId), submission.inputs.length);
  } catch (error) {
    // Not stored (no room left, another submission took the Idempotency-Key a moment before, D1 failed): its key goes with it.
    await revokeKey(env, key.id).catch((reason: unknown) => console.error(JSON.stringify({ level: 'error', event: 'job_key_not_revoked', keyId: key.id, error: String(reason) })));
    throw error;
  }
  try {
    release(await env.DATA_JOBS.create({ id: job.id, params: { jobId: job.id } }));
  } catch (error) {
    // A create whose answer was lost may have made the run all the same: then the job is accepted as usual.
    const made = await runExists(env, job.id);
    if (made) return viewOf((await findJob(env.DB, job.id))!);
    console.error(JSON.stringify({ level: 'error', event: 'job_not_started', jobId: job.id, known: made === false, error: String(error) }));
    // The submitter is answered the error and may send the items again: a job with no run must never start
    // behind its back, so it ends now, failed, its key revoked, unannounced (nobody was told its id). When
    // the platform could not say, the job is left for the nightly check to end once it knows (resume.ts), and
    // the answer names it: it may be running, and a client that sent the items again would pay twice.
    if (made === false) {
      // Its Idempotency-Key is let go with it, so that the one retry the answer asks for runs afresh.
      await env.DB.batch([setReason(env.DB, job.id, NOT_STARTED), releaseIdempotencyKey(env.DB, job.id)]);
      await finishJob(env, job.id, { announce: false }).catch((reason: unknown) =>
        console.error(JSON.stringify({ level: 'error', event: 'job_not_ended', jobId: job.id, error: String(reason) })),
      );
      throw new ApiError('INTERNAL_ERROR', 'The platform did not start the job: none of its items ran and nothing was charged. Submit it again once, after a short wait.');
    }
    throw new ApiError(
      'INTERNAL_ERROR',
      `Job ${job.id} was stored, but the platform did not confirm that its run started: it may be running. Do not submit its items again as they are: cancel it first (POST ${JOBS_PATH}/${job.id}/cancel, or the dashboard's Jobs page), after which none of its items not yet started runs or is charged, then submit again those its results show pending.${once ? ` Sending this submission again with the same ${IDEMPOTENCY_KEY_HEADER} is safe: it is answered this job and queues no other.` : ''}`,
    );
  }
  return viewOf((await findJob(env.DB, job.id))!);
}

/**
 * A submission, with the Idempotency-Key it was sent with (without one it is `submitJob`'s). The first with a
 * key makes the job under it; a retry with the same key and the same submission (by SHA-256 of its canonical
 * JSON) is answered that job as it is now, and makes nothing, so a client that lost the answer cannot run and
 * pay for the items twice; the same key with another submission is refused. A refused submission stores
 * nothing, so its retry is checked afresh.
 */
export async function submitJobOnce(env: Env, principal: JobSubmitter, submission: JobSubmission, key: string | undefined): Promise<{ view: JobView; replayed: boolean }> {
  if (key === undefined) {
    refuseUnconfigured(submission, (operation) => missingSettings(operation, env));
    return { view: await submitJob(env, principal, submission), replayed: false };
  }
  const digest = await sha256Hex(JSON.stringify(canonicalize(submission)));
  const earlier = await jobSubmittedAs(env, principal.workspaceId, key, digest);
  if (earlier) return { view: earlier, replayed: true };
  // After the replay: a job already made under the key is answered whatever the settings are now.
  refuseUnconfigured(submission, (operation) => missingSettings(operation, env));
  try {
    return { view: await submitJob(env, principal, submission, { key, digest }), replayed: false };
  } catch (error) {
    // Two submissions with the key at once: the one whose insert lost answers as the other's retry.
    const winner = String(error).includes('UNIQUE constraint failed') ? await jobSubmittedAs(env, principal.workspaceId, key, digest) : null;
    if (winner) return { view: winner, replayed: true };
    throw error;
  }
}

async function jobSubmittedAs(env: Env, workspaceId: string, key: string, digest: string): Promise<JobView | null> {
  const earlier = await jobOfIdempotencyKey(env.DB, workspaceId, key);
  if (!earlier) return null;
  if (earlier.digest !== digest) {
    throw new ApiError('CONFLICT', `This ${IDEMPOTENCY_KEY_HEADER} was sent with another submission in this workspace, which made job ${earlier.id}. Send a new key for a new job; nothing was queued.`);
  }
  return viewOf((await findJob(env.DB, earlier.id))!);
}

function tooManyWaiting(waiting: number, items: number): ApiError {
  return ApiError.conflict(
    `This workspace's jobs have ${waiting} items still to run, and at most ${MAX_UNFINISHED_ITEMS} wait at once; this job's ${items} would pass that. Wait for them to finish, or cancel a job; nothing was queued.`,
  );
}

/** The reason of a job whose run the platform did not create: it ended at once, nothing run. */
const NOT_STARTED = 'The platform did not start this job, and its submission was answered with an error: none of its items ran. Submit them again.';

/**
 * Items a workspace's unfinished jobs may hold at once: ten full jobs. Each waits in D1 with its input until it
 * runs, at the pace of the workspace's window; without a bound, submissions could queue more than runs.
 */
export const MAX_UNFINISHED_ITEMS = 100_000;

/**
 * An operation this installation has no settings for (its vendor's key, DataForSEO's login) would fail every
 * item, after their retries: refused before anything is queued, as the synchronous call is, 503
 * PROVIDER_UNAVAILABLE naming the settings. The settings are the api worker's, which serves REST and MCP and runs
 * the jobs (`missingSettings` of its env); the dashboard, given only the secrets its own code reads, asks the api
 * worker for them (`missingOf`, through its API binding). A job through a connection brings its own credentials.
 */
export function refuseUnconfigured(submission: JobSubmission, missingOf: (operation: Operation) => readonly string[]): void {
  const operation = operationOfJob(submission.operation);
  if (!operation || submission.connectionId !== undefined) return;
  const missing = missingOf(operation);
  if (missing.length > 0) throw normalizeUpstream.unavailable(submission.operation, [...missing]);
}

/** The operation's own checks beyond its schema (`Operation.check`), as details; undefined when the input passes. */
function checked(operation: Operation, input: Record<string, unknown>, env: Env): ErrorDetail[] | undefined {
  try {
    operation.check?.(input, env);
    return undefined;
  } catch (error) {
    if (error instanceof ApiError && error.code === 'VALIDATION_ERROR' && error.details) return error.details;
    throw error;
  }
}
