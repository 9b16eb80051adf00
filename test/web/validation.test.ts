import { beforeAll, describe, expect, it } from 'vitest';
import { lastReceivedBy } from '../fakes/firecrawl';
import { funded, json, tool, wallet, type Provisioned } from '../support/api';

const url = 'https://acme.example/';

/** [what is wrong, body, the fields the refusal must name, and what its message must say where that matters] */
type Refusal = [string, Record<string, unknown>, string[], RegExp?];

const SCRAPE: Refusal[] = [
  ['no url', {}, ['url']],
  ['a url that is not http(s)', { url: 'ftp://acme.example/file.txt' }, ['url']],
  ['a url without a scheme', { url: 'acme.example' }, ['url']],
  ['an unknown format preset', { url, formats: ['pdf'] }, ['formats[0]'], /one of markdown, summary, html/],
  ['an unknown format object', { url, formats: [{ type: 'branding' }] }, ['formats[0]']],
  ['an unknown field in a json format', { url, formats: [{ type: 'json', prompt: 'x', model: 'big' }] }, ['formats[0].model']],
  ['a json schema that is not an object', { url, formats: [{ type: 'json', schema: 'company name' }] }, ['formats[0]'], /^schema: expected record/],
  ['a screenshot quality of 0', { url, formats: [{ type: 'screenshot', quality: 0 }] }, ['formats[0].quality']],
  ['a screenshot quality of 101', { url, formats: [{ type: 'screenshot', quality: 101 }] }, ['formats[0].quality']],
  ['a fractional screenshot quality', { url, formats: [{ type: 'screenshot', quality: 50.5 }] }, ['formats[0]'], /^quality: expected int/],
  ['an unknown changeTracking mode', { url, formats: ['markdown', { type: 'changeTracking', modes: ['word-diff'] }] }, ['formats[1]'], /^modes\[0\]: Invalid option/],
  ['formats that is not an array', { url, formats: 'markdown' }, ['formats']],
  ['onlyMainContent that is not a boolean', { url, onlyMainContent: 'yes' }, ['onlyMainContent']],
  ['includeTags that is not an array', { url, includeTags: 'article' }, ['includeTags']],
  ['an excludeTags entry that is not a string', { url, excludeTags: [1] }, ['excludeTags[0]']],
  // A selector whose matching backtracks (depth to the power of its descendant and ~ combinators) is refused: 8 s on a page 60 deep.
  ['an includeTags selector with two descendant combinators', { url, includeTags: ['article', 'main article p'] }, ['includeTags[1]'], /more than one descendant \(space\) or ~ combinator/],
  ['an excludeTags selector with a descendant and a ~ combinator', { url, excludeTags: ['h2 ~ div span'] }, ['excludeTags[0]'], /more than one descendant/],
  ['a selector list whose second alternative has two descendant combinators', { url, excludeTags: ['nav, x div span'] }, ['excludeTags[0]'], /more than one descendant/],
  ['a descendant combinator inside :not()', { url, excludeTags: ['div:not(nav a)'] }, ['excludeTags[0]'], /inside :not\(\), :is\(\) or :where\(\)/],
  ['a selector with :has()', { url, includeTags: ['section:has(> h2)'] }, ['includeTags[0]'], /:has\(\)/],
  ['a selector that is not CSS', { url, includeTags: ['div[[['] }, ['includeTags[0]'], /is not a CSS selector/],
  ['six alternatives with a descendant combinator in one list', { url, includeTags: ['main p, main li', 'article h2', 'nav a, aside a, footer a'] }, ['includeTags'], /6 selectors .* at most 5 a list/],
  ['21 selectors', { url, includeTags: Array.from({ length: 21 }, (_, index) => `h${(index % 6) + 1}`) }, ['includeTags'], /At most 20 selectors/],
  ['a selector of 201 characters', { url, excludeTags: [`p${'.a'.repeat(100)}`] }, ['excludeTags[0]'], /201 characters long; at most 200/],
  ['a negative maxAge', { url, maxAge: -1 }, ['maxAge']],
  ['a fractional maxAge', { url, maxAge: 1.5 }, ['maxAge']],
  ['a negative waitFor', { url, waitFor: -1 }, ['waitFor']],
  ['mobile that is not a boolean', { url, mobile: 'true' }, ['mobile']],
  ['a timeout under 1000 ms', { url, timeout: 999 }, ['timeout']],
  ['a timeout over 300000 ms', { url, timeout: 300_001 }, ['timeout']],
  ['an unknown parser', { url, parsers: ['docx'] }, ['parsers[0]']],
  ['a PDF parser maxPages of 0', { url, parsers: [{ type: 'pdf', maxPages: 0 }] }, ['parsers[0].maxPages']],
  ['an unknown PDF parser mode', { url, parsers: [{ type: 'pdf', mode: 'slow' }] }, ['parsers[0]'], /^mode: Invalid option/],
  ['an unknown proxy', { url, proxy: 'stealth' }, ['proxy']],
  ['a json format whose schema is not of an object', { url, formats: [{ type: 'json', schema: { type: 'array', items: { type: 'string' } } }] }, ['formats[0].schema.type'], /describes an object/],
  ['a json format schema over 16,384 characters of JSON', { url, formats: [{ type: 'json', schema: { type: 'object', description: 'x'.repeat(16_384) } }] }, ['formats[0].schema'], /at most 16,384 characters of JSON/],
  ['a json format prompt over 10,000 characters', { url, formats: [{ type: 'json', prompt: 'x'.repeat(10_001) }] }, ['formats[0].prompt'], /10000/],
  ['a three-letter location country', { url, location: { country: 'USA' } }, ['location.country']],
  ['location languages that are not an array', { url, location: { country: 'US', languages: 'en-US' } }, ['location.languages']],
  ['an unknown location field', { url, location: { country: 'US', city: 'Denver' } }, ['location.city']],
  ['an unknown field', { url, crawlDepth: 2 }, ['crawlDepth']],
  ['several faults at once', { url: 'acme', timeout: 1, proxy: 'any', colour: 'red' }, ['colour', 'proxy', 'timeout', 'url']],
  ['a body that is not an object', [url] as unknown as Record<string, unknown>, ['body']],
];

const query = 'anvils';

const SEARCH: Refusal[] = [
  ['no query', {}, ['query']],
  ['an empty query', { query: '  ' }, ['query']],
  ['a query over 500 characters', { query: 'a'.repeat(501) }, ['query']],
  ['a limit of 0', { query, limit: 0 }, ['limit']],
  ['a limit of 101', { query, limit: 101 }, ['limit']],
  ['a fractional limit', { query, limit: 2.5 }, ['limit']],
  ['an unknown source', { query, sources: ['videos'] }, ['sources[0]']],
  ['a source object of an unknown type', { query, sources: [{ type: 'videos' }] }, ['sources[0]'], /web, news or images/],
  ['a source object with an unknown field', { query, sources: [{ type: 'web', tbs: 'qdr:d' }] }, ['sources[0].tbs']],
  ['no sources at all', { query, sources: [] }, ['sources']],
  ['an unknown category', { query, categories: ['blogs'] }, ['categories[0]']],
  ['tbs that is not a string', { query, tbs: 1 }, ['tbs']],
  ['location that is not a string', { query, location: { country: 'US' } }, ['location']],
  ['a three-letter country', { query, country: 'USA' }, ['country']],
  ['an includeDomains entry with a scheme', { query, includeDomains: ['https://acme.example'] }, ['includeDomains[0]']],
  ['an excludeDomains entry with a path', { query, excludeDomains: ['acme.example/blog'] }, ['excludeDomains[0]']],
  ['both includeDomains and excludeDomains', { query, includeDomains: ['acme.example'], excludeDomains: ['pinterest.com'] }, ['excludeDomains'], /mutually exclusive/],
  ['a timeout under 1000 ms', { query, timeout: 999 }, ['timeout']],
  ['an unknown scrapeOptions format', { query, scrapeOptions: { formats: ['pdf'] } }, ['scrapeOptions.formats[0]']],
  ['an unknown scrapeOptions field', { query, scrapeOptions: { proxy: 'enhanced' } }, ['scrapeOptions.proxy']],
  ['an unknown field', { query, safe: true }, ['safe']],
  ['a body of null', null as unknown as Record<string, unknown>, ['body']],
  ['several faults at once', { query, limit: 0, includeDomains: ['acme.example'], excludeDomains: ['b.example'], page: 2 }, ['excludeDomains', 'limit', 'page']],
  ['both domain lists beside faults of type', { query: 7, sources: [{ type: 'videos' }], includeDomains: ['acme.example'], excludeDomains: ['b.example'] }, ['excludeDomains', 'query', 'sources[0]']],
];

const MAP: Refusal[] = [
  ['no url', {}, ['url']],
  ['a url that is not http(s)', { url: 'mailto:sales@acme.example' }, ['url']],
  ['an empty search', { url, search: '' }, ['search']],
  ['an unknown sitemap mode', { url, sitemap: 'all' }, ['sitemap']],
  ['includeSubdomains that is not a boolean', { url, includeSubdomains: 'no' }, ['includeSubdomains']],
  ['ignoreQueryParameters that is not a boolean', { url, ignoreQueryParameters: 1 }, ['ignoreQueryParameters']],
  ['a limit of 0', { url, limit: 0 }, ['limit']],
  ['a limit over 100000', { url, limit: 100_001 }, ['limit']],
  ['a timeout under 1000 ms', { url, timeout: 999 }, ['timeout']],
  ['a location country that is not letters', { url, location: { country: 'U1' } }, ['location.country']],
  ['an unknown field', { url, crawl: true }, ['crawl']],
];

describe('validation of the web tools: 400 VALIDATION_ERROR naming each offending field, never charged', () => {
  let account: Provisioned;
  let before: { purchasedBalanceCents: number; subscriptionRemainingCents: number };

  beforeAll(async () => {
    account = await funded(10);
    before = await wallet(account.organizationId);
  });

  async function expectRefused(path: string, body: Record<string, unknown>, fields: string[], message?: RegExp) {
    const response = await tool(account.key, path, body);
    expect(response.status).toBe(400);
    const { error } = await json(response);
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.details.map((detail: { field: string }) => detail.field).sort()).toEqual(fields);
    for (const detail of error.details) expect(detail).toMatchObject({ location: 'body', message: expect.any(String) });
    if (message) expect(error.details[0].message).toMatch(message);
    const after = await wallet(account.organizationId);
    expect(after).toMatchObject({ purchasedBalanceCents: before.purchasedBalanceCents, subscriptionRemainingCents: before.subscriptionRemainingCents, heldCents: 0 });
    expect(after.ledger.filter((entry: { kind: string }) => entry.kind === 'hold')).toEqual([]);
  }

  describe.each([
    ['/scrape', SCRAPE],
    ['/search', SEARCH],
    ['/map', MAP],
  ] as const)('%s', (path, refusals) => {
    it.each(refusals)('refuses %s', async (_, body, fields, message) => {
      await expectRefused(path, body, fields, message);
    });
  });

  it('refuses a body that is not an object, saying so in a sentence', async () => {
    for (const [body, kind] of [[[], 'array'], [null, 'null'], ['page', 'string']] as const) {
      const { error } = await json(await tool(account.key, '/scrape', JSON.stringify(body)));
      expect(error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'body', location: 'body', message: `Expected object, received ${kind}.` }] });
    }
  });

  it('refuses at /v1/data/web/scrape exactly as at /scrape', async () => {
    await expectRefused('/v1/data/web/scrape', { url, proxy: 'stealth' }, ['proxy']);
  });

  it('never sends a refused call to Firecrawl', async () => {
    const page = `https://acme.example/${crypto.randomUUID()}`;
    await expectRefused('/scrape', { url: page, timeout: 999 }, ['timeout']);
    expect(await lastReceivedBy('/v2/scrape', page)).toBeUndefined();
  });

  it('accepts lower-case country codes and both source forms', async () => {
    const other = await funded(10);
    const response = await tool(other.key, '/search', { query, country: 'gb', sources: ['web', { type: 'news' }] });
    expect(response.status).toBe(200);
  });
});
