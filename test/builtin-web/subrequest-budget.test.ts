import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { Env } from '../../src/core/config';
import type { RenderedPage, Renderer } from '../../src/core/render';
import { CALL_SUBREQUESTS, SubrequestBudget } from '../../src/core/subrequests';
import type { MapInput } from '../../src/providers/builtin-web/inputs';
import { mapWithBuiltin } from '../../src/providers/builtin-web/map';
import { SafeFetcher } from '../../src/providers/builtin-web/safe-fetch';
import { scrapeWithBuiltin } from '../../src/providers/builtin-web/scrape';
import { RENDER_QUEUE, RENDER_SLOT_TTL_MS } from '../../src/providers/builtin-web/organization-renders';
import { RENDERS_AT_ONCE } from '../../src/providers/builtin-web/render-share';
import { videoFrameWithBuiltin } from '../../src/providers/builtin-web/video-frame';
import { auditWithBuiltin } from '../../src/providers/builtin-web/onpage-audit';
import { CITIES, CITY_COUNT, citySite } from '../fakes/city-site';
import { MAZE, mazeSite } from '../fakes/maze-site';
import { settings, signal, web, webEnv } from './support';

/**
 * A call of the built-in provider makes at most CALL_SUBREQUESTS requests (pages, redirect hops, robots.txt
 * files, sitemaps, DNS lookups), whatever the site: a data job runs ten thousand calls in one Workflow instance,
 * whose subrequests Cloudflare counts (docs/decisions.md, "A job's Workflow instance may make ten million
 * subrequests"). The maze is a site that would take a crawl of it on without end.
 */

type Link = { url: string };

/** A map of the maze asking for as many links as a map answers (100,000): only the budget stops it, the maze's pages linking to a thousand each. */
async function mapOf(input: Partial<MapInput>, maze = mazeSite(), subrequests?: SubrequestBudget) {
  const result = await mapWithBuiltin({ url: MAZE, timeout: 8_000, limit: 100_000, ...input }, { env: webEnv(), signal: signal(), fetch: maze.fetch, ...(subrequests ? { subrequests } : {}) });
  const answer = (result.data as { result: { links: Link[]; warning?: string }[] }).result[0]!;
  return { ...answer, maze };
}

describe("the call's subrequest budget", () => {
  it('takes each redirect hop and each name looked up (A and AAAA) before it goes out, and refuses the request past it with 422', async () => {
    const site = web();
    const budget = new SubrequestBudget(5);
    const fetcher = new SafeFetcher({ settings: settings(), signal: signal(), fetch: site.fetch, budget });
    // The old address redirects once on the same host: one lookup of two queries, two requests.
    await fetcher.fetch('https://news.example.com/old-path');
    expect(budget.spent).toBe(4);
    expect(site.requests).toHaveLength(4);
    // Another host needs two more queries than are left: nothing goes out.
    await expect(fetcher.fetch('https://docs.example.org/guide/install')).rejects.toMatchObject({
      status: 422,
      code: 'PROVIDER_ERROR',
      message: expect.stringContaining('docs.example.org was not looked up: this call has made the 5 requests one call may make'),
    });
    expect(site.requests).toHaveLength(4);
    expect(budget.ranOut).toBe(true);
  });

  it(`stops a map of a site that links and redirects without end at ${CALL_SUBREQUESTS} requests, and answers the links found until then with a warning`, async () => {
    const { links, warning, maze } = await mapOf({ sitemap: 'skip' });
    expect(maze.requests.length).toBeLessThanOrEqual(CALL_SUBREQUESTS);
    expect(maze.requests.length).toBeGreaterThan(CALL_SUBREQUESTS - 10);
    expect(warning).toBe(`Not the whole site: the map stopped at the ${CALL_SUBREQUESTS} requests one call may make (pages, redirects, robots.txt files, sitemaps and DNS lookups count), and these are the links found until then.`);
    // Only what the site named: the base page and links of the pages read, none made up.
    expect(links.length).toBeGreaterThan(10);
    for (const { url } of links) expect(url === `${MAZE}/` || maze.named.has(url)).toBe(true);
  });

  it(`lists all ${CITY_COUNT} subdomains a home page links to, reading the robots.txt of none but the hosts it crawls`, async () => {
    const site = citySite();
    const result = await mapWithBuiltin({ url: CITIES, timeout: 8_000 }, { env: webEnv(), signal: signal(), fetch: site.fetch });
    const { links, warning } = (result.data as { result: { links: Link[]; warning?: string }[] }).result[0]!;
    const urls = new Set(links.map((link) => link.url));
    // The crawl read its 100 pages with the cities' own pages left: said, not left silent.
    expect(warning).toBe('Not the whole site: the map reads at most 100 pages, and pages were left to read, and these are the links found until then.');
    for (const city of site.cityUrls) expect(urls.has(city)).toBe(true);
    expect(site.requests.length).toBeLessThanOrEqual(CALL_SUBREQUESTS);
    const robotsRead = site.requests.filter((url) => url.endsWith('/robots.txt'));
    const pagesRead = site.requests.filter((url) => !url.startsWith('https://dns.fake/') && !url.endsWith('/robots.txt') && !url.endsWith('/sitemap.xml'));
    expect(robotsRead.length).toBeLessThanOrEqual(pagesRead.length);
  });

  it('stops reading a page’s links once it has the limit, fetching nothing for the rest', async () => {
    const site = citySite();
    const result = await mapWithBuiltin({ url: CITIES, timeout: 8_000, limit: 50 }, { env: webEnv(), signal: signal(), fetch: site.fetch });
    const { links } = (result.data as { result: { links: Link[] }[] }).result[0]!;
    expect(links).toHaveLength(50);
    // The base's name (2 queries), its robots.txt, its sitemap and its home page.
    expect(site.requests).toHaveLength(5);
  });

  it('counts the requests of a map in the budget the pipeline hands it, every one the site received', async () => {
    const budget = new SubrequestBudget();
    const { maze } = await mapOf({ sitemap: 'skip' }, mazeSite(), budget);
    expect(budget.spent).toBe(maze.requests.length);
    expect(budget.ranOut).toBe(true);
  });

  it('answers 422, uncharged and not worth retrying, when the budget ran out before anything could be listed', async () => {
    const maze = mazeSite();
    await expect(mapOf({ sitemap: 'only' }, maze)).rejects.toMatchObject({
      status: 422,
      code: 'PROVIDER_ERROR',
      message: `The built-in web provider could not answer this request: nothing to list was found at ${MAZE}: the map stopped at the ${CALL_SUBREQUESTS} requests one call may make (pages, redirects, robots.txt files, sitemaps and DNS lookups count)`,
    });
    expect(maze.requests.length).toBeLessThanOrEqual(CALL_SUBREQUESTS);
  });

  it("refuses a rendered page's requests past the budget (each new name is a lookup) and says so in the warning", async () => {
    const maze = mazeSite();
    let refused = 0;
    const renderer: Renderer = {
      async render(url, options): Promise<RenderedPage> {
        // A page that loads a script from each of two thousand hosts.
        for (let host = 0; host < 2_000; host++) {
          await options.assertAllowed(new URL(`https://cdn${host}.maze.example.com/app.js`)).catch(() => refused++);
        }
        return { html: '<html><head><title>Maze</title></head><body><p>Rendered.</p></body></html>', finalUrl: url, status: 200, contentType: 'text/html', actionScreenshots: [], actionScrapes: [], refusedRequests: refused, blockedAds: 0 };
      },
    };
    const result = await scrapeWithBuiltin({ url: `${MAZE}/app`, mobile: true }, { env: webEnv(), signal: signal(), fetch: maze.fetch, renderer });
    expect(maze.requests.length).toBeLessThanOrEqual(CALL_SUBREQUESTS);
    expect(refused).toBeGreaterThanOrEqual(2_000 - CALL_SUBREQUESTS / 2);
    const page = (result.data as { result: { warning?: string }[] }).result[0]!;
    expect(page.warning).toContain(`requests of the page were refused: only public http(s) addresses are fetched, and a call looks up at most ${CALL_SUBREQUESTS} names and requests.`);
  });

  it("ends a wait for one of the organization's render slots when its asks have spent the waits' share of the budget, as a timeout does, and gives its place up", async () => {
    const organizationId = `org_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`;
    const wallet = env.ORG_WALLET.get(env.ORG_WALLET.idFromName(organizationId));
    for (let slot = 0; slot < RENDERS_AT_ONCE; slot++) expect(await wallet.takeRenderSlot(`held-${slot}`, RENDER_SLOT_TTL_MS, RENDERS_AT_ONCE, RENDER_QUEUE)).toBe('taken');
    // Every place in the queue but one taken: the call takes the last.
    for (let waiter = 1; waiter < RENDER_QUEUE.limit; waiter++) expect(await wallet.takeRenderSlot(`waiter-${waiter}`, RENDER_SLOT_TTL_MS, RENDERS_AT_ONCE, RENDER_QUEUE)).toBe('wait');
    const budget = new SubrequestBudget(20);
    let rendered = 0;
    const renderer: Renderer = {
      async render(url): Promise<RenderedPage> {
        rendered++;
        return { html: '<html></html>', finalUrl: url, status: 200, contentType: 'text/html', actionScreenshots: [], actionScrapes: [], refusedRequests: 0, blockedAds: 0 };
      },
    };
    const started = Date.now();
    await expect(videoFrameWithBuiltin({ videoId: 'dQw4w9WgXcQ', second: 1 }, { env: webEnv(), signal: signal(), fetch: web().fetch, renderer, organizationId, subrequests: budget })).rejects.toMatchObject({
      status: 502,
      message: expect.stringContaining(`gave up waiting for one of the organization's ${RENDERS_AT_ONCE} renders: its waits have made the 6 of its 20 requests a call may spend waiting`),
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    // The asks took the waits' share (150 of 500, here 6 of 20), the rest kept for the page.
    expect({ rendered, spent: budget.spent, ranOut: budget.ranOut }).toEqual({ rendered: 0, spent: 6, ranOut: false });
    // Its place in the queue is given up at once: the next call waits instead of being refused as one too many.
    expect(await wallet.takeRenderSlot('next', RENDER_SLOT_TTL_MS, RENDERS_AT_ONCE, RENDER_QUEUE)).toBe('wait');
  });
  it('ends a wait for a browser when its looks have spent the waits’ share of the budget, keeping the rest for the page, as a timeout does (502, retried by a job)', async () => {
    const asked: string[] = [];
    // Browser Rendering with every browser busy: no free session, and no new one (429).
    const binding = {
      fetch: async (input: RequestInfo | URL) => {
        const url = input instanceof Request ? input.url : String(input);
        asked.push(new URL(url).pathname);
        return url.includes('/v1/sessions') ? Response.json({ sessions: [] }) : new Response('Too many browsers', { status: 429 });
      },
    } as unknown as Fetcher;
    const budget = new SubrequestBudget(20);
    const site = web();
    await expect(scrapeWithBuiltin({ url: 'https://news.example.com/article', mobile: true }, { env: { ...webEnv(), BROWSER: binding } as Env, signal: signal(), fetch: site.fetch, subrequests: budget })).rejects.toMatchObject({
      status: 502,
      message: expect.stringContaining('gave up waiting for a browser: its waits have made the 6 of its 20 requests a call may spend waiting'),
    });
    expect(asked).toEqual(['/v1/sessions', '/v1/devtools/browser', '/v1/sessions', '/v1/devtools/browser', '/v1/sessions', '/v1/devtools/browser']);
    // The page's own lookups were made, and what is left is the page's.
    expect(budget.ranOut).toBe(false);
    expect(budget.spent).toBe(6 + site.requests.length);
  });
  it('says in an on-page audit and a video frame, as in a scrape, that requests of the rendered page were refused past the budget', async () => {
    /** A page that loads a script from each of two thousand hosts, each a new name to look up. */
    const greedy = (): Renderer => ({
      async render(url, options): Promise<RenderedPage> {
        let refused = 0;
        for (let host = 0; host < 2_000; host++) await options.assertAllowed(new URL(`https://cdn${host}.maze.example.com/app.js`)).catch(() => refused++);
        return { html: '<html><head><title>Maze</title></head><body><h1>Maze</h1></body></html>', finalUrl: url, status: 200, contentType: 'text/html', actionScreenshots: [], actionScrapes: [], refusedRequests: refused, blockedAds: 0, screenshot: { mediaType: 'image/png', base64: 'AAAA' } };
      },
    });
    const said = `requests of the page were refused: only public http(s) addresses are fetched, and a call looks up at most ${CALL_SUBREQUESTS} names and requests.`;
    const audit = await auditWithBuiltin({ url: `${MAZE}/app`, enableJavascript: true }, { env: webEnv(), signal: signal(), fetch: mazeSite().fetch, renderer: greedy() });
    expect((audit.data as { result: { warning?: string }[] }).result[0]!.warning).toContain(said);
    const frame = await videoFrameWithBuiltin({ videoId: 'dQw4w9WgXcQ', second: 1 }, { env: webEnv(), signal: signal(), fetch: mazeSite().fetch, renderer: greedy() });
    expect((frame.data as { result: { warning?: string }[] }).result[0]!.warning).toContain(said);
  });
});
