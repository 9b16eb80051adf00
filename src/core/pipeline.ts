import type { Balance } from '../../durable-objects/lease-protocol';
import type { Admission, Shortfall } from '../../durable-objects/workspace-gate';
import { freshnessOf, operationId, timeLimitOf, type Operation } from '../operations/types';
import type { KeyPrincipal } from './accounts';
import { clock } from './clock';
import { revokedKeyError } from './auth';
import type { Env } from './config';
import type { Meta } from './envelope';
import { ApiError, type ErrorLocation } from './errors';
import { gateOf, knownExhausted, rateLimitHeaders, rememberExhausted, secondsUntilReset } from './gate';
import { newId } from './ids';
import { centsFromUnits } from './money';
import { answerFromCache, type CacheEntryKey } from './response-cache';
import { validationErrorFromZod } from './validation';
import type { UsageRow } from './usage';

/** Everything a surface (REST or MCP) hands the pipeline about the call it received. */
export interface Call {
  env: Env;
  principal: KeyPrincipal;
  requestId: string;
  waitUntil(promise: Promise<unknown>): void;
  /** Aborted when the client goes away, so the upstream call stops and the hold is released. */
  signal?: AbortSignal;
}

export interface Outcome {
  data: unknown;
  message?: string;
  meta: Meta;
  /** RateLimit-* headers of the window this call was counted in. */
  headers: Record<string, string>;
}

/**
 * The one path every metered call takes: validate, then one message to the workspace's gate (key still
 * valid, plan, window, money set aside), the provider (or the response cache), then one message to the
 * gate that settles the call and stores its usage row before the answer leaves. Every non-success is
 * billed zero. Failures are thrown as ApiError carrying the rate-limit headers.
 */
export async function execute(operation: Operation, rawInput: unknown, location: ErrorLocation, call: Call): Promise<Outcome> {
  const started = Date.now();
  const { env, principal } = call;
  const gate = gateOf(env, principal.workspaceId);
  const usageId = newId('use');
  const usage = (status: number, errorCode: string | null, costUnits: number, cached = false) =>
    usageRow(call, operation, usageId, { status, errorCode, costUnits, cached }, started);
  let headers: Record<string, string> = {};
  /** Set once the gate holds money for this call: it must then be settled, whatever happens. */
  let held = false;

  try {
    const parsed = operation.input.safeParse(rawInput);
    if (!parsed.success) {
      // One gate message, as for any call: it records the refusal and says whether the key is still valid.
      const valid = await gate.record(usage(400, 'VALIDATION_ERROR', 0)).catch((reason: unknown) => logFailure('usage row not recorded', call, reason));
      throw valid === false ? revokedKeyError(env) : validationErrorFromZod(parsed.error, location);
    }
    const input = parsed.data;
    const known = knownExhausted(principal.workspaceId);
    if (known) throw rateLimited(known);

    const quote = operation.price.quote(input);
    const timeLimit = timeLimitOf(operation, input);
    const metered = await gate.meter({
      keyId: principal.keyId,
      amountUnits: quote,
      ttlMs: timeLimit,
      usage: usage(0, null, 0),
      plan: principal.plan,
      rpmOverride: principal.rpmOverride,
    });
    if (metered.kind === 'revoked') throw revokedKeyError(env);
    if (metered.kind === 'no_plan') throw subscriptionRequired();
    headers = rateLimitHeaders(metered.admission);
    if (metered.kind === 'limited') {
      rememberExhausted(principal.workspaceId, metered.admission);
      throw rateLimited(metered.admission);
    }
    if (metered.kind !== 'held') throw shortfallError(metered);
    held = true;

    const cacheKey: CacheEntryKey = { organizationId: principal.organizationId, operation: operationId(operation), input: operation.cacheKeyOf?.(input) ?? input };
    const { result, cached } = await answerFromCache(cacheKey, freshnessOf(operation, input), call.waitUntil, () =>
      withTimeLimit(timeLimit, call.signal, (signal) => operation.call(input, { env, signal, organizationId: principal.organizationId })),
    );
    const actual = Math.min(quote, operation.price.settle(input, result));
    // Awaited: the charge and its usage row are in the gate's storage before the answer leaves.
    const settled = await gate.settle(metered.holdId, actual, usage(200, null, actual, cached));
    held = false;
    if (settled.kind !== 'captured') throw shortfallError(settled as Shortfall);
    return {
      data: result.data,
      ...(result.message !== undefined ? { message: result.message } : {}),
      meta: metaOf(actual, settled.balance, Date.now() - started, cached),
      headers,
    };
  } catch (error) {
    const apiError = error instanceof ApiError ? error : undefined;
    if (apiError) Object.assign(apiError.headers, headers);
    // Awaited, so the very next call finds the money back; were it lost, the hold's expiry gives it back.
    if (held) {
      const row = usage(apiError?.status ?? 500, apiError?.code ?? 'INTERNAL_ERROR', 0);
      await gate.settle(usageId, 0, row).catch((reason: unknown) => logFailure('hold not released', call, reason));
    }
    throw error;
  }
}

export function rateLimited(admission: Admission): ApiError {
  const retryAfter = secondsUntilReset(admission);
  return new ApiError('RATE_LIMITED', `This workspace has used its ${admission.limit} requests for this minute. Retry in ${retryAfter} s.`, {
    retryAfter,
    headers: rateLimitHeaders(admission),
  });
}

function subscriptionRequired(): ApiError {
  return new ApiError('SUBSCRIPTION_REQUIRED', 'This organization has no plan. Subscribe or start the free trial in the dashboard to use metered routes.');
}

/**
 * The admission of a call that costs nothing but counts against the workspace's window (workspace
 * databases): one message to the gate (key still valid, plan, window). Answers the RateLimit-* headers;
 * refusals are thrown carrying them.
 */
export async function admitFreeCall(env: Env, principal: KeyPrincipal): Promise<Record<string, string>> {
  const known = knownExhausted(principal.workspaceId);
  if (known) throw rateLimited(known);
  const answer = await gateOf(env, principal.workspaceId).admitFree({
    keyId: principal.keyId,
    organizationId: principal.organizationId,
    workspaceId: principal.workspaceId,
    plan: principal.plan,
    rpmOverride: principal.rpmOverride,
  });
  if (answer.kind === 'revoked') throw revokedKeyError(env);
  if (answer.kind === 'no_plan') throw subscriptionRequired();
  if (answer.kind === 'limited') {
    rememberExhausted(principal.workspaceId, answer.admission);
    throw rateLimited(answer.admission);
  }
  return rateLimitHeaders(answer.admission);
}

/** 402 only when the balance itself cannot cover the call; money held by calls in flight is a 409 to retry. */
function shortfallError(shortfall: Shortfall): ApiError {
  if (shortfall.kind === 'busy') {
    return new ApiError(
      'CONFLICT',
      `The balance covers this call, but calls in flight hold the money it needs until they finish. Retry in ${shortfall.retryAfter} s.`,
      { retryAfter: shortfall.retryAfter },
    );
  }
  return new ApiError(
    'INSUFFICIENT_CREDITS',
    `This call needs ${formatCents(shortfall.requiredUnits)} but the organization has ${formatCents(shortfall.availableUnits)} available. Top up to continue.`,
  );
}

/**
 * Runs an upstream call with a signal that aborts at the time limit or when the client goes away. The
 * timer is cleared as soon as the call settles, so finished calls leave no timers behind.
 */
async function withTimeLimit<T>(timeLimit: number, clientGone: AbortSignal | undefined, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const limit = new AbortController();
  const timer = setTimeout(() => limit.abort(new DOMException('The time limit passed.', 'TimeoutError')), timeLimit);
  try {
    return await run(clientGone ? AbortSignal.any([clientGone, limit.signal]) : limit.signal);
  } finally {
    clearTimeout(timer);
  }
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

function formatCents(units: number): string {
  const cents = centsFromUnits(units);
  return `${cents} ${cents === 1 ? 'cent' : 'cents'}`;
}

function usageRow(
  call: Call,
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
    ...outcome,
    latencyMs: Date.now() - started,
    createdAt: new Date(clock.now()).toISOString(),
  };
}

function logFailure(note: string, call: Call, reason: unknown): void {
  console.error(JSON.stringify({ level: 'error', note, requestId: call.requestId, error: String(reason) }));
}
