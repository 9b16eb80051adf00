import { describe, expect, it } from 'vitest';
import { PLAN_TABLE, PLANS } from '../../src/core/plans';
import { bearer, call, companyByDomain, credit, json, provision } from '../support/api';
import { holdClockInOneMinute } from '../support/held-minute';

/** The spec's "Request rate" table, by each plan's name as the spec writes it. */
const SPEC_REQUESTS_PER_MINUTE: Record<string, number> = {
  'Pay as you go': 60,
  Toolkit: 300,
  'Toolkit All-Access': 600,
  Solo: 120,
  Team: 300,
  Business: 600,
};

// Mid-minute: a window of 600 calls cannot straddle two minutes on a slow machine.
holdClockInOneMinute(20_000);

/** A call that costs nothing and counts in the workspace's window: the cheap way to use up slots of it. */
function freeCall(key: string): Promise<Response> {
  return call('/v1/connections/vendors', bearer(key));
}

describe("every plan's requests-per-minute ceiling is enforced", () => {
  it("has every plan of the spec's table, and no other", () => {
    expect(PLANS.map((plan) => PLAN_TABLE[plan].name).sort()).toEqual(Object.keys(SPEC_REQUESTS_PER_MINUTE).sort());
  });

  it.each(PLANS)("%s: the call that takes the minute's last slot is served, the one after it is 429 RATE_LIMITED", async (plan) => {
    const ceiling = SPEC_REQUESTS_PER_MINUTE[PLAN_TABLE[plan].name];
    expect(ceiling, `the spec's requests-per-minute figure for ${PLAN_TABLE[plan].name}`).toBeGreaterThan(0);
    const account = await provision({ plan });
    await credit(account.organizationId, { purchasedCents: 10 });

    // All but the last slot, taken by free calls that count in the same window and say the same ceiling.
    const fill = await Promise.all(Array.from({ length: ceiling! - 1 }, () => freeCall(account.key)));
    expect(fill.filter((response) => response.status !== 200)).toEqual([]);
    expect(new Set(fill.map((response) => response.headers.get('ratelimit-limit')))).toEqual(new Set([String(ceiling)]));
    expect(Math.min(...fill.map((response) => Number(response.headers.get('ratelimit-remaining'))))).toBe(1);

    const last = await companyByDomain(account.key, 'stripe.com');
    expect(last.status).toBe(200);
    expect(last.headers.get('ratelimit-remaining')).toBe('0');

    const over = await companyByDomain(account.key, 'stripe.com');
    expect(over.status).toBe(429);
    expect((await json(over)).error).toMatchObject({ code: 'RATE_LIMITED', retryAfter: 40 });
    expect(over.headers.get('retry-after')).toBe('40');
  });
});
