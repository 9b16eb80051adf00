import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { bearer, call, companyByDomain, credit, eventually, json, ops, provision } from '../support/api';
import { MAX_SPAN_DAYS } from '../../src/services/usage-report';
import { startAMinute } from '../support/held-minute';

afterEach(() => {
  vi.restoreAllMocks();
});

async function usage(key: string, query = '') {
  const response = await call(`/v1/usage${query}`, bearer(key));
  return { status: response.status, body: await json(response) };
}

async function rowsOf(workspaceId: string) {
  const result = await env.DB.prepare('SELECT COUNT(*) AS n FROM usage WHERE workspace_id = ?').bind(workspaceId).first<{ n: number }>();
  return result!.n;
}

describe('GET /v1/usage', () => {
  it("totals the workspace's calls, per operation, with paginated rows newest first", async () => {
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 3 });
    for (const domain of ['stripe.com', 'rejected.com', 'stripe.com', 'stripe.com']) await companyByDomain(account.key, domain);
    await eventually(() => rowsOf(account.workspaceId), (count) => count === 4);

    const first = await usage(account.key, '?limit=3');
    expect(first.status).toBe(200);
    expect(first.body.data.totals).toEqual({ calls: 4, succeeded: 3, failed: 1, costCents: 3 });
    expect(first.body.data.byOperation).toEqual([{ operation: 'linkedin.get-company-by-domain', calls: 4, succeeded: 3, failed: 1, costCents: 3 }]);
    expect(first.body.data.rows).toHaveLength(3);
    expect(first.body.data.nextCursor).toEqual(expect.any(String));

    const second = await usage(account.key, `?limit=3&cursor=${first.body.data.nextCursor}`);
    expect(second.body.data.rows).toHaveLength(1);
    expect(second.body.data.nextCursor).toBeNull();
    const rows = [...first.body.data.rows, ...second.body.data.rows];
    expect(new Set(rows.map((row: { id: string }) => row.id)).size).toBe(4);
    const times = rows.map((row: { createdAt: string }) => row.createdAt);
    expect(times).toEqual([...times].sort().reverse());
    expect(rows.filter((row: { status: number }) => row.status === 200)).toHaveLength(3);
    expect(rows).toContainEqual(expect.objectContaining({ status: 422, errorCode: 'PROVIDER_ERROR', costCents: 0, keyId: account.keyId }));
    expect(rows).toContainEqual(expect.objectContaining({ operation: 'linkedin.get-company-by-domain', status: 200, costCents: 1, cached: false }));
  });

  it('records refusals that never reached the wallet, and leaves out calls refused by the rate window', async () => {
    startAMinute();
    const account = await provision();
    await ops('PUT', `/organizations/${account.organizationId}/plan`, { plan: 'payg', rpm: 1 });
    await call('/v1/data/linkedin/get-company-by-domain?domain=', bearer(account.key));
    await companyByDomain(account.key, 'stripe.com');
    await companyByDomain(account.key, 'stripe.com');
    const rows = await eventually(
      () => env.DB.prepare('SELECT status, error_code AS errorCode FROM usage WHERE workspace_id = ? ORDER BY status').bind(account.workspaceId).all(),
      (result) => result.results.length >= 2,
    );
    // The refused hold (402, no credits) and the validation error are recorded; the 429 is not.
    expect(rows.results).toEqual([
      { status: 400, errorCode: 'VALIDATION_ERROR' },
      { status: 402, errorCode: 'INSUFFICIENT_CREDITS' },
    ]);
  });

  it('shows only the calling workspace', async () => {
    const busy = await provision();
    await credit(busy.organizationId, { purchasedCents: 1 });
    await companyByDomain(busy.key, 'stripe.com');
    await eventually(() => rowsOf(busy.workspaceId), (count) => count === 1);
    const quiet = await provision();
    const { body } = await usage(quiet.key);
    expect(body.data.totals.calls).toBe(0);
    expect(body.data.rows).toEqual([]);
  });

  it('filters by from/to', async () => {
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 1 });
    await companyByDomain(account.key, 'stripe.com');
    await eventually(() => rowsOf(account.workspaceId), (count) => count === 1);
    const past = await usage(account.key, '?from=2020-01-01T00:00:00Z&to=2020-02-01T00:00:00Z');
    expect(past.body.data.totals.calls).toBe(0);
    const now = await usage(account.key, `?from=${new Date(Date.now() - 60_000).toISOString()}`);
    expect(now.body.data.totals.calls).toBe(1);
  });

  it('refuses a bad range, limit or cursor with 400 VALIDATION_ERROR naming each', async () => {
    const account = await provision();
    const bad = await usage(account.key, '?from=yesterday&limit=0');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((detail: { field: string }) => detail.field).sort()).toEqual(['from', 'limit']);
    const reversed = await usage(account.key, '?from=2025-02-01T00:00:00Z&to=2025-01-01T00:00:00Z');
    expect(reversed.body.error.details[0]).toMatchObject({ field: 'from', location: 'query' });
    // A range of years would read a row per day and operation used: 400 days at most.
    const to = Date.parse('2026-11-01T00:00:00Z');
    const span = (days: number) => usage(account.key, `?from=${new Date(to - days * 86_400_000).toISOString()}&to=${new Date(to).toISOString()}`);
    const years = await span(MAX_SPAN_DAYS + 1);
    expect(years.status).toBe(400);
    expect(years.body.error.details[0]).toMatchObject({ field: 'from', location: 'query', message: expect.stringContaining(`At most ${MAX_SPAN_DAYS} days`) });
    expect((await span(MAX_SPAN_DAYS)).status).toBe(200);
    const cursor = await usage(account.key, '?cursor=garbage');
    expect(cursor.body.error.details[0]).toMatchObject({ field: 'cursor', location: 'query' });
  });

  it('is not rate limited', async () => {
    const account = await provision();
    const responses = await Promise.all(Array.from({ length: 65 }, () => call('/v1/usage', bearer(account.key))));
    expect(responses.every((response) => response.status === 200)).toBe(true);
    expect(responses[0]!.headers.get('ratelimit-limit')).toBeNull();
  });
});
