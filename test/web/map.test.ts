import { describe, expect, it } from 'vitest';
import { freshnessOf } from '../../src/core/operation';
import { webOperations } from '../../src/operations/web';
import { FAKE_FIRECRAWL, lastReceivedBy } from '../fakes/firecrawl';
import { funded, json, tool, wallet } from '../support/api';
import { answerAfter } from '../support/time-limits';

const mapOperation = webOperations.find((operation) => operation.name === 'map')!;

/** A site no other test asks for, so the fake's record of it is this test's own. */
function siteUrl(): string {
  return `https://acme.example/${crypto.randomUUID()}`;
}

describe('POST /map', () => {
  it.each(['/map', '/v1/data/web/map'])("answers the site's URLs at result[0].links on %s, for 0.1 cents", async (path) => {
    const account = await funded(10, 'payg');
    const response = await tool(account.key, path, { url: siteUrl() });
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body.data.result).toHaveLength(1);
    const { links } = body.data.result[0];
    expect(links).toHaveLength(10);
    expect(links[0]).toEqual({ url: 'https://acme.example/', title: 'Acme Anvils', description: 'The sturdiest anvils since 1949.' });
    expect(body.meta).toMatchObject({ costCents: 0.1, purchasedBalanceCents: 9.9, cached: false });
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(9.9);
  });

  it('sends Firecrawl POST /v2/map with our bearer key and every default applied, and no timeout of its own', async () => {
    const account = await funded(10, 'payg');
    const url = siteUrl();
    await tool(account.key, '/map', { url });
    const sent = await lastReceivedBy('/v2/map', url);
    expect(sent?.authorization).toBe(`Bearer ${FAKE_FIRECRAWL.key}`);
    expect(sent?.body).toEqual({ url, sitemap: 'include', includeSubdomains: true, ignoreQueryParameters: true, limit: 5000 });
  });

  it('maps every field to Firecrawl, upper-casing the location country, and answers at most limit URLs', async () => {
    const account = await funded(10, 'payg');
    const url = siteUrl();
    const request = {
      url,
      search: 'anvils',
      sitemap: 'only',
      includeSubdomains: false,
      ignoreQueryParameters: false,
      limit: 3,
      timeout: 20_000,
      location: { country: 'gb', languages: ['en-GB'] },
    };
    const body = await json(await tool(account.key, '/map', request));
    expect(body.data.result[0].links).toHaveLength(3);
    expect((await lastReceivedBy('/v2/map', url))?.body).toEqual({ ...request, location: { country: 'GB', languages: ['en-GB'] } });
  });

  it('answers an empty list, still charged, when the site has no URLs to find', async () => {
    const account = await funded(10, 'payg');
    const body = await json(await tool(account.key, '/map', { url: `https://no-results.example/${crypto.randomUUID()}` }));
    expect(body.data.result).toEqual([{ links: [] }]);
    expect(body.meta.costCents).toBe(0.1);
  });

  it.each([
    ['60 s by default', {}, 60_000],
    ['the requested timeout plus 5 s', { timeout: 20_000 }, 25_000],
  ])('waits for the upstream %s and no longer', async (_, options, limitMs) => {
    const attempt = async (elapsedMs: number) => {
      const url = `https://slow.example/${crypto.randomUUID()}`;
      const upstreamHasIt = async () => (await fetch(`${FAKE_FIRECRAWL.baseUrl}/__last?path=/v2/map&subject=${encodeURIComponent(url)}`)).status === 200;
      return answerAfter({ path: '/map', body: { url, ...options }, upstreamHasIt, elapsedMs });
    };
    expect((await attempt(limitMs - 1)).status).toBe(200);
    const cut = await attempt(limitMs);
    expect([cut.status, cut.body.error.code]).toEqual([502, 'PROVIDER_ERROR']);
    expect(cut.body.error.message).toMatch(/timed out/);
  });

  it('caches an hour', () => {
    expect(freshnessOf(mapOperation, mapOperation.input.parse({ url: 'https://acme.example/' }))).toBe(60 * 60 * 1000);
  });
});
