import { describe, expect, it } from 'vitest';
import type { MapInput } from '../../src/providers/builtin-web/inputs';
import { mapWithBuiltin } from '../../src/providers/builtin-web/map';
import { parseSitemap } from '../../src/providers/builtin-web/sitemaps';
import { rankByRelevance } from '../../src/providers/builtin-web/relevance';
import { nestedPage } from '../fakes/web-sites';
import { signal, streamedPage, web, webEnv } from './support';

type Link = { url: string; title?: string; description?: string };

async function map(input: Partial<MapInput> = {}, site = web()): Promise<{ links: Link[]; requests: string[] }> {
  const result = await mapWithBuiltin({ url: 'https://www.map.example.com', ...input }, { env: webEnv(), signal: signal(), fetch: site.fetch });
  const data = result.data as { result: { links: Link[] }[] };
  return { links: data.result[0]!.links, requests: site.requests.filter((url) => !url.startsWith('https://dns.fake/')) };
}

const M = 'https://www.map.example.com';
const B = 'https://blog.map.example.com';

/** What the sitemap index lists on the site (its gzip part and its plain part), in order. */
const FROM_SITEMAPS = [`${M}/`, `${M}/about`, `${M}/pricing`, `${M}/contact`, `${M}/docs/getting-started`, `${B}/2026/spring-release`, `${B}/2026/harbour-sensors`];

describe('map of a site with robots.txt, a sitemap index (gzip and plain), subdomains and query strings', () => {
  it('lists the sitemaps’ URLs, then what the crawl found, each once, in a fixed order', async () => {
    const { links } = await map();
    expect(links.map((link) => link.url)).toEqual([
      ...FROM_SITEMAPS,
      `${M}/products/lanterns`,
      `${M}/team`,
      `${B}/`,
      `${M}/products/lanterns/storm`,
      `${M}/products/buoys`,
      `${B}/tags/sensors`,
      `${M}/products/buoys/tide-gauge`,
    ]);
  });

  it('gives the title and description of every page it read', async () => {
    const { links } = await map();
    expect(links[0]).toEqual({ url: `${M}/`, title: 'Harbour Sensors', description: 'About harbour sensors.' });
    expect(links.find((link) => link.url === `${M}/products/buoys`)).toEqual({ url: `${M}/products/buoys`, title: 'Sensor buoys', description: 'About sensor buoys.' });
    // Listed by the sitemap, but the page answers 404: no title to give.
    expect(links.find((link) => link.url === `${M}/pricing`)).toEqual({ url: `${M}/pricing` });
  });

  it('neither fetches nor lists what robots.txt disallows, for SluiceBot’s own group and for *', async () => {
    const { links, requests } = await map();
    const urls = links.map((link) => link.url).join('\n');
    for (const hidden of ['/private/', '/drafts/', '/only-from-', '/admin/']) {
      expect(urls).not.toContain(hidden);
      expect(requests.some((url) => url.includes(hidden))).toBe(false);
    }
    expect(requests).toContain(`${M}/robots.txt`);
    expect(requests).toContain(`${B}/robots.txt`);
  });

  it('leaves out a link to a subdomain that the subdomain’s robots.txt, read later in the crawl, disallows', async () => {
    const site = web();
    // The home page, the crawl's first, links to the blog before the blog's robots.txt is read (with its home page, after).
    site.setResponse(`${M}/`, () => new Response(`<html><head><title>Home</title></head><body><a href="${B}/">blog</a><a href="${B}/admin/from-home">admin</a><a href="${B}/from-home">post</a></body></html>`, { headers: { 'content-type': 'text/html' } }));
    const { links, requests } = await map({ sitemap: 'skip' }, site);
    const urls = links.map((link) => link.url);
    expect(requests).toContain(`${B}/robots.txt`);
    expect(urls).toEqual(expect.arrayContaining([`${B}/`, `${B}/from-home`]));
    expect(urls).not.toContain(`${B}/admin/from-home`);
    expect(requests).not.toContain(`${B}/admin/from-home`);
  });

  it('stays on the site: nothing from other hosts, mailto links or fragments', async () => {
    const { links } = await map();
    for (const { url } of links) {
      expect(new URL(url).hostname).toMatch(/(^|\.)map\.example\.com$/);
      expect(url).not.toContain('#');
    }
  });

  it('sitemap "only" lists the sitemaps alone, reading the gzip sitemap of the index, without crawling', async () => {
    const { links, requests } = await map({ sitemap: 'only' });
    expect(links.map((link) => link.url)).toEqual(FROM_SITEMAPS);
    expect(requests).toEqual([`${M}/robots.txt`, `${M}/sitemap_index.xml`, `${M}/sitemaps/pages.xml.gz`, `${M}/sitemaps/posts.xml`]);
  });

  it('sitemap "skip" crawls alone: what only the sitemaps list is missing', async () => {
    const { links, requests } = await map({ sitemap: 'skip' });
    const urls = links.map((link) => link.url);
    expect(urls).toEqual([
      `${M}/`,
      `${M}/about`,
      `${M}/products/lanterns`,
      `${M}/team`,
      `${B}/`,
      `${M}/products/lanterns/storm`,
      `${M}/products/buoys`,
      `${B}/2026/spring-release`,
      `${B}/tags/sensors`,
      `${M}/products/buoys/tide-gauge`,
      `${B}/2026/harbour-sensors`,
    ]);
    expect(requests.some((url) => url.includes('sitemap'))).toBe(false);
  });

  it('leaves subdomains out with includeSubdomains false', async () => {
    const { links, requests } = await map({ includeSubdomains: false });
    expect(links.map((link) => link.url)).toEqual([
      `${M}/`,
      `${M}/about`,
      `${M}/pricing`,
      `${M}/contact`,
      `${M}/docs/getting-started`,
      `${M}/products/lanterns`,
      `${M}/team`,
      `${M}/products/lanterns/storm`,
      `${M}/products/buoys`,
      `${M}/products/buoys/tide-gauge`,
    ]);
    expect(requests.some((url) => url.startsWith(B))).toBe(false);
  });

  it('keeps query strings apart with ignoreQueryParameters false', async () => {
    const urls = (await map({ ignoreQueryParameters: false })).links.map((link) => link.url);
    expect(urls).toContain(`${M}/contact?ref=footer`);
    expect(urls).toContain(`${M}/products/lanterns?utm_source=nav`);
    expect(urls).toContain(`${M}/products/lanterns?utm_source=footer`);
    expect(urls).not.toContain(`${M}/contact`);
    expect(urls).not.toContain(`${M}/products/lanterns`);
  });

  it('orders by relevance to search: whole words of the URL first, then titles, ties to the shallower URL', async () => {
    const { links } = await map({ search: 'Harbour sensors' });
    expect(links.slice(0, 4).map((link) => link.url)).toEqual([`${B}/2026/harbour-sensors`, `${M}/`, `${B}/`, `${B}/tags/sensors`]);
    expect(links).toHaveLength(14);
  });

  it('answers at most limit URLs, and stops crawling once it has them', async () => {
    const all = await map();
    const three = await map({ limit: 3 });
    expect(three.links.map((link) => link.url)).toEqual(FROM_SITEMAPS.slice(0, 3));
    expect(three.requests.length).toBeLessThan(all.requests.length);
    expect((await map({ limit: 9 })).links.map((link) => link.url)).toEqual(all.links.slice(0, 9).map((link) => link.url));
  });
});

describe('map of other sites', () => {
  it('falls back to /sitemap.xml when robots.txt names none (here: none at all), reading a plain-text sitemap', async () => {
    const { links, requests } = await map({ url: 'https://plain.example.com/', sitemap: 'only' });
    expect(links.map((link) => link.url)).toEqual(['https://plain.example.com/', 'https://plain.example.com/a', 'https://plain.example.com/b']);
    expect(requests).toEqual(['https://plain.example.com/robots.txt', 'https://plain.example.com/sitemap.xml']);
  });

  it('reads each page within the page bounds: a hostile page is cancelled after its first kilobytes and mapped without its details', async () => {
    const site = web();
    const hostile = streamedPage(nestedPage(100_000));
    site.setResponse(`${M}/team`, hostile.response);
    const { links } = await map({}, site);
    expect(hostile.served.cancelled).toBe(true);
    expect(hostile.served.bytes).toBeLessThan(64 * 1024);
    expect(hostile.served.total).toBeGreaterThan(1_000_000);
    // Found through a link, so listed, but not read: no title. The rest of the site is read as before.
    expect(links.find((link) => link.url === `${M}/team`)).toEqual({ url: `${M}/team` });
    expect(links.find((link) => link.url === `${M}/products/buoys`)).toMatchObject({ title: 'Sensor buoys' });
  });

  it('refuses a private site with 400 VALIDATION_ERROR on url, fetching nothing', async () => {
    const site = web();
    await expect(map({ url: 'http://192.168.1.1/' }, site)).rejects.toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'url', location: 'body' }] });
    await expect(map({ url: 'https://mixed.example.com/' }, site)).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(site.requests.filter((url) => !url.startsWith('https://dns.fake/'))).toEqual([]);
  });

  it('fails with 502 PROVIDER_ERROR when the site’s name does not resolve', async () => {
    await expect(map({ url: 'https://nowhere.example.com/' })).rejects.toMatchObject({ code: 'PROVIDER_ERROR', status: 502 });
  });

  it('applies a robots.txt of 25,000 wildcard rules within its matching budget: links past it are left out, not checked for seconds', async () => {
    const site = web();
    const P = 'https://plain.example.com';
    // 25,000 rules like `Disallow: /*N*z` (none matches), 500 KB: about 2.7 million of the matcher's steps a link.
    const rules = Array.from({ length: 25_000 }, (_, index) => `Disallow: /*${index}*z`).join('\n');
    site.setResponse(`${P}/robots.txt`, () => new Response(`User-agent: *\n${rules}`, { headers: { 'content-type': 'text/plain' } }));
    const links = Array.from({ length: 1_000 }, (_, index) => `<a href="/page-${index}">Page ${index}</a>`).join('');
    site.setResponse(`${P}/`, () => new Response(`<html><head><title>Home</title></head><body>${links}</body></html>`, { headers: { 'content-type': 'text/html' } }));
    const { links: listed } = await map({ url: `${P}/`, sitemap: 'skip', limit: 5_000 }, site);
    // The home page and the first links fit the budget (a third of a second of matching); the rest are refused, as a
    // file that cannot be read would have them. Without the budget all 1,000 were matched, for seconds, and listed.
    expect(listed.length).toBeGreaterThan(1);
    expect(listed.length).toBeLessThan(10);
    expect(listed.every((link) => link.url === `${P}/` || /\/page-\d+$/.test(link.url))).toBe(true);
  });

  it('counts a rule as the parser reads it: all of the value after the colon, spaces and all, percent-encoded', async () => {
    const site = web();
    const P = 'https://plain.example.com';
    // One rule whose value goes on past a space: 200,000 wildcards and a z, which the parser matches in full.
    site.setResponse(`${P}/robots.txt`, () => new Response(`User-agent: *\nDisallow: / ${'*'.repeat(200_000)}z\n`, { headers: { 'content-type': 'text/plain' } }));
    const links = Array.from({ length: 1_000 }, (_, index) => `<a href="/${'%20'.repeat(300)}page-${index}">Page ${index}</a>`).join('');
    site.setResponse(`${P}/`, () => new Response(`<html><head><title>Home</title></head><body>${links}</body></html>`, { headers: { 'content-type': 'text/html' } }));
    const { links: listed } = await map({ url: `${P}/`, sitemap: 'skip', limit: 5_000 }, site);
    expect(listed.length).toBeLessThan(10);
  });

  it('lists every link of the same page when robots.txt is an honest one', async () => {
    const site = web();
    const P = 'https://plain.example.com';
    site.setResponse(`${P}/robots.txt`, () => new Response('User-agent: *\nDisallow: /private/\nDisallow: /*.pdf$\n', { headers: { 'content-type': 'text/plain' } }));
    const links = Array.from({ length: 1_000 }, (_, index) => `<a href="/page-${index}">Page ${index}</a>`).join('');
    site.setResponse(`${P}/`, () => new Response(`<html><head><title>Home</title></head><body>${links}<a href="/private/x">x</a></body></html>`, { headers: { 'content-type': 'text/html' } }));
    const { links: listed } = await map({ url: `${P}/`, sitemap: 'skip', limit: 5_000 }, site);
    expect(listed).toHaveLength(1_001);
    expect(listed.some((link) => link.url.includes('/private/'))).toBe(false);
  });

  it('reads the sitemaps robots.txt lists one at a time, never several files in memory together', async () => {
    const site = web();
    const P = 'https://plain.example.com';
    const listed = Array.from({ length: 6 }, (_, index) => `${P}/sitemaps/part-${index}.xml`);
    site.setResponse(`${P}/robots.txt`, () => new Response(listed.map((url) => `Sitemap: ${url}`).join('\n'), { headers: { 'content-type': 'text/plain' } }));
    let open = 0;
    let mostOpen = 0;
    listed.forEach((url, index) =>
      site.setResponse(url, () => {
        open += 1;
        mostOpen = Math.max(mostOpen, open);
        // The body arrives 20 ms later, so files read together would be open together.
        const body = new ReadableStream<Uint8Array>({
          async pull(controller) {
            await new Promise((resolve) => setTimeout(resolve, 20));
            controller.enqueue(new TextEncoder().encode(`<urlset><url><loc>${P}/page-${index}</loc></url></urlset>`));
            controller.close();
            open -= 1;
          },
        });
        return new Response(body, { headers: { 'content-type': 'application/xml' } });
      }),
    );
    const { links } = await map({ url: `${P}/`, sitemap: 'only' }, site);
    expect(links.map((link) => link.url)).toEqual(listed.map((_, index) => `${P}/page-${index}`));
    expect(mostOpen).toBe(1);
  });

  it('reads the first 10 MB of a sitemap that inflates past them, and lists the URLs found there', async () => {
    const site = web();
    const P = 'https://plain.example.com';
    // 10,000 URLs of 1,100 bytes each (11 MB inflated): fewer than the 100,000 a map lists, so only the bound cuts them.
    const padding = ' '.repeat(1_050);
    const xml = `<urlset>${Array.from({ length: 10_000 }, (_, index) => `<url><loc>${P}/p${index}</loc>${padding}</url>`).join('')}</urlset>`;
    const gzipped = new Uint8Array(await new Response(new Blob([xml]).stream().pipeThrough(new CompressionStream('gzip'))).arrayBuffer());
    site.setResponse(`${P}/sitemap.xml`, () => new Response(gzipped, { headers: { 'content-type': 'application/gzip' } }));
    const { links } = await map({ url: `${P}/`, sitemap: 'only', limit: 100_000 }, site);
    const urls = new Set(links.map((link) => link.url));
    expect(urls.has(`${P}/p0`)).toBe(true);
    expect(urls.has(`${P}/p9000`)).toBe(true);
    expect(urls.has(`${P}/p9999`)).toBe(false);
  });

  it('stops discovering at its time limit: a page that never answers, with nothing found, is a 502 that names the time limit', async () => {
    const started = Date.now();
    // robots.txt answers (404); the page does not: nothing to list, and the reason is the site's silence.
    await expect(map({ url: 'https://news.example.com/slow', timeout: 1000, sitemap: 'skip' })).rejects.toMatchObject({
      code: 'PROVIDER_ERROR',
      status: 502,
      message: expect.stringMatching(/^Mapping https:\/\/news\.example\.com failed: nothing was found because the site did not answer \(Fetching https:\/\/news\.example\.com\/slow failed: timed out\)\. Back off and retry; this call was not charged\.$/),
    });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('answers what it found with a warning when its time limit leaves pages unread, so an answer without one read every page it found', async () => {
    const site = web();
    const start = 'https://news.example.com/start';
    // A page whose links lead to one that answers and one that never does.
    const fetch: typeof site.fetch = (input, init) =>
      String(input instanceof Request ? input.url : input) === start
        ? Promise.resolve(new Response('<html><body><a href="/tracked">Prices</a> <a href="/slow">Later</a></body></html>', { headers: { 'content-type': 'text/html' } }))
        : site.fetch(input, init);
    // 4 s, not less: the call takes all of it (one page never answers), and on a loaded 2-core machine (three workerds
    // and the typecheck) 1.5 s once passed before the start page was read.
    const result = await mapWithBuiltin({ url: start, timeout: 4000, sitemap: 'skip' }, { env: webEnv(), signal: signal(), fetch });
    const [answer] = (result.data as { result: { links: Link[]; warning?: string }[] }).result;
    expect(answer!.links.map((link) => link.url)).toEqual(expect.arrayContaining([start, 'https://news.example.com/tracked', 'https://news.example.com/slow']));
    expect(answer!.warning).toBe('Not the whole site: the map stopped at its time limit (4000 ms) with pages left to read, and these are the links found until then.');
    // The same site without the page that never answers: every page read, no warning.
    const whole = await mapWithBuiltin({ url: 'https://news.example.com/tracked', timeout: 4000, sitemap: 'skip' }, { env: webEnv(), signal: signal(), fetch: site.fetch });
    expect((whole.data as { result: { warning?: string }[] }).result[0]).not.toHaveProperty('warning');
  });

  it('fails with 502 PROVIDER_ERROR, not an empty map, when the site cannot be reached, in every sitemap mode', async () => {
    const site = web();
    const hostOf = (input: string | URL | Request) => new URL(input instanceof Request ? input.url : input).hostname;
    const unreachable = { ...site, fetch: (input: string | URL | Request, init?: RequestInit) => (hostOf(input) === 'www.map.example.com' ? Promise.reject(new TypeError('Network connection lost.')) : site.fetch(input, init)) };
    for (const sitemap of ['include', 'skip', 'only'] as const) {
      await expect(map({ sitemap }, unreachable)).rejects.toMatchObject({ code: 'PROVIDER_ERROR', status: 502, message: expect.stringContaining('network error (Network connection lost.)') });
    }
  });

  it('answers an empty map for a site that answered but has nothing to list (every page a 404)', async () => {
    const { links } = await map({ url: 'https://docs.example.org/' });
    expect(links).toEqual([]);
  });
});

describe('the parts', () => {
  it('reads urlset and sitemapindex entries, skipping image locations and non-http entries', () => {
    expect(
      parseSitemap(
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"><url><loc> https://a.example/x </loc><image:image><image:loc>https://a.example/i.jpg</image:loc></image:image></url><url><loc>ftp://a.example/y</loc></url></urlset>',
      ),
    ).toEqual({ pages: ['https://a.example/x'], sitemaps: [] });
    expect(parseSitemap('<sitemapindex><sitemap><loc>https://a.example/s1.xml</loc></sitemap></sitemapindex>')).toEqual({ pages: [], sitemaps: ['https://a.example/s1.xml'] });
  });

  it('reads a location in CDATA or with entities, and an unclosed location as nothing', () => {
    expect(
      parseSitemap(
        '<urlset><url><loc><![CDATA[https://a.example/x?a=1&b=2]]></loc></url><url><loc>https://a.example/y?a=1&amp;b=&#50;</loc></url><url><loc>https://a.example/z</url></urlset>',
      ),
    ).toEqual({ pages: ['https://a.example/x?a=1&b=2', 'https://a.example/y?a=1&b=2'], sitemaps: [] });
  });

  it('ranks whole URL words above parts of words above titles, and keeps every link', () => {
    const ranked = rankByRelevance(
      [{ url: 'https://a.example/about' }, { url: 'https://a.example/x', title: 'Pricing plans' }, { url: 'https://a.example/pricingplans' }, { url: 'https://a.example/docs/pricing' }],
      'pricing',
    );
    expect(ranked.map((link) => link.url)).toEqual(['https://a.example/docs/pricing', 'https://a.example/pricingplans', 'https://a.example/x', 'https://a.example/about']);
  });
});
