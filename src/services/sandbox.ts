import type { Env } from '../core/config';
import type { Operation } from '../core/operation';
import type { KeyPrincipal } from '../core/records';
import { centsFromUnits } from '../core/money';
import { revokedKeyError } from './auth';
import { gateOf } from './gate';
import { admitFreeCall, type Call } from './pipeline';

/**
 * A sandbox key's call on /runtime/data (issue 33), run by the pipeline once the input is valid: counted in
 * the workspace's window like a live call, answered with the operation's documented example (the one the
 * OpenAPI shows) with `meta.sandbox` and the most the live call would cost (its quote). No vendor is called and the wallet is
 * never asked, so it needs neither a plan nor credit; the balances in `meta` are not read and say 0. Its
 * usage row, at cost 0, is marked sandbox (as every row of a sandbox key is: pipeline.ts's `usageRow`).
 */
export function sandboxAnswer(env: Env, principal: KeyPrincipal, operation: Operation, example: { data: unknown } | undefined): NonNullable<Call['instead']> {
  return async (input, usage) => {
    const started = Date.now();
    const headers = await admitFreeCall(env, principal);
    const valid = await gateOf(env, principal.workspaceId).record(usage(200, null, 0));
    if (!valid) throw revokedKeyError(env);
    return {
      data: example?.data ?? null,
      ...(operation.keepsMessage ? { message: 'ok' } : {}),
      meta: {
        costCents: 0,
        purchasedBalanceCents: 0,
        subscriptionRemainingCents: 0,
        cached: false,
        latencyMs: Date.now() - started,
        sandbox: true,
        quotedCents: centsFromUnits(operation.price.quote(input, env)),
      },
      headers,
    };
  };
}
