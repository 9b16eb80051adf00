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
  const ARTICLE = 'https://news.example.com/2026/harbour-dredging';

  it('/scrape is served by the built-in provider when no Firecrawl key is set: Markdown, 0.1 cent', async () => {
    const account = await funded(10, 'payg');
    const response = await callWith({ FIRECRAWL_API_KEY: undefined }, account.key, '/scrape', { url: ARTICLE });
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body.data.result[0].markdown).toMatch(/^# /m);
    expect(body.data.result[0].metadata).toMatchObject({ sourceURL: ARTICLE, statusCode: 200 });
    expect(body.meta.costCents).toBe(0.1);
  });

  it('a default /scrape the built-in provider serves holds no enhanced proxy, which it has not: 1 cent covers it', async () => {
    // Held at the most it can cost: 10 PDF pages (1.0 cent), without Firecrawl's 0.4-cent proxy surcharge.
    const account = await funded(1, 'payg');
    const served = await callWith({ FIRECRAWL_API_KEY: undefined }, account.key, '/scrape', { url: ARTICLE });
    expect(served.status).toBe(200);
    expect((await json(served)).meta).toMatchObject({ costCents: 0.1, purchasedBalanceCents: 0.9 });
    // Through Firecrawl the same call holds the surcharge too, and 0.9 cents left cannot cover it.
    const refused = await callWith({}, account.key, '/scrape', { url: ARTICLE });
    expect(refused.status).toBe(402);
    expect((await json(refused)).error.message).toContain('needs 1.4 cents');
  });

  it('/map is served by the built-in provider when no Firecrawl key is set', async () => {
    const account = await funded(10, 'payg');
    const response = await callWith({ FIRECRAWL_API_KEY: undefined }, account.key, '/map', { url: 'https://www.map.example.com/' });
    expect(response.status).toBe(200);
    const links = (await json(response)).data.result[0].links as { url: string }[];
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) expect(new URL(link.url).hostname).toMatch(/map\.example\.com$/);
  });

  it('WEB_PROVIDER=builtin wins over a Firecrawl key, which is then not called', async () => {
    const account = await funded(10, 'payg');
    const response = await callWith({ WEB_PROVIDER: 'builtin' }, account.key, '/scrape', { url: ARTICLE });
    expect(response.status).toBe(200);
    expect((await json(response)).data.result[0].metadata.sourceURL).toBe(ARTICLE);
    expect(await lastReceivedBy('/v2/scrape', ARTICLE)).toBeUndefined();
  });

  it('refuses a private target through the REST route with 400 VALIDATION_ERROR on url, uncharged', async () => {
    const account = await funded(10, 'payg');
    const response = await callWith({ FIRECRAWL_API_KEY: undefined }, account.key, '/scrape', { url: 'http://169.254.169.254/latest/meta-data/' });
    expect(response.status).toBe(400);
    expect((await json(response)).error.details).toEqual([expect.objectContaining({ field: 'url', location: 'body' })]);
    expect(await wallet(account.organizationId)).toMatchObject({ purchasedBalanceCents: 10, heldCents: 0 });
  });

  it('does not charge the built-in provider\'s json-mode change tracking as an LLM extraction', async () => {
    const account = await funded(10, 'payg');
    const response = await callWith({ FIRECRAWL_API_KEY: undefined }, account.key, '/scrape', {
      url: 'https://news.example.com/tracked',
      formats: ['markdown', { type: 'changeTracking', modes: ['json'] }],
    });
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body.data.result[0].changeTracking.changeStatus).toBe('new');
    expect(body.meta.costCents).toBe(0.1);
  });

  it('/search needs FIRECRAWL_API_KEY: 503 PROVIDER_UNAVAILABLE naming it, uncharged', async () => {
    const account = await funded(10, 'payg');
    const response = await callWith({ FIRECRAWL_API_KEY: undefined }, account.key, '/search', BODIES['/search']());
    await expectUnavailable(response, account.organizationId, 'FIRECRAWL_API_KEY');
  });

  it.each(['/scrape', '/map'] as const)('%s under WEB_PROVIDER=firecrawl without a key answers 503 naming FIRECRAWL_API_KEY', async (path) => {
    const account = await funded(10, 'payg');
    const response = await callWith({ WEB_PROVIDER: 'firecrawl', FIRECRAWL_API_KEY: undefined }, account.key, path, BODIES[path]());
    await expectUnavailable(response, account.organizationId, 'FIRECRAWL_API_KEY');
  });

  it('/search still uses Firecrawl under WEB_PROVIDER=builtin', async () => {
    const account = await funded(10, 'payg');
    const response = await callWith({ WEB_PROVIDER: 'builtin' }, account.key, '/search', BODIES['/search']());
    expect(response.status).toBe(200);
  });

  it('/scrape uses Firecrawl when its key is set', async () => {
    const account = await funded(10, 'payg');
    const body = BODIES['/scrape']();
    const response = await callWith({}, account.key, '/scrape', body);
    expect(response.status).toBe(200);
    expect(await lastReceivedBy('/v2/scrape', body.url)).toMatchObject({ body: { url: body.url } });
  });

  it('keeps the path of a self-hosted FIRECRAWL_BASE_URL', async () => {
    const account = await funded(10, 'payg');
    const body = BODIES['/map']();
    await callWith({ FIRECRAWL_BASE_URL: 'https://firecrawl.fake/firecrawl/' }, account.key, '/map', body);
    expect(await lastReceivedBy('/firecrawl/v2/map', body.url)).toMatchObject({ body: { url: body.url } });
  });
});
