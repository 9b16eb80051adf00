import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import worker from '../../src/api';
import { clock } from '../../src/core/clock';
import { bearer, call, funded, json } from '../support/api';

/**
 * What a warm isolate's metered call waits for: its workspace's gate, twice, and the upstream; never D1
 * (docs/performance.md, "What the local figures mean on Cloudflare"). Observed by taking D1 away from the
 * api worker once the key has been used: every statement it would send fails.
 */
const unreachable = () => {
  throw new Error('D1 is unreachable');
};
const withoutD1 = { ...env, DB: { prepare: unreachable, batch: unreachable, exec: unreachable, withSession: unreachable, dump: unreachable } as unknown as D1Database };
const company = (domain: string) => `/v1/data/linkedin/get-company-by-domain?domain=${domain}`;

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

describe("a warm isolate's metered call", () => {
  it('is answered and charged without D1 after its key and the switches have grown old in memory, which it reads again beside itself', async () => {
    const account = await funded(10);
    const first = await call(company('warm-first.example.com'), bearer(account.key));
    expect(first.status).toBe(200);
    const { subscriptionRemainingCents } = (await json(first)).meta;
    // Past the 30 s after which the key's principal, and the 5 s after which the operator's switches, are read again.
    const later = realNow() + 31_000;
    clock.now = () => later;
    const response = await worker.fetch(new Request(`http://sluice.test${company('warm-later.example.com')}`, bearer(account.key)), withoutD1, createExecutionContext());
    expect(response.status).toBe(200);
    // The business plan's allowance is spent before purchased credit.
    expect((await json(response)).meta).toMatchObject({ costCents: 1, subscriptionRemainingCents: subscriptionRemainingCents - 1 });
  });

  it('waits for D1 for a key this isolate has not read: an unreadable key is an error, never a guess', async () => {
    const account = await funded(10);
    const response = await worker.fetch(new Request(`http://sluice.test${company('cold.example.com')}`, bearer(account.key)), withoutD1, createExecutionContext());
    expect(response.status).toBe(500);
    expect((await json(response)).error.code).toBe('INTERNAL_ERROR');
  });
});
