import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildApiApp } from '../../src/api';
import { FAKE_DATAFORSEO } from '../fakes/dataforseo';
import { funded, json, tool, wallet, expectReleasedUncharged } from '../support/api';
import { watchCacheStores } from '../support/cache';

afterEach(() => {
  vi.restoreAllMocks();
});

const unique = () => crypto.randomUUID().slice(0, 8);

/** A body for each operation in which `marker` reaches the upstream task. */
const BODIES: Record<string, (marker: string) => unknown> = {
  '/serp': (marker) => ({ keyword: marker }),
  '/keyword-ideas': (marker) => ({ keywords: [marker] }),
  '/keyword-overview': (marker) => ({ keywords: [marker] }),
  '/keyword-gap': (marker) => ({ target1: `${marker}.com`, target2: 'rival.com' }),
  '/ranked-keywords': (marker) => ({ target: `${marker}.com` }),
  '/competitors': (marker) => ({ target: `${marker}.com` }),
  '/referring-domains': (marker) => ({ target: `${marker}.com` }),
  '/backlink-gap': (marker) => ({ targets: [`${marker}.com`] }),
  '/backlinks-summary': (marker) => ({ target: `${marker}.com` }),
  '/domain-overview': (marker) => ({ target: `${marker}.com` }),
  '/tech-search': (marker) => ({ technologies: [marker] }),
  '/ai-visibility': (marker) => ({ keywords: [marker] }),
  '/chatgpt-api-answer': (marker) => ({ user_prompt: marker }),
  '/perplexity-api-answer': (marker) => ({ user_prompt: marker }),
  '/claude-api-answer': (marker) => ({ user_prompt: marker }),
  '/chatgpt-app-answer': (marker) => ({ keyword: marker }),
};

const expectNothingCharged = (organizationId: string) => expectReleasedUncharged(organizationId, 100);

describe('DataForSEO failures are normalized, billed zero and their hold released', () => {
  it.each([
    ['a task status 40501 in an HTTP 200 (the request was wrong)', 'fail-40501', 422, 'PROVIDER_ERROR', /Invalid Field/],
    ['a task status 40400 in an HTTP 200', 'fail-40400', 422, 'PROVIDER_ERROR', /Not Found/],
    ['a task status 40200: our balance is out', 'fail-40200', 503, 'UPSTREAM_CREDITS_EXHAUSTED', /quota/],
    ['a task status 40203: our daily cost limit is reached', 'fail-40203', 503, 'UPSTREAM_CREDITS_EXHAUSTED', /quota/],
    ['a task status 40202 of the same money-and-limits family', 'fail-40202', 503, 'UPSTREAM_CREDITS_EXHAUSTED', /quota/],
    ['a request status 40200 (top level)', 'topfail-40200', 503, 'UPSTREAM_CREDITS_EXHAUSTED', /quota/],
    ['a task status 50000 (the vendor failed)', 'fail-50000', 502, 'PROVIDER_ERROR', /status 50000/],
    ['a request status 50301 (top level)', 'topfail-50301', 502, 'PROVIDER_ERROR', /status 50301/],
    ['an HTTP 402', 'http-402', 503, 'UPSTREAM_CREDITS_EXHAUSTED', /quota/],
    ['an HTTP 500', 'http-500', 502, 'PROVIDER_ERROR', /HTTP 500/],
    ['an HTTP 404', 'http-404', 404, 'PROVIDER_ERROR', /HTTP 404/],
    ['a task status 40100: our credential refused', 'fail-40100', 502, 'PROVIDER_ERROR', /could not authenticate upstream/],
    ['a 200 whose body is not JSON', 'not-json', 502, 'PROVIDER_ERROR', /not JSON/],
    // A connection that fails for real is proved against npm start (test/node/reference.test.ts): a fake
    // that throws in here reaches the worker as an HTTP 500, the row above.
  ])('%s (%s) becomes %i %s', async (_, marker, status, code, message) => {
    const account = await funded(100, 'payg');
    const response = await tool(account.key, '/keyword-ideas', { keywords: [`${marker} ${unique()}`] });
    expect(response.status).toBe(status);
    const { error } = await json(response);
    expect(error.code).toBe(code);
    expect(error.message).toMatch(message);
    if (status === 503) expect(response.headers.get('retry-after')).toBe(String(error.retryAfter));
    await expectNothingCharged(account.organizationId);
  });

  it('hides the detail of our own refused credential from the caller', async () => {
    const account = await funded(100, 'payg');
    const { error } = await json(await tool(account.key, '/serp', { keyword: `fail-40100 ${unique()}` }));
    expect(error.message).not.toMatch(/login|api-access/i);
  });

  it('passes the vendor message of a rejected task to the caller', async () => {
    const account = await funded(100, 'payg');
    const { error } = await json(await tool(account.key, '/serp', { keyword: `fail-40501 ${unique()}` }));
    expect(error.message).toBe("DataForSEO could not answer this request: Invalid Field: 'target'.");
  });

  it.each(Object.keys(BODIES))('%s normalizes like every other operation (task 40501 is 422, HTTP 402 is 503), uncharged', async (path) => {
    const account = await funded(100, 'payg');
    const rejected = await tool(account.key, path, BODIES[path]!(`fail-40501-${unique()}`));
    expect([rejected.status, (await json(rejected)).error.code]).toEqual([422, 'PROVIDER_ERROR']);
    const exhausted = await tool(account.key, path, BODIES[path]!(`http-402-${unique()}`));
    expect([exhausted.status, (await json(exhausted)).error.code]).toEqual([503, 'UPSTREAM_CREDITS_EXHAUSTED']);
    const after = await wallet(account.organizationId);
    expect(after).toMatchObject({ purchasedBalanceCents: 100, heldCents: 0 });
  });

  it('never caches a failure: the retry reaches the upstream, and its success is what gets cached', async () => {
    const account = await funded(100, 'payg');
    const marker = `flaky-${unique()}`;
    // The fake fails the first call of a flaky task and answers the ones after.
    const stores = watchCacheStores();
    expect((await tool(account.key, '/keyword-ideas', { keywords: [marker] })).status).toBe(502);
    const retried = await json(await tool(account.key, '/keyword-ideas', { keywords: [marker] }));
    expect([retried.success, retried.meta.cached]).toEqual([true, false]);
    await stores.stored(1);
    expect((await json(await tool(account.key, '/keyword-ideas', { keywords: [marker] }))).meta.cached).toBe(true);
    const received = await json(await fetch(`${FAKE_DATAFORSEO.baseUrl}/__received?path=${encodeURIComponent('/v3/dataforseo_labs/google/keyword_ideas/live')}&marker=${marker}`));
    expect(received.count).toBe(2);
  });
});

describe('DataForSEO settings', () => {
  async function callWith(settings: Record<string, string | undefined>) {
    const account = await funded(100, 'payg');
    const context = createExecutionContext();
    const response = await buildApiApp().fetch(
      new Request('http://sluice.test/serp', {
        method: 'POST',
        headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ keyword: `settings ${unique()}` }),
      }),
      { ...env, ...settings },
      context,
    );
    await waitOnExecutionContext(context);
    return { account, response };
  }

  it('answers 503 PROVIDER_UNAVAILABLE naming DATAFORSEO_LOGIN when it is not set, uncharged', async () => {
    const { account, response } = await callWith({ DATAFORSEO_LOGIN: undefined });
    expect(response.status).toBe(503);
    const { error } = await json(response);
    expect(error.code).toBe('PROVIDER_UNAVAILABLE');
    expect(error.message).toContain('DATAFORSEO_LOGIN');
    expect(error.message).not.toContain('DATAFORSEO_PASSWORD');
    expect(response.headers.get('retry-after')).toBe(String(error.retryAfter));
    await expectNothingCharged(account.organizationId);
  });

  it('names both settings when both are missing', async () => {
    const { response } = await callWith({ DATAFORSEO_LOGIN: undefined, DATAFORSEO_PASSWORD: undefined });
    const { error } = await json(response);
    expect(error.code).toBe('PROVIDER_UNAVAILABLE');
    expect(error.message).toContain('DATAFORSEO_LOGIN and DATAFORSEO_PASSWORD');
  });

  it('treats a password the upstream refuses (HTTP 401) as our fault: 502 without detail, uncharged', async () => {
    const { account, response } = await callWith({ DATAFORSEO_PASSWORD: 'wrong-password' });
    expect(response.status).toBe(502);
    const { error } = await json(response);
    expect(error.code).toBe('PROVIDER_ERROR');
    expect(error.message).toMatch(/could not authenticate upstream/);
    await expectNothingCharged(account.organizationId);
  });

  it('reaches the upstream at DATAFORSEO_BASE_URL, a trailing slash or not', async () => {
    const { response } = await callWith({ DATAFORSEO_BASE_URL: 'https://dataforseo.fake/' });
    expect(response.status).toBe(200);
    const elsewhere = await callWith({ DATAFORSEO_BASE_URL: 'https://elsewhere.fake' });
    expect(elsewhere.response.status).toBe(502);
  });
});
