import { describe, expect, it } from 'vitest';
import type { ScrapeInput } from '../../src/providers/builtin-web/inputs';
import { acceptLanguage } from '../../src/providers/builtin-web/headers';
import { scrapeWithBuiltin } from '../../src/providers/builtin-web/scrape';
import { centsFromUnits } from '../../src/core/money';
import { DEFAULT_PDF_PAGES, scrapeInput } from '../../src/core/web-inputs';
import { webOperations } from '../../src/operations/web';
import { pdfOfPages, signal, web, webEnv } from './support';

type Page = {
  markdown?: string;
  html?: string;
  rawHtml?: string;
  links?: string[];
  images?: string[];
  warning?: string;
  metadata: Record<string, unknown>;
};

async function scrape(input: ScrapeInput, options: { env?: Record<string, string | undefined>; site?: ReturnType<typeof web> } = {}): Promise<Page> {
  const site = options.site ?? web();
  const result = await scrapeWithBuiltin(input, { env: webEnv(options.env), signal: signal(), fetch: site.fetch });
  const data = result.data as { result: Page[] };
  expect(data.result).toHaveLength(1);
  return data.result[0]!;
}

const ARTICLE = 'https://news.example.com/2026/harbour-dredging';
const DOCS = 'https://docs.example.org/guide/install';
const GALLERY = 'https://shop.example.net/catalogue/';

describe('Markdown of a news article (main element, navigation, aside, footer, cookie banner)', () => {
  it('keeps headings, paragraphs, lists, quotes, links and images, absolute', async () => {
    const { markdown } = await scrape({ url: ARTICLE });
    expect(markdown).toMatch(/^# East Channel Dredging Finishes Early$/m);
    expect(markdown).toMatch(/^## What changes for shipping$/m);
    expect(markdown).toMatch(/^### Next steps$/m);
    expect(markdown).toMatch(/^-\s+Berths 7 to 9 can take ships with a draught of up to 13\.8 metres\.$/m);
    expect(markdown).toMatch(/^2\.\s+Publication of the new pilotage rules\.$/m);
    expect(markdown).toMatch(/^> “This is the single most important improvement/m);
    expect(markdown).toContain('**three weeks ahead of schedule**');
    expect(markdown).toContain("[authority's final report](https://authority.example.org/reports/dredging-2026)");
    expect(markdown).toContain('[more shipping news](https://news.example.com/shipping/)');
    expect(markdown).toContain('![The dredger Albatross working in the east channel](https://news.example.com/media/dredger.jpg)');
  });

  it('drops navigation, breadcrumbs, related stories, footer, cookie banner, scripts and styles with onlyMainContent (the default)', async () => {
    const { markdown } = await scrape({ url: ARTICLE });
    for (const surrounding of ['Subscribe', 'Weather', 'Related stories', 'Four new cranes', 'Privacy policy', 'All rights reserved', 'Accept all', 'Home', 'dataLayer', 'font-family', 'NewsArticle']) {
      expect(markdown).not.toContain(surrounding);
    }
  });

  it('keeps the whole page, still without scripts and styles, when onlyMainContent is false', async () => {
    const { markdown } = await scrape({ url: ARTICLE, onlyMainContent: false });
    for (const surrounding of ['[Subscribe](https://news.example.com/subscribe)', 'Related stories', 'Privacy policy', 'Accept all', '# East Channel Dredging Finishes Early']) {
      expect(markdown).toContain(surrounding);
    }
    for (const code of ['dataLayer', 'font-family', 'NewsArticle', 'Cookie banner injected']) expect(markdown).not.toContain(code);
  });

  it('answers the metadata: title, description, language, sourceURL, final url, statusCode, contentType', async () => {
    const { metadata } = await scrape({ url: ARTICLE });
    expect(metadata).toEqual({
      title: 'East Channel Dredging Finishes Early | Harbour Gazette',
      description: 'The port authority finished dredging the east channel three weeks ahead of schedule, opening the berths to larger container ships.',
      language: 'en-GB',
      sourceURL: ARTICLE,
      url: ARTICLE,
      statusCode: 200,
      contentType: 'text/html; charset=utf-8',
    });
  });

  it('reports the URL asked for as sourceURL and where redirects led as url', async () => {
    const { metadata, markdown } = await scrape({ url: 'https://news.example.com/old-path' });
    expect(metadata).toMatchObject({ sourceURL: 'https://news.example.com/old-path', url: ARTICLE, statusCode: 200 });
    expect(markdown).toContain('# East Channel Dredging Finishes Early');
  });

  it('answers cleaned HTML (no scripts, styles or comments) for html, and the page as received for rawHtml', async () => {
    const { html, rawHtml, markdown } = await scrape({ url: ARTICLE, formats: ['html', 'rawHtml'] });
    expect(markdown).toBeUndefined();
    expect(html).toContain('<h1>East Channel Dredging Finishes Early</h1>');
    expect(html).toContain('href="https://authority.example.org/reports/dredging-2026"');
    for (const gone of ['<script', '<style', '<!--', 'Related stories']) expect(html).not.toContain(gone);
    expect(rawHtml).toContain('<script>window.dataLayer');
    expect(rawHtml).toContain('<!-- Cookie banner injected by the consent manager -->');
  });

  it('answers only the formats asked for', async () => {
    const page = await scrape({ url: ARTICLE, formats: ['links'] });
    expect(Object.keys(page).sort()).toEqual(['links', 'metadata']);
  });
});

describe('Markdown of a documentation page (no main element: Readability finds the content)', () => {
  it('keeps code blocks with their language, inline code and tables', async () => {
    const { markdown } = await scrape({ url: DOCS });
    expect(markdown).toMatch(/^# Installing the CLI$/m);
    expect(markdown).toMatch(/^### Options$/m);
    expect(markdown).toContain('```bash\nnpm install --global @tidewater/cli\ntidewater --version\n```');
    expect(markdown).toContain('```json\n{\n  "project": "harbour-sensors",\n  "region": "eu-west",\n  "retries": 3\n}\n```');
    expect(markdown).toContain('The `tidewater` command-line tool');
    expect(markdown).toMatch(/^\| Option \| Type \| Default \| Description \|$/m);
    expect(markdown).toMatch(/^\| --- \| --- \| --- \| --- \|$/m);
    expect(markdown).toMatch(/^\| `region` \| string \| `us-east` \| Where the data is stored\. \|$/m);
    expect(markdown).toContain('[list of exit codes](https://docs.example.org/reference/cli#exit-codes)');
  });

  it('drops the sidebar, the top bar, the pager and the footer', async () => {
    const { markdown } = await scrape({ url: DOCS });
    for (const surrounding of ['CLI reference', 'Your first sync', 'Changelog', 'Search the docs', 'Imprint', 'MIT licence', 'Tidewater Docs']) {
      expect(markdown).not.toContain(surrounding);
    }
  });

  it('keeps only what includeTags selects, and drops what excludeTags selects', async () => {
    const onlyTable = (await scrape({ url: DOCS, includeTags: ['table.options'] })).markdown!;
    expect(onlyTable.split('\n')[0]).toBe('| Option | Type | Default | Description |');
    expect(onlyTable).not.toContain('Install with npm');
    // One descendant combinator, and any number of > and +, and a simple :not(): within the matching bound.
    const bounded = (await scrape({ url: DOCS, includeTags: ['body table.options:not(.x)'], excludeTags: ['body > nav + div'] })).markdown!;
    expect(bounded.split('\n')[0]).toBe('| Option | Type | Default | Description |');
    const noCode = (await scrape({ url: DOCS, excludeTags: ['pre', '.admonition'] })).markdown!;
    expect(noCode).toContain('## Install with npm');
    expect(noCode).not.toContain('```');
    expect(noCode).not.toContain('nothing to migrate');
  });

  it('refuses selectors that are not CSS with 400 VALIDATION_ERROR naming each, before fetching', async () => {
    const site = web();
    await expect(scrape({ url: DOCS, includeTags: ['p', 'div[[['], excludeTags: ['::nonsense('] }, { site })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [
        { field: 'includeTags[1]', location: 'body', message: expect.stringContaining('div[[[') },
        { field: 'excludeTags[0]', location: 'body', message: expect.stringContaining('::nonsense(') },
      ],
    });
    expect(site.requests).toEqual([]);
  });
});

describe('links and images of a page with relative references and <base href>', () => {
  it('answers every http(s) link once, absolute against <base>, without fragments, in page order', async () => {
    const { links } = await scrape({ url: GALLERY, formats: ['links'] });
    expect(links).toEqual([
      'https://shop.example.net/',
      'https://shop.example.net/catalogue/panier',
      'https://shop.example.net/catalogue/lanternes/tempete',
      'https://shop.example.net/catalogue/lanternes/phare',
      'https://shop.example.net/catalogue/lanternes/balise',
      'https://aide.example.org/faq?lang=fr',
      'https://shop.example.net/catalogue/',
      'https://shop.example.net/mentions-legales',
    ]);
  });

  it('answers every image once, absolute (protocol-relative included), leaving out inline data: images', async () => {
    const { images } = await scrape({ url: GALLERY, formats: ['images'] });
    expect(images).toEqual([
      'https://shop.example.net/catalogue/images/tempete.jpg',
      'https://shop.example.net/catalogue/images/phare.jpg',
      'https://static.example.net/img/balise.jpg',
    ]);
  });

  it('writes absolute links and images into the Markdown', async () => {
    const { markdown } = await scrape({ url: GALLERY });
    expect(markdown).toContain('[![Lanterne tempête](https://shop.example.net/catalogue/images/tempete.jpg)](https://shop.example.net/catalogue/lanternes/tempete)');
    expect(markdown).toContain('[foire aux questions](https://aide.example.org/faq?lang=fr)');
    expect(markdown).not.toContain('javascript:');
    expect(markdown).not.toContain('data:image');
  });
});

describe('what the target answers', () => {
  it.each([
    ['https://news.example.com/missing', 404, '# Page not found'],
    ['https://news.example.com/broken', 500, '# Something went wrong'],
  ])('%s is still a successful scrape, with statusCode %i', async (url, statusCode, heading) => {
    const page = await scrape({ url });
    expect(page.metadata.statusCode).toBe(statusCode);
    expect(page.markdown).toContain(heading);
  });

  it('reads the text of a PDF, page after page, with its title and page count', async () => {
    const page = await scrape({ url: 'https://news.example.com/report.pdf', formats: ['markdown', 'links'] });
    expect(page.markdown).toBe('Quarterly Harbour Report\nCargo volumes rose 12 percent in the third quarter.\n\nPage two: dredging of the east channel is complete.');
    expect(page.links).toEqual([]);
    expect(page.metadata).toMatchObject({ title: 'Quarterly Harbour Report', numPages: 2, totalPages: 2, contentType: 'application/pdf', statusCode: 200 });
  }, 30_000); // The first PDF of an isolate starts pdf.js.

  it('recognises a PDF by its bytes when the server calls it octet-stream, and honours maxPages', async () => {
    const page = await scrape({ url: 'https://news.example.com/download', parsers: [{ type: 'pdf', maxPages: 1 }] });
    expect(page.markdown).toBe('Quarterly Harbour Report\nCargo volumes rose 12 percent in the third quarter.');
    expect(page.warning).toContain('Only the first 1 of 2 pages');
  });

  it("is charged per page read, as Firecrawl's PDFs are: numPages is the pages read, totalPages the document's", async () => {
    const price = webOperations.find((operation) => operation.name === 'scrape')!.price;
    const charged = async (input: ScrapeInput & { url: string }) => {
      const parsed = scrapeInput.parse(input);
      return centsFromUnits(price.settle(parsed, { ...(await scrapeWithBuiltin(input, { env: webEnv(), signal: signal(), fetch: web().fetch })), servedBy: 'builtin' }));
    };
    expect(await charged({ url: 'https://news.example.com/report.pdf' })).toBe(0.2);
    expect(await charged({ url: 'https://news.example.com/report.pdf', parsers: [{ type: 'pdf', maxPages: 1 }] })).toBe(0.1);
    expect((await scrape({ url: 'https://news.example.com/report.pdf', parsers: [{ type: 'pdf', maxPages: 1 }] })).metadata).toMatchObject({ numPages: 1, totalPages: 2 });
  }, 30_000);

  it(`reads a long PDF to ${DEFAULT_PDF_PAGES} pages unless parsers names more, says so, and is charged for the pages read`, async () => {
    const site = web();
    const url = 'https://news.example.com/long-report.pdf';
    site.setResponse(url, () => new Response(pdfOfPages(DEFAULT_PDF_PAGES + 2), { headers: { 'content-type': 'application/pdf' } }));
    const read = await scrapeWithBuiltin({ url }, { env: webEnv(), signal: signal(), fetch: site.fetch });
    const [page] = (read.data as { result: Page[] }).result;
    expect(page!.metadata).toMatchObject({ numPages: DEFAULT_PDF_PAGES, totalPages: DEFAULT_PDF_PAGES + 2 });
    expect(page!.markdown).toContain(`Page ${DEFAULT_PDF_PAGES} of ${DEFAULT_PDF_PAGES + 2}.`);
    expect(page!.markdown).not.toContain(`Page ${DEFAULT_PDF_PAGES + 1} of`);
    expect(page!.warning).toContain(`Only the first ${DEFAULT_PDF_PAGES} of ${DEFAULT_PDF_PAGES + 2} pages were read (maxPages, ${DEFAULT_PDF_PAGES} unless parsers names more`);
    const price = webOperations.find((operation) => operation.name === 'scrape')!.price;
    expect(centsFromUnits(price.settle(scrapeInput.parse({ url }), { ...read, servedBy: 'builtin' }))).toBe(0.1 * DEFAULT_PDF_PAGES);
    const all = await scrapeWithBuiltin({ url, parsers: [{ type: 'pdf', maxPages: 50 }] }, { env: webEnv(), signal: signal(), fetch: site.fetch });
    expect((all.data as { result: Page[] }).result[0]!.metadata).toMatchObject({ numPages: DEFAULT_PDF_PAGES + 2 });
  }, 30_000);

  it('refuses a PDF with 422 PROVIDER_ERROR when parsers leaves PDF parsing out', async () => {
    await expect(scrape({ url: 'https://news.example.com/report.pdf', parsers: [] })).rejects.toMatchObject({ code: 'PROVIDER_ERROR', status: 422, message: expect.stringContaining('parsers') });
  });

  it('answers plain text as it is', async () => {
    expect((await scrape({ url: 'https://news.example.com/notes.txt' })).markdown).toBe('Tide tables\n\nHigh water 06:12, low water 12:30.');
  });

  it('refuses an image with 422 PROVIDER_ERROR: it has no text', async () => {
    await expect(scrape({ url: 'https://news.example.com/logo.png' })).rejects.toMatchObject({ code: 'PROVIDER_ERROR', status: 422, message: expect.stringContaining('image/png') });
  });

  it('decodes the charset the server names', async () => {
    const page = await scrape({ url: 'https://news.example.com/latin1' });
    expect(page.metadata.title).toBe('Café du port');
    expect(page.markdown).toBe('Crème brûlée à volonté.');
  });

  it('decodes the charset the page declares in <meta charset> when the server names none, across the slices it is read in', async () => {
    const site = web();
    // windows-1252, where byte 0x80 is the euro sign; 40 KB, so the page is read in several slices.
    const line = '<p>Crème brûlée à 5 €, café compris.</p>';
    const page = `<html><head><meta charset="windows-1252"><title>Café du port</title></head><body><main>${line.repeat(1_000)}</main></body></html>`;
    const bytes = Uint8Array.from(page, (char) => (char === '€' ? 0x80 : char.charCodeAt(0)));
    site.setResponse('https://news.example.com/cp1252', () => new Response(bytes, { headers: { 'content-type': 'text/html' } }));
    const scraped = await scrape({ url: 'https://news.example.com/cp1252', formats: ['markdown', 'rawHtml'] }, { site });
    expect(scraped.metadata.title).toBe('Café du port');
    expect(scraped.markdown!.split('\n\n')).toEqual(Array(1_000).fill('Crème brûlée à 5 €, café compris.'));
    expect(scraped.rawHtml).toBe(page);
  });

  it('keeps UTF-8 characters whole where the slices it is read in cut through them', async () => {
    const site = web();
    // 2-byte and 4-byte characters, 40,000 bytes of them: slice boundaries fall inside some.
    const text = 'é🌊'.repeat(6_667);
    const page = `<html><head><title>Wave</title></head><body><main><p>${text}</p></main></body></html>`;
    const bytes = new TextEncoder().encode(page);
    // Sent in pieces of an odd size, as a network would.
    site.setResponse('https://news.example.com/utf8', () => new Response(new Blob([bytes]).stream().pipeThrough(new TransformStream({ transform: (chunk: Uint8Array, controller) => { for (let at = 0; at < chunk.byteLength; at += 4_099) controller.enqueue(chunk.slice(at, at + 4_099)); } })), { headers: { 'content-type': 'text/html; charset=utf-8' } }));
    const scraped = await scrape({ url: 'https://news.example.com/utf8', formats: ['markdown', 'rawHtml'] }, { site });
    expect(scraped.markdown).toBe(text);
    expect(scraped.rawHtml).toBe(page);
  });

  it('answers 502 PROVIDER_ERROR when the connection breaks in the middle of the page', async () => {
    const site = web();
    const start = new TextEncoder().encode(`<html><head><title>Cut</title></head><body><main>${'<p>A line.</p>'.repeat(3_000)}`);
    let sent = false;
    const breaking = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent) return controller.error(new Error('connection reset by peer'));
        sent = true;
        controller.enqueue(start);
      },
    });
    site.setResponse('https://news.example.com/cut', () => new Response(breaking, { headers: { 'content-type': 'text/html' } }));
    await expect(scrape({ url: 'https://news.example.com/cut' }, { site })).rejects.toMatchObject({ code: 'PROVIDER_ERROR', status: 502, message: expect.stringContaining('the connection broke (connection reset by peer)') });
  });

  it('refuses a private target through the scrape too, with 400 VALIDATION_ERROR on url', async () => {
    await expect(scrape({ url: 'https://news.example.com/to-metadata' })).rejects.toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'url' }] });
  });
});

describe('request options', () => {
  /** The request headers the echo page saw. */
  const echoed = async (input: Omit<ScrapeInput, 'url'>, env: Record<string, string> = {}) =>
    JSON.parse(/<code>(.*)<\/code>/.exec((await scrape({ url: 'https://news.example.com/echo', formats: ['rawHtml'], ...input }, { env })).rawHtml!)![1]!) as Record<
      string,
      string
    >;

  it('names Sluice in the User-Agent, and sends a mobile one that still does with mobile: true', async () => {
    const desktop = await echoed({}, { SCRAPE_CRAWLER_INFO_URL: 'https://sluice.example/crawler' });
    expect(desktop['user-agent']).toBe('Mozilla/5.0 (compatible; SluiceBot/1.0; +https://sluice.example/crawler)');
    expect((await echoed({}, { BASE_URL: 'https://api.sluice.example/' }))['user-agent']).toBe('Mozilla/5.0 (compatible; SluiceBot/1.0; +https://api.sluice.example/docs)');
    const mobile = await echoed({ mobile: true });
    expect(mobile['user-agent']).toMatch(/Mobile/);
    expect(mobile['user-agent']).toContain('SluiceBot/1.0');
  });

  it('sends Accept-Language from location.languages, and notes that the country cannot be honoured', async () => {
    expect((await echoed({ location: { country: 'CH', languages: ['de-CH', 'de', 'fr'] } }))['accept-language']).toBe('de-CH, de;q=0.9, fr;q=0.8');
    expect((await echoed({}))['accept-language']).toBe('en-US,en;q=0.9');
    const page = await scrape({ url: ARTICLE, location: { country: 'CH' } });
    expect(page.warning).toContain('not from CH');
    expect(page.metadata.location).toEqual({ country: 'CH' });
    expect(acceptLanguage({ languages: ['en', 'bad value;q=1'] })).toBe('en');
  });

  it('waits waitFor milliseconds, and says that no JavaScript ran', async () => {
    const started = Date.now();
    const page = await scrape({ url: ARTICLE, waitFor: 60 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(55);
    expect(page.warning).toContain('does not run the page');
  });

  it('gives up after timeout with 502 PROVIDER_ERROR', async () => {
    await expect(scrape({ url: 'https://news.example.com/slow', timeout: 50 })).rejects.toMatchObject({ code: 'PROVIDER_ERROR', status: 502, message: expect.stringContaining('timed out') });
    await expect(scrape({ url: ARTICLE, waitFor: 5_000, timeout: 50 })).rejects.toMatchObject({ code: 'PROVIDER_ERROR', status: 502 });
  });
});

describe('what needs another provider answers 503 PROVIDER_UNAVAILABLE naming what is missing, before fetching', () => {
  it.each([
    ['summary', { formats: ['summary'] }, 'A language model for the summary format', 'the AI binding ([ai] in wrangler.toml, Workers AI) or FIRECRAWL_API_KEY'],
    ['json', { formats: [{ type: 'json', prompt: 'the price' }] }, 'A language model for the json format', 'the AI binding ([ai] in wrangler.toml, Workers AI) or FIRECRAWL_API_KEY'],
    ['screenshot', { formats: ['markdown', { type: 'screenshot', fullPage: true }] }, 'A browser for the screenshot format', 'the BROWSER binding ([browser] in wrangler.toml) or FIRECRAWL_API_KEY'],
    ['actions', { actions: [{ type: 'click', selector: 'button' }] }, 'A browser for actions', 'the BROWSER binding ([browser] in wrangler.toml) or FIRECRAWL_API_KEY'],
    ['proxy enhanced', { proxy: 'enhanced' }, 'An anti-bot proxy for proxy: enhanced', 'FIRECRAWL_API_KEY'],
  ] as const)('%s', async (_, options, what, missing) => {
    const site = web();
    await expect(scrape({ url: ARTICLE, ...(options as Partial<ScrapeInput>) }, { site })).rejects.toMatchObject({
      code: 'PROVIDER_UNAVAILABLE',
      status: 503,
      message: `${what} is not configured on this server: set ${missing}.`,
    });
    await expect(scrape({ url: ARTICLE, ...(options as Partial<ScrapeInput>) }, { site, env: { FIRECRAWL_API_KEY: 'fc-key', WEB_PROVIDER: 'builtin' } })).rejects.toMatchObject({
      message: expect.stringContaining('set WEB_PROVIDER=firecrawl'),
    });
    expect(site.requests).toEqual([]);
  });
});
