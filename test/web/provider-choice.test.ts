import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { buildApiApp } from '../../src/api';
import type { Env } from '../../src/core/config';
import { lastReceivedBy } from '../fakes/firecrawl';
import { funded, json, wallet } from '../support/api';

/** A tool call through the app with some settings changed, as an installation configured otherwise would answer it. */
async function callWith(settings: Partial<Env>, key: string, path: string, body: unknown): Promise<Response> {
  return await buildApiApp().fetch(
    new Request(`http://sluice.test${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
    { ...env, ...settings },
    createExecutionContext(),
  );
}

const BODIES = {
  '/scrape': () => ({ url: `https://acme.example/${crypto.randomUUID()}` }),
  '/search': () => ({ query: `anvils ${crypto.randomUUID()}` }),
  '/map': () => ({ url: `https://acme.example/${crypto.randomUUID()}` }),
};

async function expectUnavailable(response: Response, organizationId: string, ...named: string[]) {
  expect(response.status).toBe(503);
  const { error } = await json(response);
  expect(error.code).toBe('PROVIDER_UNAVAILABLE');
  for (const name of named) expect(error.message).toContain(name);
  expect(response.headers.get('retry-after')).toBe(String(error.retryAfter));
  expect(await wallet(organizationId)).toMatchObject({ purchasedBalanceCents: 10, heldCents: 0 });
}

describe('which provider serves the web tools', () => {
  it.each(['/scrape', '/search', '/map'] as const)('%s answers 503 PROVIDER_UNAVAILABLE naming FIRECRAWL_API_KEY when it is not set, uncharged', async (path) => {
    const account = await funded(10, 'payg');
    const response = await callWith({ FIRECRAWL_API_KEY: undefined }, account.key, path, BODIES[path]());
    await expectUnavailable(response, account.organizationId, 'FIRECRAWL_API_KEY');
  });

  it.each(['/scrape', '/map'] as const)('%s answers 503 under WEB_PROVIDER=builtin until the built-in provider exists, even with a Firecrawl key', async (path) => {
    const account = await funded(10, 'payg');
    const body = BODIES[path]();
    const response = await callWith({ WEB_PROVIDER: 'builtin' }, account.key, path, body);
    await expectUnavailable(response, account.organizationId, 'WEB_PROVIDER', 'FIRECRAWL_API_KEY');
    expect(await lastReceivedBy(`/v2${path}`, body.url)).toBeUndefined();
  });

  it('/search still uses Firecrawl under WEB_PROVIDER=builtin', async () => {
    const account = await funded(10, 'payg');
    const response = await callWith({ WEB_PROVIDER: 'builtin' }, account.key, '/search', BODIES['/search']());
    expect(response.status).toBe(200);
  });

  it('/scrape uses Firecrawl under WEB_PROVIDER=firecrawl', async () => {
    const account = await funded(10, 'payg');
    const response = await callWith({ WEB_PROVIDER: 'firecrawl' }, account.key, '/scrape', BODIES['/scrape']());
    expect(response.status).toBe(200);
  });

  it('keeps the path of a self-hosted FIRECRAWL_BASE_URL', async () => {
    const account = await funded(10, 'payg');
    const body = BODIES['/map']();
    await callWith({ FIRECRAWL_BASE_URL: 'https://firecrawl.fake/firecrawl/' }, account.key, '/map', body);
    expect(await lastReceivedBy('/firecrawl/v2/map', body.url)).toMatchObject({ body: { url: body.url } });
  });
});
