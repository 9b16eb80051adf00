import { z } from '@hono/zod-openapi';
import type { Env } from '../core/config';
import { ApiError } from '../core/errors';
import { unitsFromCents } from '../core/money';
import { actionProblems, mapWithBuiltin, scrapeWithBuiltin, selectorProblems } from '../providers/builtin-web';
import { firecrawlMap, firecrawlScrape, firecrawlSearch } from '../providers/firecrawl';
import { perRequest } from './pricing';
import { defineOperation, type Operation, type Price, type ProviderResult } from '../core/operation';
import { DEFAULT_PDF_PAGES, type Format, mapInput, pdfPagesOf, scrapeInput, type ScrapeInput, searchInput, type SearchInput } from '../core/web-inputs';

/** Web tools: /scrape, /search, /map (spec "Web endpoints"). */


// Prices follow Firecrawl's credits at 0.1 cent each: a page is 1 credit, a PDF's pages past the first 1 each,
// LLM extraction 4 more, the enhanced proxy 4 more; 10 search results 2.
const SCRAPED_PAGE = unitsFromCents(0.1);
const PDF_PAGE = unitsFromCents(0.1);
const EXTRACTION = unitsFromCents(0.4);
const ENHANCED_PROXY = unitsFromCents(0.4);
const SEARCH_RESULTS_PAGE = unitsFromCents(0.2);
/** Firecrawl's scrape of an X (Twitter) page runs its X postprocessor: 29 credits more. */
const X_PAGE = unitsFromCents(2.9);

/** Whether a URL is an X (Twitter) page, which Firecrawl bills through its X postprocessor. */
function isXPage(url: string): boolean {
  const host = new URL(url).hostname.toLowerCase();
  return ['x.com', 'twitter.com'].some((domain) => host === domain || host.endsWith(`.${domain}`));
}

/** A json format, or change tracking in json mode, runs an LLM over the page. */
function extracts(entries: Format[]): boolean {
  return entries.some((entry) => typeof entry === 'object' && (entry.type === 'json' || (entry.type === 'changeTracking' && entry.modes?.includes('json') === true)));
}

function scrapedPageUnits(entries: Format[], enhancedProxy = false): number {
  return SCRAPED_PAGE + (extracts(entries) ? EXTRACTION : 0) + (enhancedProxy ? ENHANCED_PROXY : 0);
}

/** What the page answered of itself: a PDF's pages read, and the proxy Firecrawl used ("stealth" is its enhanced one). */
function pageMetadataOf(result: ProviderResult): { numPages?: unknown; proxyUsed?: unknown } {
  const page = (result.data as { result?: { metadata?: unknown }[] } | null)?.result?.[0];
  const metadata = page?.metadata;
  return typeof metadata === 'object' && metadata !== null ? metadata : {};
}

const scrapePrice: Price<ScrapeInput> = {
  display: {
    cents: 0.1,
    per: 'request',
    note: `one page; a PDF's pages past the first 0.1 cents each (up to parsers' maxPages, ${DEFAULT_PDF_PAGES} unless given); plus 0.4 cents with a json format or json-mode changeTracking (LLM extraction); plus 0.4 cents through the enhanced proxy (proxy enhanced, or auto when it escalates); plus 2.9 cents for an x.com or twitter.com page through Firecrawl (its X postprocessing); quoted at the most, charged on what the page was`,
  },
  // The most: every page the PDF bound allows, the enhanced proxy unless basic was asked for, an X page's postprocessing.
  // The built-in provider has neither of the last two (it refuses proxy: enhanced), so a scrape it serves holds neither.
  quote: (input, env) => {
    const firecrawl = env === undefined || pageProviderOf(env) === 'firecrawl';
    return (
      scrapedPageUnits(input.formats, firecrawl && input.proxy !== 'basic') +
      Math.max(0, (pdfPagesOf(input.parsers) ?? 1) - 1) * PDF_PAGE +
      (firecrawl && isXPage(input.url) ? X_PAGE : 0)
    );
  },
  settle: (input, result) => {
    const { numPages, proxyUsed } = pageMetadataOf(result);
    const pages = typeof numPages === 'number' && numPages > 1 ? Math.min(numPages, pdfPagesOf(input.parsers) ?? 1) : 1;
    // The built-in provider runs no language model: its json-mode change tracking is a diff, not an extraction.
    const formats = result.servedBy === 'builtin' ? withoutExtraction(input.formats) : input.formats;
    const xPage = result.servedBy !== 'builtin' && isXPage(input.url) ? X_PAGE : 0;
    return scrapedPageUnits(formats, input.proxy === 'enhanced' || (input.proxy === 'auto' && proxyUsed === 'stealth')) + (pages - 1) * PDF_PAGE + xPage;
  },
};

function withoutExtraction(entries: Format[]): Format[] {
  return entries.filter((entry) => typeof entry !== 'object' || entry.type !== 'changeTracking');
}

function sourceCount(input: SearchInput): number {
  return new Set(input.sources.map((entry) => (typeof entry === 'string' ? entry : entry.type))).size;
}

function resultsOf(result: ProviderResult): Record<string, unknown>[][] {
  const answer = (result.data as { result?: unknown[] } | null)?.result?.[0];
  if (!answer || typeof answer !== 'object') return [];
  return Object.values(answer).filter(Array.isArray) as Record<string, unknown>[][];
}

const SCRAPED_CONTENT = ['markdown', 'summary', 'html', 'rawHtml', 'links', 'images', 'screenshot', 'json', 'changeTracking'];

/** A result counts as scraped when it carries page content, whichever formats were asked for. */
function isScraped(item: Record<string, unknown>): boolean {
  return SCRAPED_CONTENT.some((name) => item[name] !== undefined && item[name] !== null);
}

/** Results pages of 10, rounded up; a search that found nothing still ran, and costs one page. */
function searchUnits(results: number): number {
  return Math.max(1, Math.ceil(results / 10)) * SEARCH_RESULTS_PAGE;
}

const searchPrice: Price<SearchInput> = {
  display: {
    cents: 0.2,
    per: 'results page',
    note: 'a results page is up to 10 results across all sources, rounded up, at least one; plus 0.1 cents per scraped result with scrapeOptions (0.5 with a json format); quoted on limit × sources, charged on results returned',
  },
  quote: (input) => {
    const most = input.limit * sourceCount(input);
    return searchUnits(most) + (input.scrapeOptions ? most * scrapedPageUnits(input.scrapeOptions.formats) : 0);
  },
  settle: (input, result) => {
    const most = input.limit * sourceCount(input);
    const lists = resultsOf(result);
    const returned = Math.min(most, lists.reduce((sum, list) => sum + list.length, 0));
    if (!input.scrapeOptions) return searchUnits(returned);
    const scraped = Math.min(most, lists.reduce((sum, list) => sum + list.filter(isScraped).length, 0));
    return searchUnits(returned) + scraped * scrapedPageUnits(input.scrapeOptions.formats);
  },
};

// The payloads, for the OpenAPI document: the spec's `result` array, whose first element holds the answer.
// Loose and partial: Firecrawl adds fields over time, and they pass through untouched.

const text = z.union([z.string(), z.array(z.string())]);

const PageMetadata = z
  .looseObject({
    title: text,
    description: text,
    language: text,
    sourceURL: z.string().openapi({ description: 'The URL asked for.' }),
    url: z.string().openapi({ description: 'The final URL, after redirects.' }),
    statusCode: z.number().int().openapi({ description: "The page's own HTTP status; a 404 page is still a successful scrape." }),
    contentType: z.string(),
    error: z.string().nullable(),
  })
  .partial()
  .openapi('WebPageMetadata');

const ScrapedPage = z
  .looseObject({
    markdown: z.string(),
    summary: z.string().nullable(),
    html: z.string().nullable(),
    rawHtml: z.string().nullable(),
    links: z.array(z.string()),
    images: z.array(z.string()),
    screenshot: z.string().nullable().openapi({ description: "The screenshot's URL: Firecrawl's expires after 24 hours; the built-in provider answers a data: URL, which does not expire." }),
    actions: z
      .looseObject({ screenshots: z.array(z.string()), scrapes: z.array(z.looseObject({ url: z.string(), html: z.string() })), javascriptReturns: z.array(z.unknown()), pdfs: z.array(z.string()) })
      .partial()
      .nullable()
      .openapi({ description: 'What the screenshot and scrape actions captured, in order.' }),
    json: z.record(z.string(), z.unknown()).nullable().openapi({ description: 'What the json format extracted.' }),
    changeTracking: z
      .looseObject({
        previousScrapeAt: z.string().nullable(),
        changeStatus: z.enum(['new', 'same', 'changed', 'removed']),
        visibility: z.enum(['visible', 'hidden']),
        diff: z.string().nullable(),
        json: z.record(z.string(), z.unknown()).nullable(),
      })
      .partial()
      .nullable(),
    warning: z.string().nullable(),
    metadata: PageMetadata,
  })
  .partial()
  .openapi('WebScrapedPage');

const SearchHit = z
  .looseObject({ url: z.string(), title: z.string(), description: z.string(), snippet: z.string(), date: z.string(), position: z.number().int() })
  .partial();

const ImageHit = z
  .looseObject({ url: z.string(), title: z.string(), imageUrl: z.string(), imageWidth: z.number().int(), imageHeight: z.number().int(), position: z.number().int() })
  .partial();

const SearchResults = z
  .looseObject({
    web: z.array(z.intersection(SearchHit, ScrapedPage)).openapi({ description: 'Web results; with scrapeOptions, each also carries its scraped content.' }),
    news: z.array(z.intersection(SearchHit, ScrapedPage)),
    images: z.array(ImageHit),
  })
  .partial()
  .openapi('WebSearchResults', { description: 'One list per source asked for, each up to limit long.' });

const SiteLinks = z
  .looseObject({
    links: z.array(z.looseObject({ url: z.string(), title: z.string(), description: z.string() }).partial()),
    warning: z.string().openapi({ description: "Why the links are not the whole site, when the built-in provider stopped before reading every page it found: at the requests one call may make, at the call's time limit or at its 100 pages. Absent when it read every page it found or had `limit` links." }),
  })
  .partial()
  .openapi('WebSiteLinks');

function payloadOf<Answer extends z.ZodType>(answer: Answer, description: string) {
  return z.object({ result: z.array(answer).openapi({ description: `One element; result[0] holds ${description}.` }) });
}

const ScrapePayload = payloadOf(ScrapedPage, 'the page in the requested formats and its metadata');
const SearchPayload = payloadOf(SearchResults, 'the results by source');
const MapPayload = payloadOf(SiteLinks, 'the URLs discovered');

/** Slack over the caller's timeout, so Firecrawl's own time-out answer reaches us before our time limit cuts it off. */
const TRANSPORT_MARGIN_MS = 5_000;
const MAP_TIME_LIMIT_MS = 60_000;

/**
 * Who serves /scrape and /map: WEB_PROVIDER when it names one, else Firecrawl when its key is set,
 * else the built-in provider, so a fresh installation scrapes and maps with no vendor account.
 */
function pageProviderOf(env: Env): 'firecrawl' | 'builtin' {
  if (env.WEB_PROVIDER === 'builtin' || env.WEB_PROVIDER === 'firecrawl') return env.WEB_PROVIDER;
  return env.FIRECRAWL_API_KEY ? 'firecrawl' : 'builtin';
}

const scrape: Operation<typeof scrapeInput> = {
  platform: 'web',
  name: 'scrape',
  method: 'POST',
  paths: ['/scrape', '/v1/data/web/scrape'],
  summary: 'Scrape one page',
  description:
    'Fetches one URL (rendered in a browser when its scripts build it, or when a screenshot, actions, waitFor or mobile are asked for) and answers its content in the requested formats (Markdown by default; HTML, raw HTML, links, images, a summary, a screenshot, JSON extraction, change tracking) with the page metadata, at `result[0]`. An identical scrape within `maxAge` is answered from cache.',
  input: scrapeInput,
  output: ScrapePayload,
  price: scrapePrice,
  call: async (input, context) =>
    pageProviderOf(context.env) === 'builtin' ? { ...(await scrapeWithBuiltin(input, context)), servedBy: 'builtin' } : firecrawlScrape(input, context),
  // The built-in scraper's own refusals (selectors its parser does not take, actions its browser does not run),
  // before a sandbox answers or a job is queued; scrapeWithBuiltin checks them again when called on its own.
  check: (input, env) => {
    if (pageProviderOf(env) !== 'builtin') return;
    const details = [...selectorProblems(input), ...actionProblems(input.actions)];
    if (details.length > 0) throw ApiError.validation(details);
  },
  timeoutMs: (input) => input.timeout + TRANSPORT_MARGIN_MS,
  // Change tracking compares with the previous scrape, so its answer is never one to replay.
  freshnessMs: (input) => (input.formats.some((format) => typeof format === 'object' && format.type === 'changeTracking') ? 0 : input.maxAge),
  // maxAge says how old an answer may be, not which answer: scrapes differing only in it share an entry.
  cacheKeyOf: ({ maxAge: _maxAge, ...rest }) => rest,
};

const search: Operation<typeof searchInput> = {
  platform: 'web',
  name: 'search',
  method: 'POST',
  paths: ['/search', '/v1/data/web/search'],
  summary: 'Search the web',
  description:
    'Searches the web, news and images for a query and answers the results grouped by source at `result[0].web`, `result[0].news` and `result[0].images`; with `scrapeOptions`, every result also carries its scraped content and is billed as a scraped page.',
  input: searchInput,
  output: SearchPayload,
  price: searchPrice,
  call: firecrawlSearch,
  timeoutMs: (input) => input.timeout + TRANSPORT_MARGIN_MS,
  // Results move within the hour; a quarter of an hour keeps a retried question cheap without going stale.
  freshnessMs: 15 * 60 * 1000,
};

const map: Operation<typeof mapInput> = {
  platform: 'web',
  name: 'map',
  method: 'POST',
  paths: ['/map', '/v1/data/web/map'],
  summary: "Map a site's URLs",
  description:
    "Discovers the URLs of a site from its sitemaps and links and answers them at `result[0].links` (each with url, and title and description where known), optionally ordered by relevance to `search`.",
  input: mapInput,
  output: MapPayload,
  price: perRequest(0.1),
  call: (input, context) => (pageProviderOf(context.env) === 'builtin' ? mapWithBuiltin(input, context) : firecrawlMap(input, context)),
  timeoutMs: (input) => (input.timeout === undefined ? MAP_TIME_LIMIT_MS : input.timeout + TRANSPORT_MARGIN_MS),
  // A site's set of URLs changes slowly; an hour-old map is as good as a fresh one.
  freshnessMs: 60 * 60 * 1000,
};

export const webOperations: Operation[] = [defineOperation(scrape), defineOperation(search), defineOperation(map)];
