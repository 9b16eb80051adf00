import type { Balance } from '../../durable-objects/org-wallet';
import { freshnessOf, operationId, timeLimitOf, type Operation } from '../operations/types';
import type { KeyPrincipal } from './accounts';
import { clock } from './clock';
import type { Env } from './config';
import type { Meta } from './envelope';
import { ApiError, type ErrorLocation } from './errors';
import { admit, rateLimitHeaders, secondsUntilReset } from './gate';
import { newId } from './ids';
import { centsFromUnits } from './money';
import { requestsPerMinute } from './plans';
import { cachedAnswer, storeAnswer } from './response-cache';
import { validationErrorFromZod } from './validation';
import type { UsageRow } from './usage';
import { walletOf } from './wallet';

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
 * The one path every metered call takes: validate, admit and hold in parallel, call the provider,
 * capture what succeeded or release what did not, and record usage off the response path.
 * Every non-success is billed zero. Failures are thrown as ApiError carrying the rate-limit headers.
 */
export async function execute(operation: Operation, rawInput: unknown, location: ErrorLocation, call: Call): Promise<Outcome> {
  const started = Date.now();
  const { env, principal } = call;
  const wallet = walletOf(env, principal.organizationId);
  const usage = (status: number, errorCode: string | null, costUnits: number, cached = false) =>
    usageRow(call, operation, { status, errorCode, costUnits, cached }, started);
  let headers: Record<string, string> = {};
  /** The hold still open: released on any failure, so a non-success is billed zero. */
  let openHold: string | undefined;

  try {
    const parsed = operation.input.safeParse(rawInput);
    if (!parsed.success) throw validationErrorFromZod(parsed.error, location);
    const input = parsed.data;
    if (!principal.plan) {
      throw new ApiError('SUBSCRIPTION_REQUIRED', 'This organization has no plan. Subscribe or start the free trial in the dashboard to use metered routes.');
    }

    const quote = operation.price.quote(input);
    const timeLimit = timeLimitOf(operation, input);
    const [admission, hold] = await Promise.all([
      admit(env, principal.workspaceId, requestsPerMinute(principal.plan, principal.rpmOverride)),
      wallet.hold(quote, timeLimit),
    ]);
    headers = rateLimitHeaders(admission);
    if (hold.ok) openHold = hold.holdId;

    // A 429 wins over a 402, and a hold taken for a refused call is given straight back.
    if (!admission.allowed) {
      const retryAfter = secondsUntilReset(admission);
      throw new ApiError('RATE_LIMITED', `This workspace has used its ${admission.limit} requests for this minute. Retry in ${retryAfter} s.`, { retryAfter });
    }
    if (!hold.ok) {
      throw new ApiError(
        'INSUFFICIENT_CREDITS',
        `This call needs ${formatCents(hold.requiredUnits)} but the organization has ${formatCents(hold.availableUnits)} available. Top up to continue.`,
      );
    }

    const freshness = freshnessOf(operation, input);
    const cacheKey = { organizationId: principal.organizationId, operation: operationId(operation), input: operation.cacheKeyOf?.(input) ?? input };
    let result = await cachedAnswer(cacheKey, freshness);
    const cached = result !== undefined;
    if (!result) {
      result = await withTimeLimit(timeLimit, call.signal, (signal) => operation.call(input, { env, signal, organizationId: principal.organizationId }));
      call.waitUntil(storeAnswer(cacheKey, result, freshness).catch((reason: unknown) => logFailure('answer not cached', call, reason)));
    }
    const actual = Math.min(quote, operation.price.settle(input, result));
    const succeeded = usage(200, null, actual, cached);

    // When the call costs exactly what was held, capturing changes no balance, so the answer need not
    // wait for it; the hold's alarm is the backstop should the capture never land.
    let balance = hold.balance;
    if (actual === quote) call.waitUntil(wallet.capture(hold.holdId, actual, succeeded));
    else balance = (await wallet.capture(hold.holdId, actual, succeeded)).balance;
    openHold = undefined;
    return {
      data: result.data,
      ...(result.message !== undefined ? { message: result.message } : {}),
      meta: metaOf(actual, balance, Date.now() - started, cached),
      headers,
    };
  } catch (error) {
    const apiError = error instanceof ApiError ? error : undefined;
    if (apiError) Object.assign(apiError.headers, headers);
    // Refusals of the rate window are not recorded: a flood must not become a flood of writes.
    const row = apiError?.code === 'RATE_LIMITED' ? undefined : usage(apiError?.status ?? 500, apiError?.code ?? 'INTERNAL_ERROR', 0);
    // Awaited, so the very next call sees the money back; were it lost, the hold's alarm releases it.
    if (openHold) await wallet.release(openHold, row).catch((reason: unknown) => logFailure('hold not released', call, reason));
    else if (row) call.waitUntil(wallet.recordUsage(row).catch((reason: unknown) => logFailure('usage row not recorded', call, reason)));
    throw error;
  }
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

function metaOf(costUnits: number, balance: Balance, latencyMs: number, cached: boolean): Meta {
  return {
    costCents: centsFromUnits(costUnits),
    purchasedBalanceCents: centsFromUnits(balance.purchasedUnits),
    subscriptionRemainingCents: centsFromUnits(balance.subscriptionUnits),
    cached,
    latencyMs,
  };
}

function formatCents(units: number): string {
  const cents = centsFromUnits(units);
  return `${cents} ${cents === 1 ? 'cent' : 'cents'}`;
}

function usageRow(call: Call, operation: Operation, outcome: Pick<UsageRow, 'status' | 'errorCode' | 'costUnits' | 'cached'>, started: number): UsageRow {
  return {
    id: newId('use'),
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
