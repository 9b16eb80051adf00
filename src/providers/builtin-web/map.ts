import { ApiError } from '../../core/errors';
import type { ProviderResult } from '../../core/operation';
import { withDeadline } from './deadline';
import { normalizeUpstream, RETRY_ADVICE } from '../normalize';
import { pageRequestHeaders } from './headers';
import type { BuiltinWebContext, MapInput } from './inputs';
import { readHtmlPage } from './documents';
import { collectLinks, readMetadata } from './page';
import { rankByRelevance, type SiteLink } from './relevance';
import { loadRobots, type RobotsRules } from './robots';
import { logEvent } from '../../core/log';
import { type FetchOptions, type OpenedResource, parseTarget, SafeFetcher } from './safe-fetch';
import { builtinWebSettings } from './settings';
import { sitemapPages } from './sitemaps';
import { SubrequestBudget } from '../../core/subrequests';

const PROVIDER = 'The built-in web provider';
const DEFAULT_LIMIT = 5000;
/** When the caller gives no timeout: the registry's time limit for /map is 60 s, and discovery stops well before. */
const DEFAULT_TIMEOUT_MS = 30_000;
/** Time kept back from the timeout to rank and answer. */
const ANSWER_MARGIN_MS = 1_000;
const MAX_CRAWLED_PAGES = 100;
const CRAWL_CONCURRENCY = 4;
const MAX_PAGE_BYTES = 2 * 1024 * 1024;
const SITEMAP_LIMITS = { maxFiles: 50, maxUrls: 100_000 };
/** Links that are files, not pages: listed when found, never fetched by the crawl. */
const NOT_PAGES = /\.(?:pdf|zip|gz|tgz|rar|7z|jpe?g|png|gif|webp|avif|svg|ico|mp[34]|webm|mov|avi|woff2?|ttf|css|js|json|xml|txt|csv|xlsx?|docx?|pptx?)$/i;

/**
 * /map without any vendor: the site's sitemaps (from robots.txt, else /sitemap.xml; indexes and gzip
 * followed) and a breadth-first crawl of its pages within the time limit, obeying robots.txt. Answers
 * `{ result: [{ links: [{ url, title?, description? }] }] }`, Firecrawl's shape. A map that found nothing
 * because the site did not answer (a network error, the time limit) is the upstream's failure, 502 and not
 * charged, as /scrape's is; one that found nothing on a site that answered (every page a 404, all disallowed)
 * is an empty map. Discovery also stops at the call's subrequest budget (core/subrequests.ts), which a site
 * on one host does not reach and one crawled over many subdomains may: the map answers what it found with a
 * `warning` saying so, or, having found nothing, 422 (uncharged, and not worth retrying).
 */
export async function mapWithBuiltin(input: MapInput, context: BuiltinWebContext): Promise<ProviderResult> {
  const time = Math.max(500, (input.timeout ?? DEFAULT_TIMEOUT_MS) - ANSWER_MARGIN_MS);
  const base = parseTarget(input.url);
  const subrequests = context.subrequests ?? new SubrequestBudget();
  const { links, unanswered, pagesLeft } = await withDeadline(context.signal, time, (discovery) => discover(input, base, { ...context, subrequests }, discovery));
  if (context.signal.aborted) throw normalizeUpstream.failed(`Mapping ${base.origin}`, 'timed out');
  const stopped = subrequests.ranOut
    ? `the map stopped at the ${subrequests.limit} requests one call may make (pages, redirects, robots.txt files, sitemaps and DNS lookups count)`
    : pagesLeft === 'time'
      ? `the map stopped at its time limit (${input.timeout ?? DEFAULT_TIMEOUT_MS} ms) with pages left to read`
      : pagesLeft === 'pages'
        ? `the map reads at most ${MAX_CRAWLED_PAGES} pages, and pages were left to read`
        : undefined;
  if (links.length === 0 && subrequests.ranOut) throw normalizeUpstream.rejected(PROVIDER, `nothing to list was found at ${base.origin}: ${stopped}`);
  if (links.length === 0 && unanswered) throw normalizeUpstream.failed(`Mapping ${base.origin}`, `nothing was found because the site did not answer (${unanswered})`);
  const ranked = input.search ? rankByRelevance(links, input.search) : links;
  const warning = stopped ? `Not the whole site: ${stopped}, and these are the links found until then.` : undefined;
  return { data: { result: [{ links: ranked.slice(0, input.limit ?? DEFAULT_LIMIT), ...(warning ? { warning } : {}) }] } };
}

/**
 * A fetcher that keeps the first fetch of the site that failed for want of an answer (a network error, the
 * time limit): the pages that fail are skipped, and a map that found nothing says why. A fetch refused for the
 * call's budget is not the site's silence.
 */
class DiscoveryFetcher extends SafeFetcher {
  unanswered: string | undefined;

  override async open(target: string | URL, options: FetchOptions = {}): Promise<OpenedResource> {
    try {
      return await super.open(target, options);
    } catch (error) {
      if (error instanceof ApiError && error.code === 'PROVIDER_ERROR' && !this.budget.ranOut) this.unanswered ??= error.message.replace(` ${RETRY_ADVICE}`, '').replace(/\.$/, '');
      throw error;
    }
  }
}

/** Every URL of the site found before `discovery` aborts, in the order found, and why a fetch went unanswered. */
async function discover(
  input: MapInput,
  base: URL,
  context: BuiltinWebContext & { subrequests: SubrequestBudget },
  discovery: AbortSignal,
): Promise<{ links: SiteLink[]; unanswered: string | undefined; pagesLeft: PagesLeft }> {
  const settings = builtinWebSettings(context.env);
  const fetcher = new DiscoveryFetcher({ settings, signal: discovery, budget: context.subrequests, ...(context.fetch ? { fetch: context.fetch } : {}) });
  const headers = pageRequestHeaders(settings, { location: input.location });

  // A refused or unresolvable site fails the call here; later pages that fail are only skipped.
  await fetcher.assertPublic(base);

  const site = new SiteScope(base, input.includeSubdomains ?? true, input.ignoreQueryParameters ?? true);
  // An origin's robots.txt is read before the first page of it is fetched, never merely to list a link to it.
  const robots = new Map<string, Promise<RobotsRules>>();
  const read = new Map<string, RobotsRules>();
  const rulesFor = (url: URL) => {
    let rules = robots.get(url.origin);
    if (!rules) {
      const origin = url.origin;
      robots.set(origin, (rules = loadRobots(origin, fetcher, headers).then((loaded) => (read.set(origin, loaded), loaded))));
    }
    return rules;
  };
  const found = new Map<string, SiteLink>();
  const fromSitemaps = new Set<string>();
  const add = (url: string) => {
    const key = site.normalize(url);
    if (key && !found.has(key)) found.set(key, { url: key });
    return key;
  };

  if ((input.sitemap ?? 'include') !== 'skip') {
    const declared = (await rulesFor(base)).sitemaps;
    const sources = declared.length > 0 ? declared : [`${base.origin}/sitemap.xml`];
    for (const url of await sitemapPages(sources, fetcher, headers, SITEMAP_LIMITS)) {
      const key = add(url);
      if (key) fromSitemaps.add(key);
    }
  }

  let pagesLeft: PagesLeft = discovery.aborted ? 'time' : undefined;
  if ((input.sitemap ?? 'include') !== 'only') {
    const enough = input.search ? Number.POSITIVE_INFINITY : (input.limit ?? DEFAULT_LIMIT);
    pagesLeft = await crawl({ start: base.href, seeds: [...found.keys()], fetcher, headers, site, rulesFor, read, found, add, enough });
  }
  // A link found before its origin's robots.txt was read, which that file disallows, goes (a sitemap's own stay).
  for (const key of found.keys()) {
    const rules = read.get(new URL(key).origin);
    if (rules?.read && !fromSitemaps.has(key) && !rules.allows(key)) found.delete(key);
  }
  // A robots.txt whose rules cost more to apply than the budget left links out: said to the operator, not invented.
  for (const [origin, rules] of robots) {
    const unchecked = (await rules).unchecked();
    if (unchecked > 0) logEvent('warn', 'robots_budget_spent', { origin, unchecked });
  }

  return { links: [...found.values()], unanswered: fetcher.unanswered, pagesLeft };
}

interface Crawl {
  start: string;
  seeds: string[];
  fetcher: SafeFetcher;
  headers: Record<string, string>;
  site: SiteScope;
  rulesFor: (url: URL) => Promise<RobotsRules>;
  /** The robots.txt files read so far, by origin. */
  read: Map<string, RobotsRules>;
  found: Map<string, SiteLink>;
  add: (url: string) => string | undefined;
  /** Stop once this many URLs are known. */
  enough: number;
}

/**
 * Breadth-first, a few pages at a time, in a fixed order (links are recorded in the order of the pages
 * that hold them), so the same site maps the same way every time. A page robots.txt disallows is never
 * fetched, and not listed unless the site's own sitemap lists it. A host's robots.txt is read before the
 * crawl fetches a page of it, not to list a link to it: a link to a subdomain the crawl does not reach is
 * listed unjudged (a page linking to 700 subdomains would otherwise cost 2,100 requests, a robots.txt and
 * two lookups each, before the map could list them).
 */
/** Why pages of the site were left unread: its time ran out, or it read its MAX_CRAWLED_PAGES; undefined when none were (or it had its limit of links). */
type PagesLeft = 'time' | 'pages' | undefined;

async function crawl({ start, seeds, fetcher, headers, site, rulesFor, read, found, add, enough }: Crawl): Promise<PagesLeft> {
  const startKey = site.normalize(start);
  const queue = [...new Set([start, ...seeds])];
  const visited = new Set<string>();
  let fetched = 0;
  // A page being read when the time ran out was not read, though visited: its links are unknown.
  let cutOff = false;
  while (queue.length > 0 && fetched < MAX_CRAWLED_PAGES && found.size < enough && !fetcher.exhausted) {
    const batch: string[] = [];
    while (queue.length > 0 && batch.length < Math.min(CRAWL_CONCURRENCY, MAX_CRAWLED_PAGES - fetched)) {
      const next = queue.shift()!;
      const key = site.normalize(next);
      if (!key || visited.has(key) || NOT_PAGES.test(new URL(key).pathname)) continue;
      visited.add(key);
      batch.push(next);
    }
    fetched += batch.length;
    const pages = await Promise.all(batch.map((url) => visit(url, fetcher, headers, rulesFor)));
    if (fetcher.signal.aborted && pages.some((page) => !page)) cutOff = true;
    for (const [index, page] of pages.entries()) {
      if (!page) continue;
      const key = site.normalize(batch[index]!);
      // The base URL is listed once it proved to be a page the crawler may read.
      if (key === startKey) add(start);
      const known = key ? found.get(key) : undefined;
      if (known) Object.assign(known, page.details);
      for (const link of page.links) {
        if (found.size >= enough) break;
        const url = new URL(link);
        if (!site.contains(url)) continue;
        const rules = read.get(url.origin);
        if (rules?.read && !rules.allows(link)) continue;
        const linkKey = add(link);
        if (linkKey && !visited.has(linkKey)) queue.push(link);
      }
    }
  }
  const unread = queue.some((url) => {
    const key = site.normalize(url);
    return key !== undefined && !visited.has(key) && !NOT_PAGES.test(new URL(key).pathname);
  });
  if ((!unread && !cutOff) || found.size >= enough) return undefined;
  return fetcher.signal.aborted ? 'time' : fetched >= MAX_CRAWLED_PAGES ? 'pages' : undefined;
}

interface VisitedPage {
  details: Pick<SiteLink, 'title' | 'description'>;
  links: string[];
}

async function visit(url: string, fetcher: SafeFetcher, headers: Record<string, string>, rulesFor: (url: URL) => Promise<RobotsRules>): Promise<VisitedPage | undefined> {
  try {
    if (!(await rulesFor(new URL(url))).allows(url)) return undefined;
    const resource = await fetcher.open(url, { headers: { ...headers, accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.1' }, maxBytes: MAX_PAGE_BYTES });
    if (resource.status < 200 || resource.status >= 300 || !resource.contentType.includes('html')) {
      await resource.body.cancel().catch(() => {});
      return undefined;
    }
    // Within the page bounds, as /scrape reads a page: a hostile page costs its first kilobytes and is skipped.
    const page = await readHtmlPage(resource, fetcher.signal);
    const { title, description } = readMetadata(page);
    return { details: { ...(title ? { title } : {}), ...(description ? { description } : {}) }, links: collectLinks(page) };
  } catch {
    // A page that fails or is refused (a redirect into private space) is simply not part of the map.
    return undefined;
  }
}

/** Which URLs belong to the site being mapped, and the one spelling each is listed under. */
class SiteScope {
  private readonly domain: string;

  constructor(
    private readonly base: URL,
    private readonly includeSubdomains: boolean,
    private readonly ignoreQueryParameters: boolean,
  ) {
    this.domain = base.hostname.replace(/^www\./, '');
  }

  /** The base host, its www. twin, and (with includeSubdomains) any host below the site's domain. */
  contains(url: URL): boolean {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
    const host = url.hostname;
    if (host === this.base.hostname || host === this.domain || host === `www.${this.domain}`) return true;
    return this.includeSubdomains && host.endsWith(`.${this.domain}`);
  }

  /** The listed form of a URL of the site, without fragment (and query, when ignored); undefined when outside. */
  normalize(text: string): string | undefined {
    try {
      const url = new URL(text);
      if (!this.contains(url)) return undefined;
      url.hash = '';
      if (this.ignoreQueryParameters) url.search = '';
      return url.href;
    } catch {
      return undefined;
    }
  }
}
