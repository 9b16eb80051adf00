import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { findPrincipal } from '../../src/services/accounts';
import { ApiError } from '../../src/core/errors';
import { hashKey } from '../../src/core/keys';
import { execute, type Call } from '../../src/services/pipeline';
import { OPERATIONS } from '../../src/operations';
import { credit, provision, wallet } from '../support/api';

const companyByDomain = OPERATIONS.find((operation) => operation.name === 'get-company-by-domain')!;

async function callFor(account: { key: string }, signal?: AbortSignal): Promise<{ call: Call; context: ExecutionContext }> {
  const principal = await findPrincipal(env.DB, await hashKey(account.key));
  const context = createExecutionContext();
  return { call: { env, principal: principal!, requestId: 'req_test', waitUntil: (promise) => context.waitUntil(promise), ...(signal ? { signal } : {}) }, context };
}

async function failureOf(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(() => undefined, (reason: unknown) => reason);
  if (!(error instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(error)}`);
  return error;
}

describe('the pipeline', () => {
  it('gives up when the operation time limit passes: 502, not charged, hold released', async () => {
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 5 });
    const { call, context } = await callFor(account);
    const error = await failureOf(execute({ ...companyByDomain, timeoutMs: 100 }, { domain: 'slow.com' }, 'query', call));
    await waitOnExecutionContext(context);
    expect(error).toMatchObject({ code: 'PROVIDER_ERROR', status: 502 });
    expect(error.message).toMatch(/timed out/);
    expect(await wallet(account.organizationId)).toMatchObject({ purchasedBalanceCents: 5, heldCents: 0 });
  });

  it('leaves no hold behind when the client disconnects mid-call', async () => {
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 5 });
    const disconnect = new AbortController();
    const { call, context } = await callFor(account, disconnect.signal);
    const pending = failureOf(execute(companyByDomain, { domain: 'slow.com' }, 'query', call));
    setTimeout(() => disconnect.abort(), 50);
    const error = await pending;
    await waitOnExecutionContext(context);
    expect(error.code).toBe('PROVIDER_ERROR');
    expect(await wallet(account.organizationId)).toMatchObject({ purchasedBalanceCents: 5, heldCents: 0 });
  });

  it('validates before touching the window or the wallet', async () => {
    const account = await provision();
    const { call } = await callFor(account);
    const error = await failureOf(execute(companyByDomain, { domain: '' }, 'query', call));
    expect(error.code).toBe('VALIDATION_ERROR');
    const after = await wallet(account.organizationId);
    expect(after.ledger.filter((entry: { kind: string }) => entry.kind === 'hold')).toEqual([]);
  });
});
