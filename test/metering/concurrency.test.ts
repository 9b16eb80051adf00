import { afterEach, describe, expect, it, vi } from 'vitest';
import { clock } from '../../src/core/clock';
import { companyByDomain, credit, json, ops, provision, wallet } from '../support/api';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the wallet under concurrency', () => {
  it('lets exactly 20 of 50 concurrent calls through a balance that covers 20; balance and ledger agree to the unit', async () => {
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 20 });

    const responses = await Promise.all(Array.from({ length: 50 }, () => companyByDomain(account.key, 'stripe.com')));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(20);
    // Refused while the 20 were in flight: 409 (the balance covered them then) or 402 (it no longer did).
    expect(statuses.filter((status) => status === 402 || status === 409)).toHaveLength(30);
    for (const response of responses.filter((candidate) => candidate.status !== 200)) {
      expect(['INSUFFICIENT_CREDITS', 'CONFLICT']).toContain((await json(response)).error.code);
    }

    const after = await wallet(account.organizationId);
    expect(after).toMatchObject({ purchasedBalanceCents: 0, subscriptionRemainingCents: 0, heldCents: 0 });
    // The ledger is newest first: its latest row shows the balance, and its deltas sum to the change.
    expect(after.ledger[0]).toMatchObject({ purchasedAfterCents: 0, subscriptionAfterCents: 0 });
    const captures = after.ledger.filter((entry: { kind: string }) => entry.kind === 'capture');
    expect(captures).toHaveLength(20);
    expect(captures.reduce((sum: number, entry: { purchasedDeltaCents: number }) => sum + entry.purchasedDeltaCents, 0)).toBe(-20);

    // Once nothing is in flight, the balance itself is short: 402.
    const next = await companyByDomain(account.key, 'stripe.com');
    expect(next.status).toBe(402);
    expect((await json(next)).error.message).toContain('has 0 cents available');
  });
});

describe('the workspace request window', () => {
  // Pin time inside one window so the test never straddles a minute boundary.
  const windowStart = Date.UTC(2030, 0, 1, 12, 0, 0);

  it('admits exactly 60 of 61 requests from 3 keys of one workspace, then 429 with Retry-After; other workspaces and the next window are unaffected', async () => {
    const now = vi.spyOn(clock, 'now').mockReturnValue(windowStart + 15_000);
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 100 });
    const second = await ops('POST', '/keys', { workspaceId: account.workspaceId });
    const third = await ops('POST', '/keys', { workspaceId: account.workspaceId });
    const keys = [account.key, second.body.data.key, third.body.data.key];

    const responses = await Promise.all(Array.from({ length: 61 }, (_, index) => companyByDomain(keys[index % 3]!, 'stripe.com')));
    const limited = responses.filter((response) => response.status === 429);
    expect(responses.filter((response) => response.status === 200)).toHaveLength(60);
    expect(limited).toHaveLength(1);
    const refusal = limited[0]!;
    const { error } = await json(refusal);
    expect(error.code).toBe('RATE_LIMITED');
    expect(error.retryAfter).toBe(45);
    expect(refusal.headers.get('retry-after')).toBe('45');
    expect(refusal.headers.get('ratelimit-limit')).toBe('60');
    expect(refusal.headers.get('ratelimit-remaining')).toBe('0');

    // Refused locally once exhausted, still with the same answer.
    const again = await companyByDomain(keys[1]!, 'stripe.com');
    expect(again.status).toBe(429);
    expect(again.headers.get('retry-after')).toBe('45');

    // The refused calls were not charged: 60 successes at 1 cent.
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(40);

    const sibling = await ops('POST', '/workspaces', { organizationId: account.organizationId, name: 'sibling' });
    const siblingKey = await ops('POST', '/keys', { workspaceId: sibling.body.data.id });
    expect((await companyByDomain(siblingKey.body.data.key, 'stripe.com')).status).toBe(200);

    now.mockReturnValue(windowStart + 60_000);
    const nextWindow = await companyByDomain(account.key, 'stripe.com');
    expect(nextWindow.status).toBe(200);
    expect(nextWindow.headers.get('ratelimit-remaining')).toBe('59');
  });

  it('gives a 429 precedence over a 402 and keeps nothing held', async () => {
    vi.spyOn(clock, 'now').mockReturnValue(windowStart + 59_500);
    const account = await provision();
    await ops('PUT', `/organizations/${account.organizationId}/plan`, { plan: 'payg', rpm: 1 });
    await credit(account.organizationId, { purchasedCents: 1 });
    expect((await companyByDomain(account.key, 'stripe.com')).status).toBe(200);
    // Balance now 0 and window exhausted: both refusals apply, the 429 wins.
    const response = await companyByDomain(account.key, 'stripe.com');
    expect(response.status).toBe(429);
    expect((await json(response)).error.retryAfter).toBe(1);
    expect(await wallet(account.organizationId)).toMatchObject({ heldCents: 0, purchasedBalanceCents: 0 });
  });

  it('releases the hold of a call refused by the window', async () => {
    vi.spyOn(clock, 'now').mockReturnValue(windowStart + 30_000);
    const account = await provision();
    await ops('PUT', `/organizations/${account.organizationId}/plan`, { plan: 'payg', rpm: 1 });
    await credit(account.organizationId, { purchasedCents: 5 });
    expect((await companyByDomain(account.key, 'stripe.com')).status).toBe(200);
    expect((await companyByDomain(account.key, 'stripe.com')).status).toBe(429);
    const after = await wallet(account.organizationId);
    expect(after).toMatchObject({ heldCents: 0, purchasedBalanceCents: 4 });
  });

  it.each([
    ['solo', 120],
    ['team', 300],
    ['business', 600],
  ] as const)('sets the ceiling from the plan: %s allows %i per minute', async (plan, ceiling) => {
    vi.spyOn(clock, 'now').mockReturnValue(windowStart + 1_000);
    const account = await provision({ plan });
    const response = await companyByDomain(account.key, 'stripe.com');
    expect(response.headers.get('ratelimit-limit')).toBe(String(ceiling));
  });
});
