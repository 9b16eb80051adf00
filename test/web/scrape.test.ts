import { afterEach, describe, expect, it, vi } from 'vitest';
import { clock } from '../../src/core/clock';
import { freshnessOf } from '../../src/core/operation';
import { centsFromUnits } from '../../src/core/money';
import { DEFAULT_PDF_PAGES } from '../../src/core/web-inputs';
import { webOperations } from '../../src/operations/web';
import { FAKE_FIRECRAWL, lastReceivedBy } from '../fakes/firecrawl';
import { funded, json, tool, wallet } from '../support/api';
import { watchCacheStores } from '../support/cache';
import { answerAfter } from '../support/time-limits';

const scrapeOperation = webOperations.find((operation) => operation.name === 'scrape')!;

/** A page no other test asks for, so the fake's record of it is this test's own. */
function pageUrl(): string {
  return `https://acme.example/${crypto.randomUUID()}`;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('POST /scrape', () => {
  it.each(['/scrape', '/v1/data/web/scrape'])('answers the page in Markdown at result[0] on %s, with its metadata, for 0.1 cents', async (path) => {
    const account = await funded(10, 'payg');
    const url = pageUrl();
    const response = await tool(account.key, path, { url });
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body.success).toBe(true);
    expect(body.data.result).toHaveLength(1);
    const [page] = body.data.result;
    expect(page.markdown).toMatch(/^# Acme Anvils/);
    expect(page.html).toBeUndefined();
    expect(page.metadata).toMatchObject({ title: 'Acme Anvils', sourceURL: url, statusCode: 200 });
    expect(body.meta).toMatchObject({ costCents: 0.1, purchasedBalanceCents: 9.9, cached: false });
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(9.9);
  });

  it('answers every requested format: html, rawHtml, links, images, summary, json, screenshot, changeTracking', async () => {
    const account = await funded(10, 'payg');
    const formats = ['markdown', 'html', 'rawHtml', 'links', 'images', 'summary', { type: 'json', prompt: 'Company name and founding year' }, { type: 'screenshot' }, { type: 'changeTracking' }];
    const body = await json(await tool(account.key, '/scrape', { url: pageUrl(), formats }));
    const [page] = body.data.result;
    expect(page.html).toContain('<h1>Acme Anvils</h1>');
    expect(page.rawHtml).toMatch(/^<!DOCTYPE html>/);
    expect(page.links).toContain('https://acme.example/anvils/classic');
    expect(page.images).toEqual(['https://acme.example/img/anvil.jpg']);
    expect(page.summary).toMatch(/anvils/);
    expect(page.json).toEqual({ company: 'Acme Anvils', founded: 1949 });
    expect(page.screenshot).toMatch(/^https:\/\//);
    expect(page.changeTracking).toMatchObject({ changeStatus: 'new' });
  });

  it('sends Firecrawl POST /v2/scrape with our bearer key and every default applied', async () => {
    const account = await funded(10, 'payg');
    const url = pageUrl();
    await tool(account.key, '/scrape', { url });
    const sent = await lastReceivedBy('/v2/scrape', url);
    expect(sent?.authorization).toBe(`Bearer ${FAKE_FIRECRAWL.key}`);
    expect(sent?.body).toEqual({
      url,
      formats: ['markdown'],
      onlyMainContent: true,
      maxAge: 172_800_000,
      waitFor: 0,
      mobile: false,
      timeout: 60_000,
      // Firecrawl reads every page of a PDF unless told: the bound the quote holds is always named.
      parsers: [{ type: 'pdf', maxPages: DEFAULT_PDF_PAGES }],
      proxy: 'auto',
      blockAds: true,
    });
  });

  it('maps every field to Firecrawl, upper-casing the location country', async () => {
    const account = await funded(10, 'payg');
    const url = pageUrl();
    const request = {
      url,
      formats: ['markdown', { type: 'screenshot', fullPage: true, quality: 80 }, { type: 'changeTracking', modes: ['git-diff'] }],
      onlyMainContent: false,
      includeTags: ['article', '.content'],
      excludeTags: ['#ads'],
      maxAge: 3_600_000,
      waitFor: 1500,
      mobile: true,
      timeout: 20_000,
      parsers: [{ type: 'pdf', mode: 'ocr', maxPages: 5 }],
      proxy: 'basic',
      location: { country: 'de', languages: ['de-DE', 'en'] },
      actions: [
        { type: 'wait', selector: '#price' },
        { type: 'click', selector: 'button.more', all: true },
        { type: 'write', text: 'anvils' },
        { type: 'press', key: 'Enter' },
        { type: 'scroll', direction: 'down' },
        { type: 'screenshot', fullPage: true },
        { type: 'scrape' },
        { type: 'executeJavascript', script: 'document.title' },
      ],
      blockAds: false,
    };
    const response = await tool(account.key, '/scrape', request);
    expect(response.status).toBe(200);
    expect((await lastReceivedBy('/v2/scrape', url))?.body).toEqual({ ...request, location: { country: 'DE', languages: ['de-DE', 'en'] } });
    // Firecrawl's captures of the actions are answered where the built-in provider puts its own.
    const [page] = (await json(response)).data.result;
    expect(page.actions).toEqual({
      screenshots: ['https://storage.firecrawl.fake/screenshots/action-0.png'],
      scrapes: [{ url, html: expect.stringContaining('Acme Anvils') }],
      javascriptReturns: [{ type: 'string', value: 'ran 14 characters' }],
      pdfs: [],
    });
  });

  it('takes a location with languages and no country, and Firecrawl chooses its own', async () => {
    const account = await funded(10, 'payg');
    const url = pageUrl();
    expect((await tool(account.key, '/scrape', { url, location: { languages: ['fr-FR'] } })).status).toBe(200);
    expect((await lastReceivedBy('/v2/scrape', url))?.body).toMatchObject({ location: { languages: ['fr-FR'] } });
    expect(((await lastReceivedBy('/v2/scrape', url))?.body as { location: object }).location).not.toHaveProperty('country');
  });

  it('tracks changes without markdown in formats: Firecrawl is asked for the Markdown it compares, and the answer has only what was asked', async () => {
    const account = await funded(10, 'payg');
    const url = pageUrl();
    const response = await tool(account.key, '/scrape', { url, formats: ['html', { type: 'changeTracking' }] });
    expect(response.status).toBe(200);
    const [page] = (await json(response)).data.result;
    expect(page.changeTracking).toMatchObject({ changeStatus: 'new' });
    expect(page.html).toEqual(expect.any(String));
    expect(page).not.toHaveProperty('markdown');
    expect((await lastReceivedBy('/v2/scrape', url))?.body).toMatchObject({ formats: ['html', { type: 'changeTracking' }, 'markdown'] });
  });

  describe("price: a page is 0.1 cents, a PDF's further pages 0.1 each; LLM extraction and the enhanced proxy cost 0.4 cents more each", () => {
    it.each([
      ['markdown only', { formats: ['markdown'] }, 0.1],
      ['every non-extracting format', { formats: ['markdown', 'summary', 'html', 'rawHtml', 'links', 'images', { type: 'screenshot' }] }, 0.1],
      ['a json format', { formats: ['markdown', { type: 'json', schema: { type: 'object', properties: { company: { type: 'string' } } } }] }, 0.5],
      ['changeTracking in json mode', { formats: ['markdown', { type: 'changeTracking', modes: ['json'] }] }, 0.5],
      ['changeTracking in git-diff mode', { formats: ['markdown', { type: 'changeTracking', modes: ['git-diff'] }] }, 0.1],
      ['proxy enhanced', { proxy: 'enhanced' }, 0.5],
      ['proxy basic', { proxy: 'basic' }, 0.1],
      ['a json format through the enhanced proxy', { formats: [{ type: 'json', prompt: 'Company name' }], proxy: 'enhanced' }, 0.9],
      ['proxy auto on a page the basic proxy is refused by (Firecrawl escalates)', { proxy: 'auto' }, 0.5, 'anti-bot'],
      [`a PDF of 25 pages, read to the default ${DEFAULT_PDF_PAGES}`, {}, 0.1 * DEFAULT_PDF_PAGES, 'pdf-25-pages'],
      ['a PDF of 25 pages with maxPages 3', { parsers: [{ type: 'pdf', maxPages: 3 }] }, 0.3, 'pdf-25-pages'],
      ['a PDF of 2 pages with maxPages 50', { parsers: [{ type: 'pdf', maxPages: 50 }] }, 0.2, 'pdf-2-pages'],
      ['a PDF as a file (parsers [])', { parsers: [] }, 0.1, 'pdf-25-pages'],
      ['an x.com page (Firecrawl runs its X postprocessing)', { url: `https://x.com/acme/status/${Date.now()}` }, 3.0],
      ['a twitter.com page through the basic proxy', { url: `https://mobile.twitter.com/acme/status/${Date.now()}`, proxy: 'basic' }, 3.0],
    ])('%s costs %s cents', async (_, options, cents, page = '') => {
      const account = await funded(10, 'payg');
      const body = await json(await tool(account.key, '/scrape', { url: `${pageUrl()}${page}`, ...options }));
      expect(body.meta.costCents).toBe(cents);
      expect((await wallet(account.organizationId)).purchasedBalanceCents).toBeCloseTo(10 - cents, 10);
    });

    it.each([
      [`a default scrape: ${DEFAULT_PDF_PAGES} PDF pages and the enhanced proxy`, {}, 0.1 * DEFAULT_PDF_PAGES + 0.4],
      ['a PDF of at most 100 pages through the basic proxy', { parsers: [{ type: 'pdf', maxPages: 100 }], proxy: 'basic' }, 10],
    ])('holds the most the call can cost before asking, %s: %s cents', async (_, options, cents) => {
      const account = await funded(Math.ceil(cents) - 1, 'payg');
      const response = await tool(account.key, '/scrape', { url: pageUrl(), ...options });
      expect(response.status).toBe(402);
      expect((await json(response)).error.message).toContain(`needs ${Number(cents.toFixed(2))} cents`);
      // The least it can cost asks no more than a page.
      expect((await tool(account.key, '/scrape', { url: pageUrl(), parsers: [], proxy: 'basic' })).status).toBe(200);
    });

    it(`says so when a PDF was read only to the default ${DEFAULT_PDF_PAGES} pages, and not when the caller named the bound`, async () => {
      const account = await funded(10, 'payg');
      const read = await json(await tool(account.key, '/scrape', { url: `${pageUrl()}pdf-25-pages` }));
      expect(read.data.result[0].warning).toBe(`Only the first ${DEFAULT_PDF_PAGES} of 25 pages were read (maxPages, ${DEFAULT_PDF_PAGES} unless parsers names more ([{type: "pdf", maxPages}])).`);
      const named = await json(await tool(account.key, '/scrape', { url: `${pageUrl()}pdf-25-pages`, parsers: [{ type: 'pdf', maxPages: 3 }] }));
      expect(named.data.result[0].warning).toBe('Only the first 3 of 25 pages were read (maxPages).');
    });

    it("answers, through proxy basic, the refusal page a site gives the basic proxy, charged as the one page Firecrawl bills", async () => {
      const account = await funded(10, 'payg');
      const body = await json(await tool(account.key, '/scrape', { url: `${pageUrl()}anti-bot`, proxy: 'basic' }));
      expect(body.data.result[0].metadata).toMatchObject({ statusCode: 403, proxyUsed: 'basic' });
      expect(body.meta.costCents).toBe(0.1);
    });

    it.each([
      ['parsers [] through the basic proxy', { parsers: [], proxy: 'basic' }, 0.1],
      ['a PDF of at most 3 pages through the basic proxy', { parsers: [{ type: 'pdf', maxPages: 3 }], proxy: 'basic' }, 0.3],
      ['the default', {}, 0.1 * DEFAULT_PDF_PAGES + 0.4],
    ])('quotes %s at %s cents', (_, options, cents) => {
      const operation = webOperations.find((candidate) => candidate.name === 'scrape')!;
      expect(centsFromUnits(operation.price.quote(operation.input.parse({ url: pageUrl(), ...options })))).toBe(Number(cents.toFixed(2)));
    });
  });

  describe('the cache: maxAge is how old an answer may be', () => {
    it('answers an identical scrape from cache with meta.cached true, without a new upstream scrape', async () => {
      const account = await funded(10, 'payg');
      const url = pageUrl();
      const stores = watchCacheStores();
      const first = await json(await tool(account.key, '/scrape', { url }));
      await stores.stored(1);
      const second = await json(await tool(account.key, '/scrape', { url }));
      expect(first.meta.cached).toBe(false);
      expect(second.meta.cached).toBe(true);
      // The fake gives every scrape its own scrapeId: the same id means Firecrawl was not asked again.
      expect(second.data.result[0].metadata.scrapeId).toBe(first.data.result[0].metadata.scrapeId);
    });

    it('fetches afresh on every call with maxAge 0, and tells Firecrawl maxAge 0', async () => {
      const account = await funded(10, 'payg');
      const url = pageUrl();
      const first = await json(await tool(account.key, '/scrape', { url, maxAge: 0 }));
      const second = await json(await tool(account.key, '/scrape', { url, maxAge: 0 }));
      expect([first.meta.cached, second.meta.cached]).toEqual([false, false]);
      expect(second.data.result[0].metadata.scrapeId).not.toBe(first.data.result[0].metadata.scrapeId);
      expect((await lastReceivedBy('/v2/scrape', url))?.body).toMatchObject({ maxAge: 0 });
    });

    it('fetches afresh once the cached answer is older than maxAge', async () => {
      const account = await funded(10, 'payg');
      const url = pageUrl();
      const stores = watchCacheStores();
      const first = await json(await tool(account.key, '/scrape', { url, maxAge: 60_000 }));
      await stores.stored(1);
      vi.spyOn(clock, 'now').mockReturnValue(Date.now() + 61_000);
      const later = await json(await tool(account.key, '/scrape', { url, maxAge: 60_000 }));
      expect(later.meta.cached).toBe(false);
      expect(later.data.result[0].metadata.scrapeId).not.toBe(first.data.result[0].metadata.scrapeId);
    });

    it('still answers from cache a minute later under the default maxAge of two days', async () => {
      const account = await funded(10, 'payg');
      const url = pageUrl();
      const stores = watchCacheStores();
      await tool(account.key, '/scrape', { url });
      await stores.stored(1);
      vi.spyOn(clock, 'now').mockReturnValue(Date.now() + 61_000);
      expect((await json(await tool(account.key, '/scrape', { url }))).meta.cached).toBe(true);
    });
  });

  it.each([
    ['the default timeout (60 s) plus 5 s', {}, 65_000],
    ['the requested timeout plus 5 s', { timeout: 20_000 }, 25_000],
  ])('waits for the upstream %s and no longer', async (_, options, limitMs) => {
    const attempt = async (elapsedMs: number) => {
      const url = `https://slow.example/${crypto.randomUUID()}`;
      const upstreamHasIt = async () => (await fetch(`${FAKE_FIRECRAWL.baseUrl}/__last?path=/v2/scrape&subject=${encodeURIComponent(url)}`)).status === 200;
      return answerAfter({ path: '/scrape', body: { url, ...options }, upstreamHasIt, elapsedMs });
    };
    expect((await attempt(limitMs - 1)).status).toBe(200);
    const cut = await attempt(limitMs);
    expect([cut.status, cut.body.error.code]).toEqual([502, 'PROVIDER_ERROR']);
    expect(cut.body.error.message).toMatch(/timed out/);
  });

  it('caches for maxAge', () => {
    expect(freshnessOf(scrapeOperation, scrapeOperation.input.parse({ url: 'https://acme.example/', maxAge: 5_000 }))).toBe(5_000);
  });
});
