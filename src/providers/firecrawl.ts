import type { Env } from '../core/config';
import type { ProviderContext, ProviderResult } from '../core/operation';
import { pdfPagesOf, type MapInput, type ScrapeInput, type SearchInput, unreadPagesWarning } from '../core/web-inputs';
import { assertPublicName, parseTarget } from './builtin-web/safe-fetch';
import { builtinWebSettings } from './builtin-web/settings';
import { normalizeUpstream } from './normalize';

/**
 * Firecrawl v2 (cloud or self-hosted): POST /v2/scrape, /v2/search and /v2/map with a bearer key. Our
 * field names are Firecrawl's, so each body is the validated input with defaults applied, named field by
 * field so nothing unintended reaches the vendor. The answer becomes the spec's `{ result: [answer] }`.
 */

const PROVIDER = 'Firecrawl';
const DEFAULT_BASE_URL = 'https://api.firecrawl.dev';

/** Firecrawl's 429 is its rate or concurrency limit ("Rate limit exceeded"); only running out of credits is quota. */
const OUT_OF_CREDITS = /insufficient credits/i;

interface FirecrawlAnswer {
  success?: unknown;
  error?: unknown;
  data?: unknown;
  links?: unknown;
}

export async function firecrawlScrape(input: ScrapeInput, context: ProviderContext): Promise<ProviderResult> {
  refusePrivateOnItsFace(input.url, context.env);
  const answer = await post('v2/scrape', scrapeBody(input), context);
  const page = objectOr(answer.data, 'a page') as Record<string, unknown>;
  if (markdownOnlyForTracking(input.formats)) delete page.markdown;
  warnOfUnreadPages(page, input.parsers);
  return { data: { result: [page] } };
}

export async function firecrawlSearch(input: SearchInput, context: ProviderContext): Promise<ProviderResult> {
  const answer = await post('v2/search', searchBody(input), context);
  const results = objectOr(answer.data, 'search results') as Record<string, unknown>;
  if (input.scrapeOptions && markdownOnlyForTracking(input.scrapeOptions.formats)) {
    for (const list of Object.values(results)) if (Array.isArray(list)) for (const item of list) if (typeof item === 'object' && item !== null) delete (item as { markdown?: unknown }).markdown;
  }
  return { data: { result: [results] } };
}

export async function firecrawlMap(input: MapInput, context: ProviderContext): Promise<ProviderResult> {
  refusePrivateOnItsFace(input.url, context.env);
  const answer = await post('v2/map', mapBody(input), context);
  if (!Array.isArray(answer.links)) throw normalizeUpstream.failed(PROVIDER, 'answered without links');
  return { data: { result: [{ links: answer.links }] } };
}

/**
 * Firecrawl fetches the page, not us, so our DNS check cannot speak for its network; what is private on its
 * face (an internal address, localhost, a metadata service) is refused as the built-in provider refuses it,
 * whichever provider serves the call. A self-hosted Firecrawl must keep its own egress off private networks
 * (decisions.md, "Firecrawl gets the same options").
 */
function refusePrivateOnItsFace(url: string, env: Env): void {
  assertPublicName(parseTarget(url), builtinWebSettings(env));
}

function scrapeBody(input: ScrapeInput) {
  return {
    url: input.url,
    formats: upstreamFormats(input.formats),
    onlyMainContent: input.onlyMainContent,
    includeTags: input.includeTags,
    excludeTags: input.excludeTags,
    maxAge: input.maxAge,
    waitFor: input.waitFor,
    mobile: input.mobile,
    timeout: input.timeout,
    parsers: upstreamParsers(input.parsers),
    proxy: input.proxy,
    location: locationOf(input.location),
    actions: input.actions,
    blockAds: input.blockAds,
  };
}

type Formats = ScrapeInput['formats'];

/** A PDF read only to its bound says so, as the built-in provider's does: the caller may ask for more pages. */
function warnOfUnreadPages(page: Record<string, unknown>, parsers: ScrapeInput['parsers']): void {
  const { numPages, totalPages } = (page.metadata ?? {}) as { numPages?: unknown; totalPages?: unknown };
  if (typeof numPages !== 'number' || typeof totalPages !== 'number') return;
  const said = unreadPagesWarning(numPages, totalPages, parsers);
  if (!said) return;
  page.warning = typeof page.warning === 'string' && page.warning ? `${page.warning} ${said}` : said;
}

/**
 * The PDF parser with its page bound always named: Firecrawl reads every page unless told, billing each past
 * the first, and the call's quote holds only up to the bound (pdfPagesOf). Without PDF parsing, none.
 */
function upstreamParsers(parsers: ScrapeInput['parsers']) {
  const maxPages = pdfPagesOf(parsers);
  if (maxPages === null) return [];
  const pdf = parsers?.find((parser) => typeof parser === 'object');
  return [{ type: 'pdf' as const, ...(pdf?.mode ? { mode: pdf.mode } : {}), maxPages }];
}

/** Change tracking alone: Firecrawl compares Markdown, so it is asked for, and left out of the answer. */
function markdownOnlyForTracking(formats: Formats): boolean {
  return formats.some((format) => typeof format === 'object' && format.type === 'changeTracking') && !formats.includes('markdown');
}

function upstreamFormats(formats: Formats): Formats {
  return markdownOnlyForTracking(formats) ? [...formats, 'markdown'] : formats;
}

function searchBody(input: SearchInput) {
  return {
    query: input.query,
    limit: input.limit,
    sources: input.sources,
    categories: input.categories,
    tbs: input.tbs,
    location: input.location,
    country: input.country.toUpperCase(),
    includeDomains: input.includeDomains,
    excludeDomains: input.excludeDomains,
    timeout: input.timeout,
    // Each result is charged as one page: a PDF's first page only, and no escalation to the enhanced proxy
    // (Firecrawl bills each result's extra pages and its escalation; a site that refuses the basic proxy answers
    // its refusal page, billed and charged as the one page it is).
    scrapeOptions: input.scrapeOptions && {
      formats: upstreamFormats(input.scrapeOptions.formats),
      onlyMainContent: input.scrapeOptions.onlyMainContent,
      parsers: [{ type: 'pdf', maxPages: 1 }],
      proxy: 'basic',
    },
  };
}

function mapBody(input: MapInput) {
  return {
    url: input.url,
    search: input.search,
    sitemap: input.sitemap,
    includeSubdomains: input.includeSubdomains,
    ignoreQueryParameters: input.ignoreQueryParameters,
    limit: input.limit,
    // Firecrawl sets no map timeout of its own; without one from the caller, our time limit is the only one.
    timeout: input.timeout,
    location: locationOf(input.location),
  };
}

function locationOf(location: ScrapeInput['location']) {
  return location && { country: location.country?.toUpperCase(), languages: location.languages };
}

/** One call: every outcome but a `success: true` answer leaves as a classified ApiError. */
async function post(path: string, body: object, { env, signal }: ProviderContext): Promise<FirecrawlAnswer> {
  const key = env.FIRECRAWL_API_KEY;
  if (!key) throw normalizeUpstream.unavailable(PROVIDER, ['FIRECRAWL_API_KEY']);

  const response = await normalizeUpstream.fetch(PROVIDER, endpoint(env, path), {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
    signal,
  });
  // Its 401 is a refused key; its 403 a site it does not scrape ("This website is no longer supported"), not the key.
  if (!response.ok) throw await normalizeUpstream.fromStatus(PROVIDER, response, { quotaHint: OUT_OF_CREDITS, credentialStatuses: [401] });

  const answer = await normalizeUpstream.json(PROVIDER, response, signal);
  if (typeof answer !== 'object' || answer === null) throw normalizeUpstream.failed(PROVIDER, 'answered with a body that is not an object');
  const { success, error } = answer as FirecrawlAnswer;
  if (success !== true) throw normalizeUpstream.rejected(PROVIDER, typeof error === 'string' ? error.slice(0, 300) : undefined);
  return answer as FirecrawlAnswer;
}

/** Relative to the base, so a self-hosted instance behind a path prefix keeps it. */
function endpoint(env: Env, path: string): URL {
  const base = env.FIRECRAWL_BASE_URL || DEFAULT_BASE_URL;
  return new URL(path, base.endsWith('/') ? base : `${base}/`);
}

function objectOr(value: unknown, what: string): object {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw normalizeUpstream.failed(PROVIDER, `answered without ${what}`);
  return value;
}
