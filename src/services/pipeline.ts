import type { Balance } from '../core/protocols/lease';
import type { Admission, SettleAnswer, Shortfall } from '../core/protocols/gate';
import { freshnessOf, operationId, operationIdThrough, timeLimitOf, type Operation } from '../core/operation';
import type { KeyPrincipal } from '../core/records';
import { clock } from '../core/clock';
import { revokedKeyError } from './auth';
import type { Env } from '../core/config';
import type { Meta } from '../core/envelope';
import { ApiError, type ErrorLocation } from '../core/errors';
import { gateOf, knownExhausted, rateLimitHeaders, rememberExhausted, secondsUntilReset } from './gate';
import { chargeOfCall } from './call-charges';
import { claimIdempotencyKey, readIdempotencyKey, replayOf, type SentIdempotencyKey } from './idempotency';
import { newCallId } from '../core/ids';
import { centsFromUnits, centsInWords } from '../core/money';
import { plansPageUrl, subscriptionRequired } from './plan-caps';
import { answerFromCache, lookUpAnswer } from './response-cache';
import { detailsFromZod } from '../core/validation';
import type { UsageRow } from '../core/usage';
import { SubrequestBudget } from '../core/subrequests';

/** Everything a surface (REST or MCP) hands the pipeline about the call it received. */
export interface Call {
  env: Env;
  principal: KeyPrincipal;
  requestId: string;
  waitUntil(promise: Promise<unknown>): void;
  /** Aborted when the client goes away, so the upstream call stops and the hold is released. */
  signal?: AbortSignal;
  /** The Idempotency-Key header (REST) or `_meta.idempotency_key` (MCP), when the caller sent one. */
  idempotencyKey?: SentIdempotencyKey;
  /**
   * A surface's own rule (the runtime hours an agent's or a data job's calls count in): run once the call
   * has its window slot and its money held, just before the upstream is asked, so a call refused by the
   * window or the wallet counts no hour (a job waiting for a top-up rechecks by calling). An ApiError it
   * throws is refused like any other: the hold given back, recorded, uncharged. A sandbox call runs it first.
   */
  admit?: () => Promise<void>;
  /** Answers in place of the vendor and the wallet once the input is valid: a sandbox key's call (services/sandbox.ts). */
  instead?: (input: Record<string, unknown>, usage: UsageOf) => Promise<Outcome>;
  /** A call through one of the workspace's connections (services/connections.ts): its credentials, the plan's fee. */
  connection?: ConnectionUse;
  /** The provider's subrequest budget, when the caller counts what the call made (a data job's item); else the call's own. */
  subrequests?: SubrequestBudget;
}

/** The workspace's own vendor account a call goes through: settings carrying its credentials, and the fee charged instead of the price. */
export interface ConnectionUse {
  id: string;
  env: Env;
  feeUnits: number;
}

export interface Outcome {
  data: unknown;
  message?: string;
  meta: Meta;
  /** RateLimit-* headers of the window this call was counted in. */
  headers: Record<string, string>;
}

type Gate = ReturnType<typeof gateOf>;
export type UsageOf = (status: number, errorCode: string | null, costUnits: number, cached?: boolean) => UsageRow;

/**
 * The one path every metered call takes: validate, then one message to the workspace's gate (key still
 * valid, plan, window, money set aside), the provider (or the response cache), then one message to the
 * gate that settles the call and stores its usage row before the answer leaves. Every non-success is
 * billed zero. Failures are thrown as ApiError carrying the rate-limit headers. A call with an
 * idempotency key first claims it: a retry of a success gets that answer again, uncharged.
 */
export async function execute(operation: Operation, rawInput: unknown, location: ErrorLocation, call: Call): Promise<Outcome> {
  const started = Date.now();
  const { env, principal } = call;
  const gate = gateOf(env, principal.workspaceId);
  // The call's id (its usage row's and its hold's): a retry that takes over a dead call's idempotency claim uses that call's.
  let usageId = newCallId();
  const usage: UsageOf = (status, errorCode, costUnits, cached = false) => usageRow(call, operation, usageId, { status, errorCode, costUnits, cached }, started);
  const refuse = (error: ApiError) => refused(call, gate, usage(error.status, error.code, 0), error);

  const parsed = operation.input.safeParse(rawInput);
  const sentKey = call.idempotencyKey && readIdempotencyKey(call.idempotencyKey);
  if (!parsed.success || (sentKey && 'problem' in sentKey)) {
    const details = [...(parsed.success ? [] : detailsFromZod(parsed.error, location)), ...(sentKey && 'problem' in sentKey ? [sentKey.problem] : [])];
    return refuse(ApiError.validation(details));
  }
  const input = parsed.data;
  if (operation.check) {
    try {
      operation.check(input, call.connection?.env ?? env);
    } catch (error) {
      if (error instanceof ApiError) return refuse(error);
      throw error;
    }
  }
  if (call.instead) {
    if (call.admit) {
      try {
        await call.admit();
      } catch (error) {
        if (error instanceof ApiError) return refuse(error);
        throw error;
      }
    }
    return call.instead(input, usage);
  }
  if (!sentKey) return meteredCall(operation, input, call, gate, usage, started);

  const claim = await claimIdempotencyKey(env, principal, sentKey.key, operation, input, timeLimitOf(operation, input), usageId, call.connection?.id);
  if (claim.kind === 'refused') return refuse(claim.error);
  if (claim.kind === 'replay') {
    // Not charged and not counted in the window; recorded (cost 0, no upstream call) with the key checked.
    const valid = await gate.record(usage(200, null, 0, true));
    if (!valid) throw revokedKeyError(env);
    const replay = replayOf(claim.answer);
    return { ...replay, ...messageOf(operation, replay.message) };
  }
  usageId = claim.callId;
  let outcome: Outcome;
  try {
    outcome = await meteredCall(operation, input, call, gate, usage, started);
  } catch (error) {
    // A failure is free, so its retry may run afresh (as this same call, when it may have been charged).
    await claim.giveBack(error instanceof SettleUnanswered).catch((reason: unknown) => logFailure('idempotency key not given back', call, reason));
    throw error;
  }
  // Awaited, so a retry sent the moment this answer arrives finds it; were it lost, the claim lapses.
  await claim
    .keep({ data: outcome.data, ...(outcome.message !== undefined ? { message: outcome.message } : {}), meta: outcome.meta })
    .catch((reason: unknown) => logFailure('idempotent answer not kept', call, reason));
  return outcome;
}

/**
 * Records a refused call's row in one gate message, which also stamps its key's use and says whether the key may
 * still be served: a key revoked since this isolate read it is told so (401) rather than what else was wrong.
 */
async function refused(call: Pick<Call, 'env' | 'requestId'>, gate: Gate, row: UsageRow, error: ApiError): Promise<never> {
  const valid = await gate.record(row).catch((reason: unknown) => logFailure('usage row not recorded', call, reason));
  throw valid === false ? revokedKeyError(call.env) : error;
}

/**
 * A call refused before `execute` could read it (its source switched off, its body not JSON, a query where a body
 * belongs), refused as `execute` refuses: its row recorded, its key's use stamped, 401 for a key revoked meanwhile.
 */
export function refusedBeforeExecute(operation: Operation, call: Pick<Call, 'env' | 'principal' | 'requestId' | 'connection'>, error: ApiError): Promise<never> {
  const row = usageRow(call, operation, newCallId(), { status: error.status, errorCode: error.code, costUnits: 0, cached: false }, Date.now());
  return refused(call, gateOf(call.env, call.principal.workspaceId), row, error);
}

/** Everything after validation: the gate's `meter`, the upstream (or the cache), the gate's `settle`. */
async function meteredCall(operation: Operation, input: Record<string, unknown>, call: Call, gate: Gate, usage: UsageOf, started: number): Promise<Outcome> {
  const { env, principal } = call;
  let headers: Record<string, string> = {};
  /** Set once the gate holds money for this call: it must then be settled, whatever happens. */
  let held = false;
  let holdId = '';

  try {
    const known = knownExhausted(principal.workspaceId);
    if (known) throw rateLimited(known);

    const quote = call.connection ? call.connection.feeUnits : operation.price.quote(input, env);
    const timeLimit = timeLimitOf(operation, input);
    // Begun before the gate is asked and read once it has held the money: deployed, two hops at once.
    const lookup = lookUpAnswer(
      { organizationId: principal.organizationId, operation: operationIdThrough(operation, call.connection?.id), input: operation.cacheKeyOf?.(input) ?? input },
      freshnessOf(operation, input),
    );
    const metered = await gate.meter({
      keyId: principal.keyId,
      amountUnits: quote,
      ttlMs: timeLimit,
      usage: usage(0, null, 0),
      keyLimit: principal.budgetKey?.monthlyLimit ?? principal.monthlyLimit ?? null,
      ...(principal.budgetKey ? { budgetKeyId: principal.budgetKey.keyId } : {}),
    });
    if (metered.kind === 'revoked') throw revokedKeyError(env);
    if (metered.kind === 'no_plan') throw subscriptionRequired('metered calls', plansPageUrl(env, principal.workspaceId));
    headers = rateLimitHeaders(metered.admission);
    if (metered.kind === 'limited') {
      rememberExhausted(principal.workspaceId, metered.admission);
      throw rateLimited(metered.admission);
    }
    if (metered.kind !== 'held') throw shortfallError(metered, principal.budgetKey?.keyId);
    held = true;
    holdId = metered.holdId;
    if (call.admit) await call.admit();

    const { result, cached } = await answerFromCache(lookup, call.waitUntil, () =>
      withTimeLimit(timeLimit, call.signal, (signal) => operation.call(input, { env: call.connection?.env ?? env, signal, organizationId: principal.organizationId, subrequests: call.subrequests ?? new SubrequestBudget() })),
    );
    const actual = call.connection ? quote : Math.min(quote, operation.price.settle(input, result));
    // Awaited: the charge and its usage row are in the gate's storage before the answer leaves.
    const settled = await settle(env, gate, metered.holdId, actual, usage(200, null, actual, cached), principal.budgetKey?.keyId);
    held = false;
    if (settled.kind !== 'captured') throw shortfallError(settled as Shortfall, principal.budgetKey?.keyId);
    return {
      data: result.data,
      ...messageOf(operation, result.message),
      meta: { ...metaOf(actual, settled.balance ?? (await balanceOf(env, principal)), Date.now() - started, cached), ...(call.connection ? { connectionId: call.connection.id } : {}) },
      headers,
    };
  } catch (error) {
    const apiError = error instanceof ApiError ? error : undefined;
    if (apiError) Object.assign(apiError.headers, headers);
    // Awaited, so the very next call finds the money back; were it lost, the hold's expiry gives it back.
    if (held) {
      const row = usage(apiError?.status ?? 500, apiError?.code ?? 'INTERNAL_ERROR', 0);
      await settle(env, gate, holdId, 0, row).catch((reason: unknown) => logFailure('hold not released', call, reason));
    }
    throw error;
  }
}

/** The spec's `message`: a string wherever the operation shows one, also when the upstream sent none (or an answer kept before it was). */
function messageOf(operation: Operation, message: string | undefined): { message?: string } {
  const text = message ?? (operation.keepsMessage ? '' : undefined);
  return text === undefined ? {} : { message: text };
}

/**
 * The gate's `settle` with how the call ended: the gate completes the row `meter` brought, so the row crosses
 * once. A gate that no longer has it (it restarted, or the hold expired) asks, and is sent the whole row.
 * An answer lost on its way back (an error the platform marks retryable: the connection dropped, the gate
 * reset) is asked for once more, whole and through a new stub: the gate may have settled the call before the
 * answer was lost, and it settles a call once (a charge it has answers `captured` again; one it lost is taken
 * anew, under the same id, which the wallet applies once). Without it, a call charged would answer 500. A
 * settle that fails all the same goes to `unanswered`.
 */
async function settle(env: Env, gate: Gate, holdId: string, actualUnits: number, row: UsageRow, budgetKeyId?: string): Promise<SettleAnswer> {
  const { status, errorCode, costUnits, cached, latencyMs, createdAt } = row;
  try {
    const answer = await gate.settle(holdId, actualUnits, { status, errorCode, costUnits, cached, latencyMs, createdAt }, budgetKeyId);
    return answer.kind === 'row_needed' ? await gate.settle(holdId, actualUnits, row, budgetKeyId) : answer;
  } catch (error) {
    if (!answerLost(error)) return unanswered(env, row, actualUnits, error);
  }
  try {
    const again = await gateOf(env, row.workspaceId).settle(holdId, actualUnits, row, budgetKeyId);
    // Refused for money: the first may have been charged and its charge already handed on, so this one found no
    // hold and asked for the money anew. Charged, it is the success it was.
    if (actualUnits === 0 || again.kind === 'captured' || again.kind === 'released') return again;
    return (await chargeOfCall(env, row, row.id)) === null ? again : { kind: 'captured', balance: null };
  } catch (error) {
    return unanswered(env, row, actualUnits, error);
  }
}

/**
 * A settle the gate did not answer. A failure's is thrown as it came: it charged nothing. A success's charge is
 * read where it may be (`chargeOfCall`): found, the call is the success it was, answered 200 and billed once;
 * not found, or not readable, it is thrown as `SettleUnanswered`, since the call may have been charged all the
 * same (services/idempotency.ts reads again for a call with a key).
 */
async function unanswered(env: Env, row: UsageRow, actualUnits: number, error: unknown): Promise<SettleAnswer> {
  if (row.status !== 200) throw error;
  const charged = actualUnits > 0 ? await chargeOfCall(env, row, row.id).catch(() => null) : null;
  if (charged !== null) return { kind: 'captured', balance: null };
  throw new SettleUnanswered(error);
}

/** A success's settle that did not answer, and whose charge was not found: the call may have been charged all the same. */
class SettleUnanswered extends Error {
  constructor(readonly reason: unknown) {
    super(`The gate did not answer a success's settle: ${String(reason)}`);
  }
}

/** An object's answer lost in transit, which Cloudflare says to ask for again: retryable, and the object not overloaded. */
function answerLost(error: unknown): boolean {
  const flags = error as { retryable?: unknown; overloaded?: unknown } | null;
  return typeof flags === 'object' && flags !== null && flags.retryable === true && flags.overloaded !== true;
}

export function rateLimited(admission: Admission): ApiError {
  const retryAfter = secondsUntilReset(admission);
  return new ApiError('RATE_LIMITED', `This workspace has used its ${admission.limit} requests for this minute. Retry in ${retryAfter} s.`, {
    retryAfter,
    headers: rateLimitHeaders(admission),
  });
}

/**
 * The admission of a call that costs nothing but counts against the workspace's window (workspace
 * databases): one message to the gate (key still valid, window). No plan is needed: an organization
 * without one gets the smallest plan's window. Answers the RateLimit-* headers;
 * refusals are thrown carrying them.
 */
export async function admitFreeCall(env: Env, principal: KeyPrincipal): Promise<Record<string, string>> {
  const known = knownExhausted(principal.workspaceId);
  if (known) throw rateLimited(known);
  const answer = await gateOf(env, principal.workspaceId).admitFree({
    keyId: principal.keyId,
    organizationId: principal.organizationId,
    workspaceId: principal.workspaceId,
  });
  if (answer.kind === 'revoked') throw revokedKeyError(env);
  if (answer.kind === 'limited') {
    rememberExhausted(principal.workspaceId, answer.admission);
    throw rateLimited(answer.admission);
  }
  return rateLimitHeaders(answer.admission);
}

/**
 * 402 only when the balance itself cannot cover the call; money held by calls in flight is a 409 to retry.
 * A key's own monthly limit is a 402 that says so, with its figures, so nobody tops up a wallet in vain; a data
 * job's item names the key that submitted the job (`budgetKeyId`), whose limit it spends.
 */
function shortfallError(shortfall: Shortfall, budgetKeyId?: string): ApiError {
  if (shortfall.kind === 'key_limit') {
    const inFlight = shortfall.heldUnits > 0 ? ` and its calls in flight hold ${centsInWords(shortfall.heldUnits)} more` : '';
    const whose = budgetKeyId ? `the API key that submitted this job (${budgetKeyId})` : 'this API key';
    return new ApiError(
      'INSUFFICIENT_CREDITS',
      `This call needs ${centsInWords(shortfall.requiredUnits)}, which would take ${whose} past its own monthly spend limit of ${centsInWords(shortfall.limitUnits)}: ` +
        `it has spent ${centsInWords(shortfall.spentUnits)} this month${inFlight}. The limit resets on ${new Date(shortfall.resetsAt).toISOString().slice(0, 10)} (UTC). ` +
        "The key's limit stopped this call, not the organization's balance: raise the limit in the dashboard, or wait for the reset.",
    );
  }
  if (shortfall.kind === 'busy') {
    return new ApiError(
      'CONFLICT',
      `The balance covers this call, but calls in flight hold the money it needs until they finish. Retry in ${shortfall.retryAfter} s.`,
      { retryAfter: shortfall.retryAfter },
    );
  }
  return new ApiError(
    'INSUFFICIENT_CREDITS',
    `This call needs ${centsInWords(shortfall.requiredUnits)} but the organization has ${centsInWords(shortfall.availableUnits)} available. Top up to continue.`,
  );
}

/**
 * Runs an upstream call with a signal that aborts at the time limit or when the client goes away. The
 * timer and the listener are removed as soon as the call settles, so finished calls leave nothing behind.
 * One controller with a listener on the client's signal, not `AbortSignal.any`: the same signal, for about
 * 0.04 ms less CPU per call in workerd (measured side by side on a relay worker).
 */
async function withTimeLimit<T>(timeLimit: number, clientGone: AbortSignal | undefined, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const limit = new AbortController();
  if (clientGone?.aborted) limit.abort(clientGone.reason);
  const gone = () => limit.abort(clientGone!.reason);
  clientGone?.addEventListener('abort', gone, { once: true });
  const timer = setTimeout(() => limit.abort(new DOMException('The time limit passed.', 'TimeoutError')), timeLimit);
  try {
    return await run(limit.signal);
  } finally {
    clearTimeout(timer);
    clientGone?.removeEventListener('abort', gone);
  }
}

/**
 * The balances a success's `meta` shows when its settle's answer did not carry them (its charge was found where it
 * went instead), read as `/v1/credits` reads them, through a new stub (the call's may be broken, as the lost
 * settle's was); null when that read fails too.
 */
async function balanceOf(env: Env, principal: KeyPrincipal): Promise<Balance | null> {
  const credits = await gateOf(env, principal.workspaceId)
    .credits(principal.keyId, principal)
    .catch(() => null);
  return credits && !credits.revoked ? credits.balance : null;
}

function metaOf(costUnits: number, balance: Balance | null, latencyMs: number, cached: boolean): Meta {
  return {
    costCents: centsFromUnits(costUnits),
    purchasedBalanceCents: centsFromUnits(balance?.purchasedUnits ?? 0),
    subscriptionRemainingCents: centsFromUnits(balance?.subscriptionUnits ?? 0),
    cached,
    latencyMs,
  };
}

function usageRow(
  call: Pick<Call, 'principal' | 'requestId' | 'connection'>,
  operation: Operation,
  id: string,
  outcome: Pick<UsageRow, 'status' | 'errorCode' | 'costUnits' | 'cached'>,
  started: number,
): UsageRow {
  return {
    id,
    requestId: call.requestId,
    organizationId: call.principal.organizationId,
    workspaceId: call.principal.workspaceId,
    keyId: call.principal.keyId,
    operation: operationId(operation),
    ...(call.connection ? { connectionId: call.connection.id } : {}),
    // A sandbox key's every row is marked, its refusals too: none counts among the live calls.
    ...(call.principal.scope === 'workspace_dryrun' ? { sandbox: true } : {}),
    ...outcome,
    latencyMs: Date.now() - started,
    createdAt: new Date(clock.now()).toISOString(),
  };
}

function logFailure(note: string, call: Pick<Call, 'requestId'>, reason: unknown): void {
  console.error(JSON.stringify({ level: 'error', note, requestId: call.requestId, error: String(reason) }));
}
