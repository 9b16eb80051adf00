import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clock } from '../src/core/clock';
import type { Env } from '../src/core/config';
import { ApiError } from '../src/core/errors';
import { createEndpoint } from '../src/services/webhooks/endpoints';
import { bearer, call, companyByDomain, expectReleasedUncharged, funded, json, provision } from './support/api';

/**
 * What a new user meets in the first minutes (issue 26): an organization without a plan is told the way
 * out and can still use what is free, and every refusal of a malformed request reads as a sentence.
 */
const APP_URL = (env as unknown as Env).APP_URL.replace(/\/+$/, '');

function databases(key: string, method = 'GET', body?: unknown) {
  return call('/v1/db/databases', {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('an organization without a plan', () => {
  it('answers a metered call 402 SUBSCRIPTION_REQUIRED naming the page that starts the trial, not a top-up', async () => {
    const account = await provision({ plan: null });
    const response = await companyByDomain(account.key, 'stripe.com');
    expect(response.status).toBe(402);
    const { error } = await json(response);
    expect(error.code).toBe('SUBSCRIPTION_REQUIRED');
    expect(error.message).toContain(`${APP_URL}/w/${account.workspaceId}/plans`);
    expect(error.message).toContain('free trial');
    expect(error.message).not.toMatch(/top up/i);
  });

  it("lists its databases (a free route) within the smallest plan's window, and names the plans page when it asks for one", async () => {
    const account = await provision({ plan: null });
    const listed = await databases(account.key);
    expect(listed.status).toBe(200);
    expect((await json(listed)).data).toEqual({ databases: [] });
    expect(listed.headers.get('ratelimit-limit')).toBe('60');

    const created = await databases(account.key, 'POST', { name: 'notes' });
    expect(created.status).toBe(402);
    const { error } = await json(created);
    expect(error.code).toBe('SUBSCRIPTION_REQUIRED');
    expect(error.message).toContain(`${APP_URL}/w/${account.workspaceId}/plans`);
  });

  it('is still limited: the 61st free call of a minute answers 429', async () => {
    // The window is a minute of the injectable clock: held still, 61 calls on a slow machine cannot straddle two.
    const now = Date.now();
    vi.spyOn(clock, 'now').mockReturnValue(now - (now % 60_000) + 30_000);
    const account = await provision({ plan: null });
    const statuses: number[] = [];
    for (let index = 0; index < 61; index++) statuses.push((await databases(account.key)).status);
    expect(statuses.slice(0, 59).every((status) => status === 200)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
  });
});

describe('refusals a person can read', () => {
  it('says malformed JSON once, without repeating the location', async () => {
    const account = await funded();
    const response = await call('/scrape', { method: 'POST', headers: { ...bearer(account.key).headers, 'content-type': 'application/json' }, body: '{"url": ' });
    expect(response.status).toBe(400);
    const { error } = await json(response);
    expect(error.message).toBe('Malformed JSON in request body.');
    expect(error.details).toEqual([{ field: 'body', location: 'body', message: 'Malformed JSON in request body.' }]);
    await expectReleasedUncharged(account.organizationId, 1000);
  });

  it('tells a form-encoded body to send content-type: application/json, on data routes and on the others (never a 500)', async () => {
    const account = await funded();
    const form = { ...bearer(account.key).headers, 'content-type': 'application/x-www-form-urlencoded' };
    const scrape = await call('/scrape', { method: 'POST', headers: form, body: 'url=https%3A%2F%2Fexample.com' });
    const hooks = await call('/v1/webhook-endpoints', { method: 'POST', headers: form, body: 'url=https%3A%2F%2Fexample.com&events=key.created' });
    for (const response of [scrape, hooks]) {
      expect(response.status).toBe(400);
      const { error } = await json(response);
      expect(error.code).toBe('VALIDATION_ERROR');
      expect(error.message).toContain('content-type: application/json');
      expect(error.message).toContain('application/x-www-form-urlencoded');
    }
  });

  it('names a field that is not a number as such, not as NaN', async () => {
    const account = await provision();
    const response = await call('/v1/usage?limit=abc', bearer(account.key));
    expect(response.status).toBe(400);
    const { error } = await json(response);
    expect(error.message).toBe('Invalid query field limit: Expected a number.');
    expect(error.details).toEqual([{ field: 'limit', location: 'query', message: 'Expected a number.' }]);
  });

  it('lists every offending field when there are several', async () => {
    const account = await provision();
    const response = await call('/v1/usage?limit=abc&from=yesterday', bearer(account.key));
    const { error } = await json(response);
    expect(error.details.map((detail: { field: string }) => detail.field).sort()).toEqual(['from', 'limit']);
    expect(error.message).toMatch(/^Invalid request: check query field (from|limit), query field (from|limit) \(see details\)\.$/);
  });
});

describe('where webhook events may go', () => {
  const target = { url: 'http://127.0.0.1:9/hook', events: ['key.created' as const] };

  it('is not widened by the scraper allowance: a private receiver needs WEBHOOK_ALLOW_PRIVATE_HOSTS', async () => {
    const account = await provision();
    const scrapeAllowed = { ...(env as unknown as Env), SCRAPE_ALLOW_PRIVATE_HOSTS: '127.0.0.1:9' } as Env;
    const refused = await createEndpoint(scrapeAllowed, account.workspaceId, target).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).code).toBe('VALIDATION_ERROR');
    expect((refused as ApiError).message).toContain('WEBHOOK_ALLOW_PRIVATE_HOSTS');

    const webhookAllowed = { ...(env as unknown as Env), WEBHOOK_ALLOW_PRIVATE_HOSTS: '127.0.0.1:9' } as Env;
    const created = await createEndpoint(webhookAllowed, account.workspaceId, target);
    expect(created.url).toBe(target.url);
  });
});

describe('GET / on the API', () => {
  it('sends a browser to the reference', async () => {
    const response = await call('/', { headers: { accept: 'text/html,application/xhtml+xml' }, redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/docs');
  });

  it('gives a program an index whose links answer', async () => {
    const response = await call('/');
    expect(response.status).toBe(200);
    const { data } = await json(response);
    expect(data.build).toBe((await json(await call('/health'))).data.build);
    for (const name of ['openapi', 'llmsTxt', 'platforms', 'plans', 'health', 'agentSetup', 'docs'] as const) {
      const path = new URL(data.links[name]).pathname;
      expect((await call(path)).status, name).toBe(200);
    }
  });
});

describe('the reference', () => {
  it('names the build /health reports, not only the package version', async () => {
    const build = (await json(await call('/health'))).data.build;
    const document = await json(await call('/openapi.json'));
    expect(document.info.description).toContain(`build ${build}`);
  });
});
