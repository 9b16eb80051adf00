import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import worker from '../../src/api';
import { ApiError } from '../../src/core/errors';
import { parseDocument } from '../../src/providers/builtin-web/dom';
import { toMarkdown } from '../../src/providers/builtin-web/markdown';
import { PAGE_BOUNDS, PageBudget } from '../../src/providers/builtin-web/page-bounds';
import { scrapeWithBuiltin } from '../../src/providers/builtin-web/scrape';
import { nestedPage, widePage } from '../fakes/web-sites';
import { call, companyByDomain, funded, json, ops, wallet } from '../support/api';
import { signal, streamedPage, web, webEnv } from './support';

const NEWS = 'https://news.example.com';

async function refusal(url: string, site = web()): Promise<ApiError> {
  const outcome = await scrapeWithBuiltin({ url }, { env: webEnv(), signal: signal(), fetch: site.fetch }).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(ApiError);
  return outcome as ApiError;
}

describe('the built-in scraper bounds its own work', () => {
  it.each([600, 5_000, 100_000])('refuses a page nested %i deep with 422 PROVIDER_ERROR naming the depth bound', async (depth) => {
    const error = await refusal(`${NEWS}/nested/${depth}`);
    expect(error.status).toBe(422);
    expect(error.code).toBe('PROVIDER_ERROR');
    expect(error.message).toContain(`nests elements more than ${PAGE_BOUNDS.maxDepth} deep`);
  });

  it('stops reading a hostile page at the bound: the upstream body is cancelled after its first kilobytes, never read whole', async () => {
    const page = streamedPage(nestedPage(100_000));
    const site = web();
    site.setResponse(`${NEWS}/streamed`, page.response);
    const outcome = await scrapeWithBuiltin({ url: `${NEWS}/streamed` }, { env: webEnv(), signal: signal(), fetch: site.fetch }).catch((error: unknown) => error);
    expect(outcome).toMatchObject({ status: 422, message: expect.stringContaining(`nests elements more than ${PAGE_BOUNDS.maxDepth} deep`) });
    expect(page.served.cancelled).toBe(true);
    // The bound is passed within the first kilobyte; what was pulled beyond it is the slices read ahead.
    expect(page.served.bytes).toBeLessThan(64 * 1024);
    expect(page.served.total).toBeGreaterThan(1_000_000);
  });

  it.each([
    ['one element carrying 200,000 attributes', `<html><body><div ${Array.from({ length: 200_000 }, (_, index) => `a${index}="x"`).join(' ')}>Hello</div></body></html>`, `a tag is longer than ${PAGE_BOUNDS.maxTagBytes / 1024} KB`],
    ['one element carrying 1,000 short attributes', `<html><body><div ${Array.from({ length: 1_000 }, (_, index) => `a${index}`).join(' ')}>Hello</div>${'<p>More of the page.</p>'.repeat(5_000)}</body></html>`, `more than ${PAGE_BOUNDS.maxAttributesPerElement} attributes`],
    ['many elements of many attributes each', `<html><body>${`<p ${Array.from({ length: 200 }, (_, index) => `a${index}`).join(' ')}>x</p>`.repeat(1_000)}</body></html>`, `more than ${PAGE_BOUNDS.maxAttributes.toLocaleString('en-US')} attributes`],
  ])('refuses %s with 422 within its first slices, before any DOM is built', async (_, html, bound) => {
    const page = streamedPage(html);
    const site = web();
    site.setResponse(`${NEWS}/attributes`, page.response);
    const outcome = await scrapeWithBuiltin({ url: `${NEWS}/attributes` }, { env: webEnv(), signal: signal(), fetch: site.fetch }).catch((error: unknown) => error);
    expect(outcome).toMatchObject({ status: 422, message: expect.stringContaining(bound) });
    expect(page.served.cancelled).toBe(true);
    expect(page.served.bytes).toBeLessThan(page.served.total);
  });

  it('reads a page nested just within the depth bound (turndown converts it without overflowing)', async () => {
    const result = await scrapeWithBuiltin({ url: `${NEWS}/nested/${PAGE_BOUNDS.maxDepth - 4}`, onlyMainContent: false }, { env: webEnv(), signal: signal(), fetch: web().fetch });
    const [page] = (result.data as { result: { markdown: string }[] }).result;
    expect(page!.markdown).toBe('Deep down there is one line.');
  });

  it('converts content to Markdown up to the depth bound and refuses deeper content with 422, whatever built it', () => {
    const nested = (depth: number) => parseDocument(`${'<div>'.repeat(depth - 1)}<p>At the bottom.</p>${'</div>'.repeat(depth - 1)}<p>Beside it.</p>`).body!;
    expect(toMarkdown(nested(PAGE_BOUNDS.maxDepth))).toBe('At the bottom.\n\nBeside it.');
    expect(() => toMarkdown(nested(PAGE_BOUNDS.maxDepth + 1))).toThrow(
      expect.objectContaining({ status: 422, message: expect.stringContaining(`nests elements ${PAGE_BOUNDS.maxDepth + 1} deep`) }),
    );
  });

  it('chooses the main content of a deep page without Readability, whose work grows with elements times depth, and says so', async () => {
    const site = web();
    const paragraphs = '<p>A line of the story, long enough to be read as content by any measure.</p>'.repeat(400);
    site.setPage(`${NEWS}/deep-story`, `<html><head><title>Deep</title></head><body>${'<div>'.repeat(100)}${paragraphs}${'</div>'.repeat(100)}</body></html>`);
    const result = await scrapeWithBuiltin({ url: `${NEWS}/deep-story` }, { env: webEnv(), signal: signal(), fetch: site.fetch });
    const [page] = (result.data as { result: { markdown: string; warning?: string }[] }).result;
    expect(page!.markdown.split('\n\n')).toHaveLength(400);
    expect(page!.warning).toContain('504 elements nested 103 deep and no single <main> or <article>');
  });

  it('refuses a page of more elements than the bound with 422 naming it', async () => {
    const error = await refusal(`${NEWS}/wide/${PAGE_BOUNDS.maxElements + 10}`);
    expect(error.status).toBe(422);
    expect(error.message).toContain(`more than ${PAGE_BOUNDS.maxElements.toLocaleString('en-US')} elements`);
  });

  it('counts the elements left after scripts, styles, vector art and comments are stripped while streaming', async () => {
    const site = web();
    const stripped = `<script>${'<p>x</p>'.repeat(PAGE_BOUNDS.maxElements)}</script><svg>${'<g></g>'.repeat(PAGE_BOUNDS.maxElements)}</svg><!-- ${'<p>'.repeat(200)} -->`;
    site.setPage(`${NEWS}/padded`, widePage(100).replace('</main>', `${stripped}</main>`));
    const result = await scrapeWithBuiltin({ url: `${NEWS}/padded`, formats: ['html'] }, { env: webEnv(), signal: signal(), fetch: site.fetch });
    const [page] = (result.data as { result: { html: string }[] }).result;
    expect(page!.html).toContain('<h1>Wide</h1>');
    expect(page!.html).not.toMatch(/<script|<svg|<!--/);
  });

  it('stops a page whose stages pass the time budget with 422 naming the budget, between stages', async () => {
    const budget = new PageBudget('https://slow.example/', signal(), 5);
    await budget.stage('a quick stage', () => 1);
    const busy = () => {
      const until = performance.now() + 20;
      while (performance.now() < until);
    };
    const outcome = await budget.stage('parsing', busy).catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(ApiError);
    expect((outcome as ApiError).status).toBe(422);
    expect((outcome as ApiError).message).toContain('more than the 5 ms budget (stopped after parsing)');
  });

  it('serves hostile pages from the fake web at their stated size (a 600-deep page is about 7 KB)', () => {
    expect(nestedPage(600).length).toBeGreaterThan(6_000);
    expect(nestedPage(600).length).toBeLessThan(8_000);
  });
});

/** The api worker with the built-in provider serving /scrape, as on a machine without a Firecrawl key. */
function builtinScrape(key: string, url: string): Promise<Response> {
  const builtinEnv = { ...env, WEB_PROVIDER: 'builtin', FIRECRAWL_API_KEY: undefined };
  const request = new Request('http://sluice.test/scrape', {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url }),
  });
  return Promise.resolve(worker.fetch(request, builtinEnv as typeof env, createExecutionContext()));
}

function p99(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil(sorted.length * 0.99) - 1]!;
}

describe('a hostile page being scraped does not stall the api worker', () => {
  const ROUNDS = 60;

  /** Hostile answers that must come back while the probes run: on a fast machine, 60 rounds can end before the second. */
  const SCRAPES = ROUNDS / 10;
  /** Rounds at most, for a machine that scrapes slowly (the prober's 50 dollars cover both probes'). */
  const MOST_ROUNDS = 2_000;

  /**
   * A millisecond between one client's requests. The probes and the cached benign scrapes never leave workerd (the
   * gates, the wallets and the cache all run in it, as the test does), so back to back they would keep its event
   * loop from ever polling its sockets or timers: whatever waits on them (a scrape's fetch, the test's time limit)
   * would starve, and the test would hang or prove nothing.
   */
  const pause = () => new Promise((resolve) => setTimeout(resolve, 1));

  /**
   * /health and a metered call, one of each at a time, ROUNDS times and until the scrapers have had SCRAPES
   * answers, while two clients of another organization scrape `page` one scrape after another (each answer
   * starts the next a millisecond later). The metered call asks for the same record every time: answered from
   * the response cache it is still metered (window, hold, capture, usage row) but never waits on the fake
   * upstream, which shares a Node process with the page server; what is measured is the worker.
   */
  async function probeWhileScraping(probeKey: string, scraperKey: string, page: string) {
    let scraping = true;
    const answers: Response[] = [];
    const scraper = async () => {
      while (scraping) {
        answers.push(await builtinScrape(scraperKey, page));
        await pause();
      }
    };
    const scrapers = [scraper(), scraper()];
    const health: number[] = [];
    const metered: number[] = [];
    for (let round = 0; round < MOST_ROUNDS && (round < ROUNDS || answers.length <= SCRAPES); round++) {
      const started = performance.now();
      const [healthResponse, meteredResponse] = await Promise.all([
        call('/health').then((response) => (health.push(performance.now() - started), response)),
        companyByDomain(probeKey, 'probe.example.com').then((response) => (metered.push(performance.now() - started), response)),
      ]);
      expect(healthResponse.status).toBe(200);
      expect(meteredResponse.status).toBe(200);
      expect((await json(meteredResponse)).meta).toMatchObject({ costCents: 1, cached: true });
      await pause();
    }
    scraping = false;
    await Promise.all(scrapers);
    return { health: p99(health), metered: p99(metered), answers, rounds: metered.length };
  }

  it.each([600, 5_000, 100_000])('keeps /health and a metered call answering, never stalled behind it, while pages nested %i deep are scraped', async (depth) => {
    const [account, attacker, neighbour] = await Promise.all([funded(5_000, 'payg'), funded(100, 'payg'), funded(1_000, 'payg')]);
    // Pay as you go (purchased balance only, so charges are plain to see) with a ceiling the probes cannot reach.
    for (const { organizationId } of [account, attacker, neighbour]) await ops('PUT', `/organizations/${organizationId}/plan`, { plan: 'payg', rpm: 100_000 });
    // The first calls start the organization's objects and fill the response cache; that is not measured.
    for (let round = 0; round < 5; round++) await Promise.all([call('/health'), companyByDomain(account.key, 'probe.example.com')]);

    // The control: the same load with a harmless page of the same size (answered and charged), on this machine, now.
    const benign = await probeWhileScraping(account.key, neighbour.key, `${NEWS}/plain-text/${nestedPage(depth).length}`);
    const hostile = await probeWhileScraping(account.key, attacker.key, `${NEWS}/nested/${depth}`);

    expect(benign.answers.every((answer) => answer.status === 200)).toBe(true);
    expect(hostile.answers.length).toBeGreaterThan(SCRAPES);
    for (const answer of hostile.answers) {
      expect(answer.status).toBe(422);
      const body = await json(answer);
      expect(body.error.code).toBe('PROVIDER_ERROR');
      expect(body.error.message).toContain(`more than ${PAGE_BOUNDS.maxDepth} deep`);
    }
    // Billed zero: the attacker's wallet is untouched; the prober paid 1 cent per metered call.
    expect(await wallet(attacker.organizationId)).toMatchObject({ purchasedBalanceCents: 100, heldCents: 0 });
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBeCloseTo(5_000 - 5 - benign.rounds - hostile.rounds, 5);

    // What this test proves is that nothing stalls: before the bounds, a page like this held the isolate for
    // seconds (6 s at depth 600, forever at 5,000). The 50 ms p99 aim is a speed target, measured by
    // `npm run bench` on workerd's own sockets; a timed assertion here would only measure how busy the machine
    // is (a full suite on 2 cores, two files at a time, puts a harmless page's p99 anywhere from 50 to 300
    // ms). A stall is seconds: a second is far below it and far above the noise.
    expect(hostile.health).toBeLessThan(Math.max(1_000, 3 * benign.health));
    expect(hostile.metered).toBeLessThan(Math.max(1_000, 3 * benign.metered));
  }, 90_000);
});
