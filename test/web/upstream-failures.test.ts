import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { buildApiApp } from '../../src/api';
import { lastReceivedBy } from '../fakes/firecrawl';
import { funded, json, tool, wallet, expectReleasedUncharged } from '../support/api';

/** Each endpoint with a request whose subject provokes the fake's failure class `name`. */
const ENDPOINTS = {
  '/scrape': (name: string) => ({ url: `https://${name}.example/${crypto.randomUUID()}` }),
  '/search': (name: string) => ({ query: `${name} anvils ${crypto.randomUUID()}` }),
  '/map': (name: string) => ({ url: `https://${name}.example/${crypto.randomUUID()}` }),
} as const;

type Path = keyof typeof ENDPOINTS;

const FAILURES = [
  ['a 400 refusal of the request', 'fail-400', 400, 'PROVIDER_ERROR', /rejected the request \(HTTP 400\): Bad Request/],
  ['a 402 for our exhausted Firecrawl credits', 'fail-402', 503, 'UPSTREAM_CREDITS_EXHAUSTED', /quota of this service is exhausted/],
  ['a 403 for a site it does not scrape (not our key)', 'fail-403', 403, 'PROVIDER_ERROR', /rejected the request \(HTTP 403\): This website is no longer supported/],
  ['a 408 for its own time limit', 'fail-408', 502, 'PROVIDER_ERROR', /timed out \(HTTP 408\)/],
  ['a 429 rate limit', 'fail-429', 429, 'PROVIDER_ERROR', /HTTP 429\): Rate limit exceeded/],
  ['a 500', 'fail-500', 502, 'PROVIDER_ERROR', /HTTP 500/],
  ['a 200 with success:false', 'success-false', 422, 'PROVIDER_ERROR', /All scraping engines failed/],
  ['a 200 that is not JSON', 'not-json', 502, 'PROVIDER_ERROR', /not JSON/],
  ['a connection dropped mid-answer', 'network', 502, 'PROVIDER_ERROR', /Firecrawl failed/],
] as const;

const CASES = (Object.keys(ENDPOINTS) as Path[]).flatMap((path) => FAILURES.map(([label, name, status, code, message]) => [path, label, name, status, code, message] as const));

describe('Firecrawl failures: each class answers its code and status, billed zero with the hold released', () => {
  it.each(CASES)('%s: %s becomes %s', async (path, _, name, status, code, message) => {
    const account = await funded(10, 'payg');
    const response = await tool(account.key, path, ENDPOINTS[path](name));
    expect(response.status).toBe(status);
    const { error } = await json(response);
    expect(error.code).toBe(code);
    expect(error.message).toMatch(message);
    // An upstream that failed may answer a little later: the spec's "back off" is said with a wait.
    if (status === 502) {
      expect(error.retryAfter).toBeGreaterThan(0);
      expect(response.headers.get('retry-after')).toBe(String(error.retryAfter));
    }
    await expectReleasedUncharged(account.organizationId, 10);
  });

  it('passes Firecrawl Retry-After through on a 429 rate limit, as a header and as retryAfter', async () => {
    const account = await funded(10, 'payg');
    const response = await tool(account.key, '/scrape', ENDPOINTS['/scrape']('fail-429'));
    expect(response.headers.get('retry-after')).toBe('7');
    expect((await json(response)).error.retryAfter).toBe(7);
  });

  it('answers 502 when Firecrawl cannot be reached at all, and charges nothing', async () => {
    const account = await funded(10, 'payg');
    const response = await buildApiApp().fetch(
      new Request('http://sluice.test/map', {
        method: 'POST',
        headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: 'https://acme.example/' }),
      }),
      // A scheme fetch cannot speak: the call fails before any answer, as on a refused connection.
      { ...env, FIRECRAWL_BASE_URL: 'ftp://firecrawl.fake' },
      createExecutionContext(),
    );
    expect(response.status).toBe(502);
    const { error } = await json(response);
    expect(error.code).toBe('PROVIDER_ERROR');
    expect(error.message).toMatch(/network error/);
    expect(await wallet(account.organizationId)).toMatchObject({ purchasedBalanceCents: 10, heldCents: 0 });
  });

  it('answers 502 when Firecrawl refuses our own key, without showing its reason, and charges nothing', async () => {
    const account = await funded(10, 'payg');
    const url = `https://acme.example/${crypto.randomUUID()}`;
    const response = await buildApiApp().fetch(
      new Request('http://sluice.test/scrape', {
        method: 'POST',
        headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url }),
      }),
      { ...env, FIRECRAWL_API_KEY: 'fc-revoked-key' },
      createExecutionContext(),
    );
    expect(response.status).toBe(502);
    const { error } = await json(response);
    expect(error.code).toBe('PROVIDER_ERROR');
    expect(error.message).toMatch(/could not authenticate upstream/);
    expect(error.message).not.toMatch(/Invalid token|fc-revoked-key/);
    expect((await lastReceivedBy('/v2/scrape', url))?.authorization).toBe('Bearer fc-revoked-key');
    expect(await wallet(account.organizationId)).toMatchObject({ purchasedBalanceCents: 10, heldCents: 0 });
  });
});
