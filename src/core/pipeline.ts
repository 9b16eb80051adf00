import type { Balance } from '../../durable-objects/org-wallet';
import { operationId, type Operation } from '../operations/types';
import type { KeyPrincipal } from './accounts';
import { clock } from './clock';
import type { Env } from './config';
import type { Meta } from './envelope';
import { ApiError, type ErrorLocation } from './errors';
import { admit, rateLimitHeaders, secondsUntilReset } from './gate';
import { newId } from './ids';
import { centsFromUnits } from './money';
import { requestsPerMinute } from './plans';
import { validationErrorFromZod } from './validation';
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
  let headers: Record<string, string> = {};
  let usage: { status: number; errorCode: string | null; costUnits: number } | undefined;

  try {
    const parsed = operation.input.safeParse(rawInput);
    if (!parsed.success) throw validationErrorFromZod(parsed.error, location);
    const input = parsed.data;
    if (!principal.plan) {
      throw new ApiError('SUBSCRIPTION_REQUIRED', 'This organization has no plan. Subscribe or start the free trial in the dashboard to use metered routes.');
    }

    const quote = operation.price.quote(input);
    const wallet = walletOf(env, principal.organizationId);
    const [admission, hold] = await Promise.all([
      admit(env, principal.workspaceId, requestsPerMinute(principal.plan, principal.rpmOverride)),
      wallet.hold(quote, operation.timeoutMs),
    ]);
    headers = rateLimitHeaders(admission);

    // A 429 wins over a 402, and a hold taken for a refused call is given straight back.
    if (!admission.allowed) {
      if (hold.ok) await wallet.release(hold.holdId);
      const retryAfter = secondsUntilReset(admission);
      throw new ApiError('RATE_LIMITED', `This workspace has used its ${admission.limit} requests for this minute. Retry in ${retryAfter} s.`, { retryAfter });
    }
    if (!hold.ok) {
      throw new ApiError(
        'INSUFFICIENT_CREDITS',
        `This call needs ${formatCents(hold.requiredUnits)} but the organization has ${formatCents(hold.availableUnits)} available. Top up to continue.`,
      );
    }

    let result: Awaited<ReturnType<Operation['call']>>;
    let actual: number;
    try {
      const signal = call.signal ? AbortSignal.any([call.signal, AbortSignal.timeout(operation.timeoutMs)]) : AbortSignal.timeout(operation.timeoutMs);
      result = await operation.call(input, { env, signal });
      actual = Math.min(quote, operation.price.settle(input, result));
    } catch (error) {
      await wallet.release(hold.holdId);
      throw error;
    }
    // When the call costs exactly what was held, capturing changes no balance, so the answer need not
    // wait for it; the hold's alarm is the backstop should the capture never land.
    let balance = hold.balance;
    if (actual === quote) call.waitUntil(wallet.capture(hold.holdId, actual));
    else balance = (await wallet.capture(hold.holdId, actual)).balance;
    usage = { status: 200, errorCode: null, costUnits: actual };
    return {
      data: result.data,
      ...(result.message !== undefined ? { message: result.message } : {}),
      meta: metaOf(actual, balance, Date.now() - started),
      headers,
    };
  } catch (error) {
    if (error instanceof ApiError) {
      Object.assign(error.headers, headers);
      // Refusals of the rate window are not recorded: a flood must not become a flood of writes.
      if (error.code !== 'RATE_LIMITED') usage = { status: error.status, errorCode: error.code, costUnits: 0 };
    } else {
      usage = { status: 500, errorCode: 'INTERNAL_ERROR', costUnits: 0 };
    }
    throw error;
  } finally {
    if (usage) call.waitUntil(recordUsage(call, operation, usage, Date.now() - started));
  }
}

function metaOf(costUnits: number, balance: Balance, latencyMs: number): Meta {
  return {
    costCents: centsFromUnits(costUnits),
    purchasedBalanceCents: centsFromUnits(balance.purchasedUnits),
    subscriptionRemainingCents: centsFromUnits(balance.subscriptionUnits),
    cached: false,
    latencyMs,
  };
}

function formatCents(units: number): string {
  const cents = centsFromUnits(units);
  return `${cents} ${cents === 1 ? 'cent' : 'cents'}`;
}

async function recordUsage(call: Call, operation: Operation, usage: { status: number; errorCode: string | null; costUnits: number }, latencyMs: number) {
  try {
    await call.env.DB.prepare(
      `INSERT INTO usage (id, request_id, organization_id, workspace_id, key_id, operation, status, error_code, cost_units, cached, latency_ms, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)`,
    )
      .bind(
        newId('use'),
        call.requestId,
        call.principal.organizationId,
        call.principal.workspaceId,
        call.principal.keyId,
        operationId(operation),
        usage.status,
        usage.errorCode,
        usage.costUnits,
        latencyMs,
        new Date(clock.now()).toISOString(),
      )
      .run();
  } catch (error) {
    console.error(JSON.stringify({ level: 'error', note: 'usage row not recorded', requestId: call.requestId, error: String(error) }));
  }
}
