import { z } from '@hono/zod-openapi';
import type { Env } from '../core/config';
import { unitsFromCents } from '../core/money';
import { mapWithBuiltin, scrapeWithBuiltin } from '../providers/builtin-web';
import { firecrawlMap, firecrawlScrape, firecrawlSearch } from '../providers/firecrawl';
import { perRequest } from './pricing';
import { defineOperation, type Operation, type Price, type ProviderResult } from '../core/operation';

/** Web tools: /scrape, /search, /map (spec "Web endpoints"). */

const httpUrl = z.url({ protocol: /^https?$/, error: 'An absolute http(s) URL, such as https://example.com/page.' }).openapi({ example: 'https://example.com' });

const countryCode = z.string().regex(/^[A-Za-z]{2}$/, 'An ISO 3166-1 alpha-2 country code, such as US.');

const location = z
  .strictObject({
    country: countryCode.openapi({ example: 'US' }),
    languages: z.array(z.string().min(1)).min(1).optional().openapi({ description: 'Preferred languages in order, as in Accept-Language.', example: ['en-US'] }),
  })
  .openapi({ description: 'Where the page is fetched from: a proxy in that country, with its languages and time zone.' });

/**
 * A union refuses a bad entry as a whole, at the entry's own path. Where the entry got past its type (an object
 * of a known kind with one bad field), that field's complaint says more than the list of what entries may be.
 */
function entryError(expected: string) {
  return (issue: z.core.$ZodRawIssue): string | undefined => {
    if (issue.code !== 'invalid_union') return undefined;
    const inner = (issue.errors as z.core.$ZodIssue[][]).flat().find((found) => found.path.length > 0 && found.path[0] !== 'type');
    if (!inner) return expected;
    const field = inner.path.map((part, index) => (typeof part === 'number' ? `[${part}]` : `${index === 0 ? '' : '.'}${String(part)}`)).join('');
    return `${field}: ${inner.message.replace(/^Invalid input: /, '')}.`;
  };
}

const FORMAT_PRESETS = ['markdown', 'summary', 'html', 'rawHtml', 'links', 'images'] as const;

const formatObject = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('json'),
    schema: z.record(z.string(), z.unknown()).optional().openapi({ description: 'JSON Schema of the object to extract.' }),
    prompt: z.string().min(1).optional().openapi({ description: 'What to extract, in words.' }),
  }),
  z.strictObject({
    type: z.literal('screenshot'),
    fullPage: z.boolean().optional(),
    quality: z.number().int().min(1).max(100).optional(),
  }),
  z.strictObject({
    type: z.literal('changeTracking'),
    modes: z.array(z.enum(['git-diff', 'json'])).min(1).optional(),
  }),
]);

const format = z.union([z.enum(FORMAT_PRESETS), formatObject], {
  error: entryError(`Each format is one of ${FORMAT_PRESETS.join(', ')}, or an object whose type is json, screenshot or changeTracking.`),
});

const formats = z.array(format).openapi({
  description: 'String presets, or objects: {type: "json", schema?, prompt?} (LLM extraction, costs more), {type: "screenshot", fullPage?, quality?}, {type: "changeTracking", modes?} (compares the page Markdown with that of the previous scrape; Markdown is computed for it even when not asked for).',
  example: ['markdown', 'links'],
});

type Format = z.infer<typeof format>;

/** Cross-field rules run even when another field is wrong too, so one refusal names every offending field. */
const evenBesideOtherFaults = { when: (payload: { value: unknown }) => typeof payload.value === 'object' && payload.value !== null };

/** Longest wait a search or a map may ask for; the spec gives only a minimum, and no worker call usefully waits longer. */
const MAX_TIMEOUT_MS = 300_000;

const scrapeInput = z
  .strictObject({
    url: httpUrl.openapi({ description: 'The publicly reachable page to fetch.' }),
    formats: formats.default(['markdown']),
    onlyMainContent: z.boolean().default(true).openapi({ description: 'Drop headers, navigation and footers.' }),
    includeTags: z.array(z.string().min(1)).optional().openapi({ description: 'HTML tags or CSS selectors to keep.' }),
    excludeTags: z.array(z.string().min(1)).optional().openapi({ description: 'HTML tags or CSS selectors to drop.' }),
    maxAge: z.number().int().min(0).default(172_800_000).openapi({ description: 'Milliseconds of acceptable cache age; 0 always fetches afresh.' }),
    waitFor: z.number().int().min(0).default(0).openapi({ description: 'Milliseconds to wait for the page before reading it.' }),
    mobile: z.boolean().default(false),
    timeout: z.number().int().min(1000).max(MAX_TIMEOUT_MS).default(60_000).openapi({ description: 'Milliseconds before the scrape gives up (not charged).' }),
    parsers: z
      .array(
        z.union(
          [
            z.literal('pdf'),
            z.strictObject({ type: z.literal('pdf'), mode: z.enum(['fast', 'auto', 'ocr']).optional(), maxPages: z.number().int().min(1).max(10_000).optional() }),
          ],
          { error: entryError('Each parser is "pdf" or an object {type: "pdf", mode?, maxPages?}.') },
        ),
      )
      .optional()
      .openapi({ description: 'PDF parsing: ["pdf"] (the default upstream), [{type: "pdf", mode?: fast|auto|ocr, maxPages?}], or [] for the file as base64.' }),
    proxy: z.enum(['basic', 'enhanced', 'auto']).default('auto').openapi({ description: 'auto escalates only on failure; enhanced forces heavy anti-bot handling and costs more.' }),
    location: location.optional(),
  });

const SOURCE_TYPES = ['web', 'news', 'images'] as const;
const source = z.union([z.enum(SOURCE_TYPES), z.strictObject({ type: z.enum(SOURCE_TYPES) })], {
  error: entryError('Each source is web, news or images, or an object {type} naming one of them.'),
});

const hostname = z
  .string()
  .max(253)
  .regex(/^([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/, 'A hostname without protocol or path, such as example.com.');

const searchInput = z
  .strictObject({
    query: z.string().trim().min(1).max(500).openapi({ description: 'What to search for; operators such as site: work.' }),
    limit: z.number().int().min(1).max(100).default(10).openapi({ description: 'Results per source.' }),
    sources: z.array(source).min(1).default(['web']),
    categories: z.array(z.enum(['github', 'research', 'pdf'])).optional(),
    tbs: z.string().min(1).optional().openapi({ description: 'Time filter, for example qdr:d for the past day.' }),
    location: z.string().min(1).optional().openapi({ description: 'Geo-target text, for example "San Francisco,California,United States".' }),
    country: countryCode.default('US'),
    includeDomains: z.array(hostname).min(1).optional().openapi({ description: 'Only results from these hostnames; not with excludeDomains.' }),
    excludeDomains: z.array(hostname).min(1).optional().openapi({ description: 'No results from these hostnames; not with includeDomains.' }),
    timeout: z.number().int().min(1000).max(MAX_TIMEOUT_MS).default(60_000),
    scrapeOptions: z
      .strictObject({ formats: formats.default(['markdown']), onlyMainContent: z.boolean().default(true) })
      .optional()
      .openapi({ description: 'When present, every result is also scraped, and billed as a scraped page.' }),
  })
  .superRefine((input, context) => {
    if (input.includeDomains && input.excludeDomains) {
      context.addIssue({ code: 'custom', path: ['excludeDomains'], message: 'includeDomains and excludeDomains are mutually exclusive; send one of them.' });
    }
  }, evenBesideOtherFaults);

const mapInput = z.strictObject({
  url: httpUrl.openapi({ description: 'Base URL of the site.' }),
  search: z.string().min(1).optional().openapi({ description: 'Orders the URLs by relevance to this query.' }),
  sitemap: z.enum(['skip', 'include', 'only']).default('include'),
  includeSubdomains: z.boolean().default(true),
  ignoreQueryParameters: z.boolean().default(true),
  limit: z.number().int().min(1).max(100_000).default(5000),
  timeout: z.number().int().min(1000).max(MAX_TIMEOUT_MS).optional(),
  location: location.optional(),
});

export type ScrapeInput = z.infer<typeof scrapeInput>;
export type SearchInput = z.infer<typeof searchInput>;
export type MapInput = z.infer<typeof mapInput>;

// Prices follow Firecrawl's credits at 0.1 cent each: a page is 1 credit, LLM extraction 4 more; 10 search results 2.
const SCRAPED_PAGE = unitsFromCents(0.1);
const EXTRACTION = unitsFromCents(0.4);
const ENHANCED_PROXY = unitsFromCents(0.4);
const SEARCH_RESULTS_PAGE = unitsFromCents(0.2);

/** A json format, or change tracking in json mode, runs an LLM over the page. */
function extracts(entries: Format[]): boolean {
  return entries.some((entry) => typeof entry === 'object' && (entry.type === 'json' || (entry.type === 'changeTracking' && entry.modes?.includes('json') === true)));
}

function scrapedPageUnits(entries: Format[], proxy?: ScrapeInput['proxy']): number {
  return SCRAPED_PAGE + (extracts(entries) ? EXTRACTION : 0) + (proxy === 'enhanced' ? ENHANCED_PROXY : 0);
}

const scrapePrice: Price<ScrapeInput> = {
  display: { cents: 0.1, per: 'request', note: 'one page; plus 0.4 cents with a json format or json-mode changeTracking (LLM extraction), plus 0.4 cents with proxy enhanced' },
  quote: (input) => scrapedPageUnits(input.formats, input.proxy),
  // The built-in provider runs no language model: its json-mode change tracking is a diff, not an extraction.
  settle: (input, result) => scrapedPageUnits(result.servedBy === 'builtin' ? withoutExtraction(input.formats) : input.formats, input.proxy),
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
    screenshot: z.string().nullable().openapi({ description: 'URL of the screenshot; it expires after 24 hours.' }),
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
    'Fetches one URL (JavaScript-rendered pages with Firecrawl; the built-in provider reads the HTML as served) and answers its content in the requested formats (Markdown by default; HTML, raw HTML, links, images, a summary, a screenshot, JSON extraction, change tracking) with the page metadata, at `result[0]`. An identical scrape within `maxAge` is answered from cache.',
  input: scrapeInput,
  output: ScrapePayload,
  price: scrapePrice,
  call: async (input, context) =>
    pageProviderOf(context.env) === 'builtin' ? { ...(await scrapeWithBuiltin(input, context)), servedBy: 'builtin' } : firecrawlScrape(input, context),
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
