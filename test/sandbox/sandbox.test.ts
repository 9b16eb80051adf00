import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { exampleOf } from '../../src/api/examples';
import { dataPathsOf } from '../../src/api/routes/data';
import { clock } from '../../src/core/clock';
import { centsFromUnits } from '../../src/core/money';
import { OPERATIONS } from '../../src/operations';
import { mintSandboxKey } from '../../src/services/sandbox-keys';
import { createExecutionContext } from 'cloudflare:test';
import api from '../../src/api';
import { bearer, call, eventually, json, ops, provision, wallet } from '../support/api';

/** Every fetch the worker makes while a test runs: a sandbox call must make none. */
function recordOutbound(): string[] {
  const realFetch = globalThis.fetch;
  const seen: string[] = [];
  vi.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    seen.push(request.url);
    return realFetch(request);
  });
  return seen;
}

afterEach(() => {
  vi.restoreAllMocks();
});

/** A request of an operation's documented example input on /runtime/data with the key. */
function runtimeCall(key: string, operation: (typeof OPERATIONS)[number], input: Record<string, unknown>): Promise<Response> {
  const path = dataPathsOf(operation, '/runtime/data/')[0]!;
  if (operation.method === 'GET') {
    const query = new URLSearchParams(Object.entries(input).map(([name, value]): [string, string] => [name, String(value)]));
    return call(`${path}?${query}`, bearer(key));
  }
  return call(path, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(input) });
}

const RUNTIME_OPERATIONS = OPERATIONS.filter((operation) => dataPathsOf(operation, '/runtime/data/').length > 0);

describe('sandbox keys (scope workspace_dryrun) on /runtime/data', () => {
  /** One account per 50 operations: a workspace's window (60 a minute without a plan) must not refuse the table. */
  const batches = Array.from({ length: Math.ceil(RUNTIME_OPERATIONS.length / 50) }, (_, index) => RUNTIME_OPERATIONS.slice(index * 50, index * 50 + 50));

  it.each(batches.map((batch, index) => [index + 1, batch] as const))(
    'answers every operation with its documented example at zero cost (batch %i): no vendor called, no plan, no credit, the wallet untouched',
    async (_, batch) => {
      const account = await provision({ plan: null, scope: 'workspace_dryrun' });
      const before = await wallet(account.organizationId);
      const outbound = recordOutbound();
      for (const operation of batch) {
        const example = exampleOf(operation)!;
        const response = await runtimeCall(account.key, operation, example.input);
        const body = await json(response);
        expect({ operation: `${operation.platform}/${operation.name}`, status: response.status }).toEqual({ operation: `${operation.platform}/${operation.name}`, status: 200 });
        expect(body.data).toEqual(example.data ?? null);
        const sent = operation.method === 'GET' ? Object.fromEntries(Object.entries(example.input).map(([name, value]) => [name, String(value)])) : example.input;
        expect(body.meta).toMatchObject({ sandbox: true, costCents: 0, quotedCents: centsFromUnits(operation.price.quote(operation.input.parse(sent))), cached: false });
      }
      expect(outbound).toEqual([]);
      vi.restoreAllMocks();
      const after = await wallet(account.organizationId);
      // Usage rows reach the wallet as captures of nothing; no hold, no money moved.
      const moved = after.ledger.filter(
        (entry: { kind: string; purchasedDeltaCents: number; subscriptionDeltaCents: number }) => entry.kind === 'hold' || entry.purchasedDeltaCents !== 0 || entry.subscriptionDeltaCents !== 0,
      );
      expect(moved).toEqual([]);
      expect(after).toMatchObject({ purchasedBalanceCents: before.purchasedBalanceCents, heldCents: 0 });

      const rows = await eventually(
        () => env.DB.prepare('SELECT operation, status, cost_units AS costUnits, sandbox FROM usage WHERE workspace_id = ?').bind(account.workspaceId).all(),
        (result) => result.results.length === batch.length,
      );
      expect(rows.results).toHaveLength(batch.length);
      for (const row of rows.results) expect(row).toMatchObject({ status: 200, costUnits: 0, sandbox: 1 });
    },
  );

  it('shows its calls apart in /v1/usage: marked sandbox, at cost 0', async () => {
    const account = await provision({ plan: null, scope: 'workspace_dryrun' });
    expect((await call('/runtime/data/linkedin/get-company-by-domain?domain=acme.example', bearer(account.key))).status).toBe(200);
    const live = await ops('POST', '/keys', { workspaceId: account.workspaceId, scope: 'workspace', name: 'reader' });
    const usage = await eventually(
      async () => json(await call('/v1/usage', bearer(live.body.data.key))),
      (body) => body.data.rows.length > 0,
    );
    expect(usage.data.rows[0]).toMatchObject({ operation: 'linkedin.get-company-by-domain', sandbox: true, costCents: 0, connectionId: null });
    // Kept out of the live totals and counted in the sandbox block, whether the range's sums come from the
    // call's own row (a partial hour at the range's edge) or from the hour's bucket (a whole hour inside it).
    const hour = 60 * 60 * 1000;
    const to = new Date(Math.ceil(Date.now() / hour) * hour + hour);
    const wholeHours = new URLSearchParams({ from: new Date(to.getTime() - 5 * hour).toISOString(), to: to.toISOString() });
    for (const report of [usage.data, (await json(await call(`/v1/usage?${wholeHours}`, bearer(live.body.data.key)))).data]) {
      expect(report.totals).toEqual({ calls: 0, succeeded: 0, failed: 0, costCents: 0 });
      expect(report.byOperation).toEqual([]);
      expect(report.sandbox).toEqual({ calls: 1, byOperation: [{ operation: 'linkedin.get-company-by-domain', calls: 1 }] });
    }
  });

  it('validates the input as a live call does: 400 VALIDATION_ERROR naming the field, nothing charged, the refusal counted as sandbox', async () => {
    const account = await provision({ plan: null, scope: 'workspace_dryrun' });
    // The last two are refused by a live call for what the URL lacks (a video id, a post id), not only its shape.
    for (const [path, field] of [
      ['/runtime/data/linkedin/get-company-by-domain?domain=', 'domain'],
      ['/runtime/data/youtube/screenshot?url=https://www.youtube.com/about&second=1', 'url'],
      ['/runtime/data/facebook/media-download?url=https://www.facebook.com/somepage', 'url'],
    ]) {
      const response = await call(path!, bearer(account.key));
      expect(response.status, path).toBe(400);
      const body = await json(response);
      expect(body.error.code).toBe('VALIDATION_ERROR');
      expect(body.error.details.map((detail: { field: string }) => detail.field)).toContain(field);
    }
    const rows = await eventually(
      () => env.DB.prepare('SELECT status, sandbox FROM usage WHERE workspace_id = ?').bind(account.workspaceId).all<{ status: number; sandbox: number }>(),
      (found) => found.results.length >= 3,
    );
    expect(rows.results).toEqual(Array.from({ length: 3 }, () => ({ status: 400, sandbox: 1 })));
  });

  it("refuses what the built-in scraper would, before answering: actions its browser does not run, keys it cannot press", async () => {
    const account = await provision({ plan: null, scope: 'workspace_dryrun' });
    const live = await provision({ plan: 'payg' });
    /** POST `path` with `key` to the api worker serving pages itself (the tests' settings name a Firecrawl key). */
    const post = (path: string, key: string, body: unknown) =>
      api.fetch(
        new Request(`http://sluice.test${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }),
        { ...env, WEB_PROVIDER: 'builtin' },
        createExecutionContext(),
      );
    const page = { url: 'https://example.com/', actions: [{ type: 'press', key: 'é' }, { type: 'executeJavascript', script: 'document.title' }] };
    for (const response of [await post('/runtime/data/web/scrape', account.key, page), await post('/v1/data/web/scrape', live.key, page)]) {
      expect(response.status).toBe(400);
      const body = await json(response);
      expect(body.error.details.map((detail: { field: string }) => detail.field), JSON.stringify(body)).toEqual(['actions[0].key', 'actions[1].type']);
    }
    // A data job of such scrapes is refused before it is queued, each item's fields named.
    const job = await post('/v1/data/agnt/jobs', live.key, { operation: 'web/scrape', inputs: [{ url: 'https://example.com/' }, page] });
    expect(job.status).toBe(400);
    expect((await json(job)).error.details.map((detail: { field: string }) => detail.field)).toEqual(['inputs[1].actions[0].key', 'inputs[1].actions[1].type']);
  });

  it("counts in the workspace's rate window like a live call: 429 RATE_LIMITED with Retry-After past the ceiling", async () => {
    // A held clock, mid-minute: the calls cannot straddle two windows on a slow machine.
    const now = Date.now();
    vi.spyOn(clock, 'now').mockReturnValue(now - (now % 60_000) + 30_000);
    const account = await provision({ plan: null, scope: 'workspace_dryrun' });
    const operation = OPERATIONS.find((entry) => entry.platform === 'linkedin' && entry.name === 'get-company-by-domain')!;
    let response = await runtimeCall(account.key, operation, { domain: 'acme.example' });
    const limit = Number(response.headers.get('ratelimit-limit'));
    expect(limit).toBeGreaterThan(0);
    for (let sent = 1; sent < limit; sent++) response = await runtimeCall(account.key, operation, { domain: 'acme.example' });
    expect(response.status).toBe(200);
    response = await runtimeCall(account.key, operation, { domain: 'acme.example' });
    expect(response.status).toBe(429);
    expect((await json(response)).error.code).toBe('RATE_LIMITED');
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('is refused on /v1 with 403, and /runtime/agent says a sandbox key belongs to no agent', async () => {
    const account = await provision({ plan: null, scope: 'workspace_dryrun' });
    const v1 = await call('/v1/data/linkedin/get-company-by-domain?domain=acme.example', bearer(account.key));
    expect(v1.status).toBe(403);
    expect((await json(v1)).error.message).toMatch(/workspace_dryrun/);
    const agent = await call('/runtime/agent', bearer(account.key));
    expect(agent.status).toBe(403);
    expect((await json(agent)).error.message).toMatch(/workspace_dryrun/);
  });

  it('stops working after 7 days: 401 UNAUTHORIZED saying it expired', async () => {
    const account = await provision({ plan: null });
    const minted = await mintSandboxKey(env, { workspaceId: account.workspaceId, name: 'builder', createdBy: null as unknown as string });
    const path = '/runtime/data/linkedin/get-company-by-domain?domain=acme.example';
    expect((await call(path, bearer(minted.key))).status).toBe(200);
    const realNow = clock.now;
    try {
      clock.now = () => Date.parse(minted.expiresAt) + 1;
      const response = await call(path, bearer(minted.key));
      expect(response.status).toBe(401);
      expect((await json(response)).error.message).toMatch(/expired/);
    } finally {
      clock.now = realNow;
    }
  });

  it('a meta_agent key stays refused on /runtime', async () => {
    const account = await provision({ plan: null, scope: 'meta_agent' });
    const response = await call('/runtime/data/linkedin/get-company-by-domain?domain=acme.example', bearer(account.key));
    expect(response.status).toBe(403);
  });
});
