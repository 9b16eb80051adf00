import { describe, expect, it } from 'vitest';
import { freshnessOf, timeLimitOf } from '../../src/core/operation';
import { webOperations } from '../../src/operations/web';
import { FAKE_FIRECRAWL, lastReceivedBy } from '../fakes/firecrawl';
import { funded, json, tool, wallet } from '../support/api';

const searchOperation = webOperations.find((operation) => operation.name === 'search')!;

/** A query no other test asks, so the fake's record of it is this test's own. */
function query(words = 'anvil makers'): string {
  return `${words} ${crypto.randomUUID()}`;
}

describe('POST /search', () => {
  it.each(['/search', '/v1/data/web/search'])('answers web results at result[0].web on %s, limit 10 by default, for 0.2 cents', async (path) => {
    const account = await funded(10, 'payg');
    const response = await tool(account.key, path, { query: query() });
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body.data.result).toHaveLength(1);
    const [results] = body.data.result;
    expect(Object.keys(results)).toEqual(['web']);
    expect(results.web).toHaveLength(10);
    expect(results.web[0]).toMatchObject({ url: 'https://site1.example/anvils', title: expect.any(String), description: expect.any(String), position: 1 });
    expect(body.meta).toMatchObject({ costCents: 0.2, purchasedBalanceCents: 9.8, cached: false });
  });

  it('answers one list per source asked for, each up to limit long', async () => {
    const account = await funded(10, 'payg');
    const body = await json(await tool(account.key, '/search', { query: query(), limit: 3, sources: ['web', { type: 'news' }, 'images'] }));
    const [results] = body.data.result;
    expect([results.web.length, results.news.length, results.images.length]).toEqual([3, 3, 3]);
    expect(results.news[0]).toMatchObject({ snippet: expect.any(String), date: expect.any(String) });
    expect(results.images[0]).toMatchObject({ imageUrl: expect.any(String), imageWidth: 1200 });
  });

  it('answers scraped content with each result when scrapeOptions is given', async () => {
    const account = await funded(10, 'payg');
    const body = await json(await tool(account.key, '/search', { query: query(), limit: 2, scrapeOptions: {} }));
    for (const hit of body.data.result[0].web) expect(hit.markdown).toMatch(/^# /);
  });

  it('sends Firecrawl POST /v2/search with our bearer key and every default applied', async () => {
    const account = await funded(10, 'payg');
    const asked = query();
    await tool(account.key, '/search', { query: asked });
    const sent = await lastReceivedBy('/v2/search', asked);
    expect(sent?.authorization).toBe(`Bearer ${FAKE_FIRECRAWL.key}`);
    expect(sent?.body).toEqual({ query: asked, limit: 10, sources: ['web'], country: 'US', timeout: 60_000 });
  });

  it('maps every field to Firecrawl, upper-casing the country and completing scrapeOptions', async () => {
    const account = await funded(10, 'payg');
    const asked = query();
    const request = {
      query: asked,
      limit: 4,
      sources: ['web', { type: 'news' }],
      categories: ['github', 'research'],
      tbs: 'qdr:d',
      location: 'Berlin,Germany',
      country: 'de',
      excludeDomains: ['pinterest.com', 'www.example.org'],
      timeout: 30_000,
      scrapeOptions: { formats: ['markdown', 'links'] },
    };
    expect((await tool(account.key, '/search', request)).status).toBe(200);
    expect((await lastReceivedBy('/v2/search', asked))?.body).toEqual({
      ...request,
      country: 'DE',
      // Each result is charged as one page: its PDF's first page only, and no escalation to the enhanced proxy.
      scrapeOptions: { formats: ['markdown', 'links'], onlyMainContent: true, parsers: [{ type: 'pdf', maxPages: 1 }], proxy: 'basic' },
    });
  });

  it('asks Firecrawl to scrape Markdown when scrapeOptions names no formats, so what is billed is scraped', async () => {
    const account = await funded(10, 'payg');
    const asked = query();
    await tool(account.key, '/search', { query: asked, scrapeOptions: { onlyMainContent: false }, includeDomains: ['acme.example'] });
    expect((await lastReceivedBy('/v2/search', asked))?.body).toMatchObject({
      includeDomains: ['acme.example'],
      scrapeOptions: { formats: ['markdown'], onlyMainContent: false },
    });
  });

  describe('price: 0.2 cents per 10 results returned, plus each scraped result as a scraped page', () => {
    // The fake knows 12 web, 5 news and 4 image results.
    it.each([
      ['10 web results', { limit: 10 }, 0.2],
      ['12 web results returned of 30 asked for (charged on what came back)', { limit: 30 }, 0.4],
      ['10 web and 5 news results', { limit: 10, sources: ['web', 'news'] }, 0.4],
      ['3 results from each of three sources', { limit: 3, sources: ['web', 'news', 'images'] }, 0.2],
      ['5 web results, each scraped', { limit: 5, scrapeOptions: {} }, 0.7],
      ['5 web results, each scraped with json extraction', { limit: 5, scrapeOptions: { formats: [{ type: 'json', prompt: 'Price of an anvil' }] } }, 2.7],
      ['10 scraped web results and 4 images, which are not scraped', { limit: 10, sources: ['web', 'images'], scrapeOptions: {} }, 1.4],
    ])('%s costs %s cents', async (_, options, cents) => {
      const account = await funded(10, 'payg');
      const body = await json(await tool(account.key, '/search', { query: query(), ...options }));
      expect(body.meta.costCents).toBe(cents);
      expect((await wallet(account.organizationId)).purchasedBalanceCents).toBeCloseTo(10 - cents, 10);
    });

    it('charges one results page for a search that found nothing', async () => {
      const account = await funded(10, 'payg');
      const body = await json(await tool(account.key, '/search', { query: query('no-results'), limit: 50, scrapeOptions: {} }));
      expect(body.data.result[0].web).toEqual([]);
      expect(body.meta.costCents).toBe(0.2);
    });

    it('holds the most the call can cost, limit × sources results all scraped, before asking', async () => {
      const account = await funded(1, 'payg');
      // 300 results: 30 results pages (6 cents) and 300 scraped pages (30 cents).
      const response = await tool(account.key, '/search', { query: query(), limit: 100, sources: ['web', 'news', 'images'], scrapeOptions: {} });
      expect(response.status).toBe(402);
      const { error } = await json(response);
      expect(error.code).toBe('INSUFFICIENT_CREDITS');
      expect(error.message).toContain('needs 36 cents');
    });
  });

  it('gives the upstream call the requested timeout plus 5 s of transport margin, and caches 15 minutes', () => {
    const input = searchOperation.input.parse({ query: 'anvils', timeout: 10_000 });
    expect(timeLimitOf(searchOperation, input)).toBe(15_000);
    expect(freshnessOf(searchOperation, input)).toBe(15 * 60 * 1000);
  });
});
