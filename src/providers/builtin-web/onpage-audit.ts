import { Parser } from 'htmlparser2';
import type { ProviderResult } from '../../core/operation';
import type { RenderOptions } from '../../core/render';
import { normalizeUpstream } from '../normalize';
import { withDeadline } from './deadline';
import { readHtmlSource } from './documents';
import { elements, type DomDocument, type DomNode } from './dom';
import { pageRequestHeaders } from './headers';
import type { BuiltinWebContext } from './inputs';
import type { HtmlPage } from './page';
import { parseTarget, SafeFetcher, type OpenedResource } from './safe-fetch';
import { refusedRequestsWarning, renderedResource, rendererOf } from './scrape';
import { builtinWebSettings, type BuiltinWebSettings } from './settings';
import { SubrequestBudget } from '../../core/subrequests';

/**
 * The single-page SEO audit without a vendor: the page fetched through the safe fetch (or rendered in the
 * browser when `enableJavascript`), read within the scrape's page bounds, and judged by DataForSEO's own
 * check names, so `result[0].items[0]` has the shape of an On-Page `instant_pages` item whichever provider
 * answered. Only what one fetch of one page can tell is filled in; the rest of the vendor's fields are absent.
 */
export interface AuditInput {
  url: string;
  enableJavascript?: boolean;
}

const PROVIDER = 'The built-in web provider';
const TIME_LIMIT_MS = 60_000;

/** The thresholds of the checks, DataForSEO's defaults where it documents one (docs/decisions.md, "On-page audit"). */
export const AUDIT_THRESHOLDS = {
  highWaitingMs: 1_500,
  highLoadingMs: 3_000,
  titleMin: 30,
  titleMax: 65,
  smallPageBytes: 1_024,
  largePageBytes: 1024 * 1024,
  bytes3mb: 3 * 1024 * 1024,
  lowCharacters: 1_024,
  highCharacters: 256_000,
  seoFriendlyUrlMax: 120,
} as const;

/** The checks whose failure costs the score most (DataForSEO's "critical" group); the rest weigh as warnings. */
const ERRORS = ['no_title', 'is_http', 'high_loading_time', 'duplicate_title_tag', 'is_4xx_code', 'is_5xx_code', 'noindex'] as const;
const WARNINGS = [
  'no_description',
  'no_h1_tag',
  'no_image_alt',
  'title_too_long',
  'title_too_short',
  'no_doctype',
  'large_page_size',
  'low_character_count',
  'high_waiting_time',
  'has_render_blocking_resources',
  'https_to_http_links',
  'no_favicon',
  'seo_friendly_url',
  'deprecated_html_tags',
  'duplicate_meta_tags',
  'frame',
  'flash',
] as const;

const DEPRECATED_TAGS = new Set(['acronym', 'applet', 'basefont', 'big', 'blink', 'center', 'dir', 'font', 'frame', 'frameset', 'isindex', 'marquee', 'noframes', 'strike', 'tt']);
/** Images without alt are listed up to this many (their count is whole). */
const LISTED_IMAGES = 50;

export async function auditWithBuiltin(input: AuditInput, context: BuiltinWebContext): Promise<ProviderResult> {
  return withDeadline(context.signal, TIME_LIMIT_MS, (signal) => audit(input, context, signal));
}

async function audit(input: AuditInput, context: BuiltinWebContext, signal: AbortSignal): Promise<ProviderResult> {
  const settings = builtinWebSettings(context.env);
  const budget = context.subrequests ?? new SubrequestBudget();
  const fetcher = new SafeFetcher({ settings, signal, budget, ...(context.fetch ? { fetch: context.fetch } : {}) });
  const started = Date.now();
  let resource: OpenedResource;
  let warning: string | undefined;
  if (input.enableJavascript) {
    const renderer = rendererOf(context, budget);
    if (!renderer) throw normalizeUpstream.unavailable('A browser for enableJavascript', ['the BROWSER binding ([browser] in wrangler.toml), or DATAFORSEO_LOGIN and DATAFORSEO_PASSWORD']);
    await fetcher.assertPublic(parseTarget(input.url));
    const rendered = await renderer.render(input.url, renderOptions(settings, fetcher, signal));
    // An audit of a page whose scripts were refused is of what loaded: said, as a scrape says it.
    warning = refusedRequestsWarning(rendered, budget);
    resource = renderedResource(input.url, rendered);
  } else {
    resource = await fetcher.open(input.url, { headers: pageRequestHeaders(settings, {}) });
  }
  const waitingMs = Date.now() - started;
  if (resource.contentType && !resource.contentType.includes('html')) {
    await resource.body.cancel();
    throw normalizeUpstream.rejected(PROVIDER, `${resource.url} is ${resource.contentType}, not an HTML page to audit`);
  }
  const { parsed, source, elements: domSize } = await readHtmlSource(resource, signal);
  const durationMs = Date.now() - started;
  const item = auditItem({ resource, parsed, source, domSize, timing: { waitingMs, durationMs }, rendered: input.enableJavascript === true });
  return { data: { result: [{ crawl_progress: 'finished', crawl_status: null, items_count: 1, items: [item], ...(warning ? { warning } : {}) }] }, servedBy: 'builtin' };
}

function renderOptions(settings: BuiltinWebSettings, fetcher: SafeFetcher, signal: AbortSignal): RenderOptions {
  return { mobile: false, userAgent: settings.userAgent, headers: {}, waitForMs: 0, actions: [], blockAds: false, assertAllowed: (url) => fetcher.assertPublic(url), signal };
}

interface Audited {
  resource: OpenedResource;
  parsed: HtmlPage;
  source: string;
  domSize: number;
  timing: { waitingMs: number; durationMs: number };
  rendered: boolean;
}

/** What the source says that the parsed page no longer holds (scripts, frames and embeds are stripped before parsing). */
interface SourceFacts {
  doctype: boolean;
  titles: number;
  scripts: number;
  renderBlockingScripts: number;
  frames: number;
  flash: number;
  deprecated: Set<string>;
}

function sourceFacts(source: string): SourceFacts {
  const facts: SourceFacts = { doctype: /^\s*(?:<\?xml[^>]*>\s*)?<!doctype\s+html/i.test(source), titles: 0, scripts: 0, renderBlockingScripts: 0, frames: 0, flash: 0, deprecated: new Set() };
  let inHead = true;
  let inSvg = 0;
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (name === 'body') inHead = false;
        if (name === 'svg') inSvg++;
        if (name === 'title' && inSvg === 0) facts.titles++;
        if (name === 'script' && !/json|template|importmap|speculationrules/i.test(attributes.type ?? '')) {
          facts.scripts++;
          const blocking = attributes.src !== undefined && attributes.async === undefined && attributes.defer === undefined && attributes.type !== 'module';
          if (inHead && blocking) facts.renderBlockingScripts++;
        }
        if (name === 'iframe' || name === 'frame') facts.frames++;
        if ((name === 'embed' || name === 'object') && /flash|\.swf\b/i.test(`${attributes.type ?? ''} ${attributes.src ?? ''} ${attributes.data ?? ''}`)) facts.flash++;
        if (DEPRECATED_TAGS.has(name)) facts.deprecated.add(name);
      },
      onclosetag(name) {
        if (name === 'head') inHead = false;
        if (name === 'svg') inSvg--;
      },
    },
    { decodeEntities: true },
  );
  parser.end(source);
  return facts;
}

function auditItem({ resource, parsed, source, domSize, timing, rendered }: Audited): Record<string, unknown> {
  const { document, baseUrl } = parsed;
  const facts = sourceFacts(source);
  const pageUrl = new URL(resource.url);
  const attribute = (selector: string, name: string) => document.querySelector(selector)?.getAttribute(name)?.trim() || null;
  const title = document.querySelector('title')?.textContent?.trim() || null;
  const description = attribute('meta[name="description" i]', 'content');
  const robots = [attribute('meta[name="robots" i]', 'content'), resource.headers.get('x-robots-tag')].filter((value) => value).join(', ').toLowerCase() || null;
  const canonical = absolute(attribute('link[rel~="canonical" i]', 'href'), baseUrl);
  const favicon = absolute(attribute('link[rel~="icon" i]', 'href'), baseUrl);
  const htags = headings(document);
  const links = linkCounts(document, baseUrl, pageUrl);
  const images = elements(document.querySelectorAll('img'));
  const withoutAlt = images.filter((image) => !image.getAttribute('alt')?.trim());
  const stylesheets = elements(document.querySelectorAll('link[rel~="stylesheet" i]'));
  const renderBlockingStylesheets = stylesheets.filter((link) => link.closest('head') !== null && !/^(print|not all)$/i.test(link.getAttribute('media') ?? '')).length;
  const text = visibleText(document);
  const words = text ? text.split(' ').length : 0;
  const size = new TextEncoder().encode(source).byteLength;
  const metaNames = elements(document.querySelectorAll('meta[name]')).map((meta) => meta.getAttribute('name')!.toLowerCase());
  const duplicateMeta = [...new Set(metaNames.filter((name, index) => metaNames.indexOf(name) !== index))];
  const refresh = attribute('meta[http-equiv="refresh" i]', 'content');
  const charsetDeclared = document.querySelector('meta[charset]') ?? document.querySelector('meta[http-equiv="content-type" i]');
  const status = resource.status;
  const path = `${pageUrl.pathname}${pageUrl.search}`;

  const checks: Record<string, boolean> = {
    is_redirect: resource.url !== resource.requestedUrl,
    is_4xx_code: status >= 400 && status < 500,
    is_5xx_code: status >= 500,
    is_broken: status >= 400,
    is_www: pageUrl.hostname.startsWith('www.'),
    is_https: pageUrl.protocol === 'https:',
    is_http: pageUrl.protocol === 'http:',
    high_waiting_time: timing.waitingMs > AUDIT_THRESHOLDS.highWaitingMs,
    high_loading_time: timing.durationMs > AUDIT_THRESHOLDS.highLoadingMs,
    no_doctype: !facts.doctype,
    has_html_doctype: facts.doctype,
    canonical: canonical !== null,
    no_encoding_meta_tag: charsetDeclared === null,
    no_h1_tag: !htags.h1?.length,
    https_to_http_links: pageUrl.protocol === 'https:' && links.toHttp > 0,
    size_greater_than_3mb: size > AUDIT_THRESHOLDS.bytes3mb,
    has_meta_refresh_redirect: refresh !== null && /url\s*=/i.test(refresh),
    has_render_blocking_resources: facts.renderBlockingScripts + renderBlockingStylesheets > 0,
    low_character_count: text.length < AUDIT_THRESHOLDS.lowCharacters,
    high_character_count: text.length > AUDIT_THRESHOLDS.highCharacters,
    small_page_size: size < AUDIT_THRESHOLDS.smallPageBytes,
    large_page_size: size > AUDIT_THRESHOLDS.largePageBytes,
    title_too_long: title !== null && title.length > AUDIT_THRESHOLDS.titleMax,
    title_too_short: title !== null && title.length < AUDIT_THRESHOLDS.titleMin,
    deprecated_html_tags: facts.deprecated.size > 0,
    duplicate_meta_tags: duplicateMeta.length > 0,
    duplicate_title_tag: facts.titles > 1,
    no_image_alt: withoutAlt.length > 0,
    no_image_title: images.some((image) => !image.getAttribute('title')?.trim()),
    no_description: description === null,
    no_title: title === null,
    no_favicon: favicon === null,
    seo_friendly_url: path.length <= AUDIT_THRESHOLDS.seoFriendlyUrlMax && /^[a-z0-9\-/._~]*$/.test(pageUrl.pathname) && pageUrl.search === '',
    frame: facts.frames > 0,
    flash: facts.flash > 0,
    lorem_ipsum: /lorem ipsum/i.test(text),
    // Not a check of DataForSEO's instant_pages: a page the robots meta tag or X-Robots-Tag keeps out of the index.
    noindex: robots !== null && /\b(noindex|none)\b/.test(robots),
  };

  return {
    resource_type: status >= 400 ? 'broken' : 'html',
    status_code: status,
    location: checks.is_redirect ? resource.url : null,
    url: resource.requestedUrl,
    meta: {
      title,
      charset: /utf-?8/i.test(resource.headers.get('content-type') ?? '') || charsetDeclared?.getAttribute('charset')?.toLowerCase().replace('-', '') === 'utf8' ? 65001 : null,
      follow: robots === null || !/\b(nofollow|none)\b/.test(robots),
      robots,
      generator: attribute('meta[name="generator" i]', 'content'),
      htags,
      description,
      favicon,
      meta_keywords: attribute('meta[name="keywords" i]', 'content'),
      canonical,
      internal_links_count: links.internal,
      external_links_count: links.external,
      images_count: images.length,
      images_without_alt_count: withoutAlt.length,
      images_without_alt: withoutAlt.slice(0, LISTED_IMAGES).map((image) => absolute(image.getAttribute('src') || image.getAttribute('data-src'), baseUrl) ?? ''),
      scripts_count: facts.scripts,
      stylesheets_count: stylesheets.length,
      title_length: title?.length ?? 0,
      description_length: description?.length ?? 0,
      render_blocking_scripts_count: facts.renderBlockingScripts,
      render_blocking_stylesheets_count: renderBlockingStylesheets,
      content: { plain_text_size: text.length, plain_text_rate: size > 0 ? round(text.length / size, 3) : 0, plain_text_word_count: words },
      deprecated_tags: facts.deprecated.size > 0 ? [...facts.deprecated] : null,
      duplicate_meta_tags: duplicateMeta.length > 0 ? duplicateMeta : null,
      social_media_tags: socialTags(document),
    },
    page_timing: {
      // Measured from this server: to the response's headers, and to the page read (and rendered) whole.
      waiting_time: timing.waitingMs,
      download_time: timing.durationMs - timing.waitingMs,
      duration_time: timing.durationMs,
      fetch_start: 0,
      fetch_end: timing.durationMs,
    },
    onpage_score: onpageScore(checks),
    total_dom_size: domSize,
    size,
    encoded_size: Number(resource.headers.get('content-length')) || size,
    fetch_time: fetchTime(new Date()),
    checks,
    content_encoding: resource.headers.get('content-encoding'),
    media_type: 'text/html',
    server: resource.headers.get('server'),
    is_resource: false,
    url_length: resource.requestedUrl.length,
    rendered,
  };
}

/**
 * 0 to 100, as DataForSEO scores a page: a broken page is 0; otherwise up to 55 points are lost to the
 * critical checks and 45 to the warnings, each check of a group weighing the same.
 */
export function onpageScore(checks: Record<string, boolean>): number {
  if (checks.is_broken) return 0;
  // seo_friendly_url is the one check that passes when true.
  const failed = (names: readonly string[]) => names.filter((name) => (name === 'seo_friendly_url' ? !checks[name] : checks[name])).length;
  return round(100 - (55 * failed(ERRORS)) / ERRORS.length - (45 * failed(WARNINGS)) / WARNINGS.length, 2);
}

/** The body's text, each text node apart (so `<h1>A</h1><p>B</p>` is two words), whitespace collapsed. */
function visibleText(document: DomDocument): string {
  const pieces: string[] = [];
  const pending: DomNode[] = document.body ? [document.body] : [];
  while (pending.length > 0) {
    const node = pending.pop()!;
    if (node.nodeType === 3) pieces.push(node.textContent ?? '');
    else if (node.nodeName !== 'NOSCRIPT' && node.nodeName !== 'TEMPLATE') for (let index = node.childNodes.length - 1; index >= 0; index--) pending.push(node.childNodes[index]!);
  }
  return pieces.join(' ').replace(/\s+/g, ' ').trim();
}

function headings(document: DomDocument): Record<string, string[]> {
  const found: Record<string, string[]> = {};
  for (const heading of elements(document.querySelectorAll('h1, h2, h3, h4, h5, h6'))) {
    const level = heading.tagName.toLowerCase();
    const text = (heading.textContent ?? '').replace(/\s+/g, ' ').trim();
    if (text) (found[level] ??= []).push(text);
  }
  return found;
}

function linkCounts(document: DomDocument, baseUrl: URL, pageUrl: URL): { internal: number; external: number; toHttp: number } {
  const site = pageUrl.hostname.replace(/^www\./, '');
  const counts = { internal: 0, external: 0, toHttp: 0 };
  for (const anchor of elements(document.querySelectorAll('a[href]'))) {
    const href = absolute(anchor.getAttribute('href'), baseUrl);
    if (!href) continue;
    const target = new URL(href);
    if (target.hostname.replace(/^www\./, '') === site) counts.internal++;
    else counts.external++;
    if (target.protocol === 'http:') counts.toHttp++;
  }
  return counts;
}

function socialTags(document: DomDocument): Record<string, string> | null {
  const tags: Record<string, string> = {};
  for (const meta of elements(document.querySelectorAll('meta[property^="og:"], meta[name^="twitter:"]'))) {
    const name = meta.getAttribute('property') ?? meta.getAttribute('name')!;
    const content = meta.getAttribute('content');
    if (content) tags[name] = content;
  }
  return Object.keys(tags).length > 0 ? tags : null;
}

/** An http(s) address made absolute, or null. */
function absolute(href: string | null | undefined, baseUrl: URL): string | null {
  if (!href) return null;
  try {
    const url = new URL(href, baseUrl);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** DataForSEO's time format: `2026-11-24 10:02:41 +00:00`. */
function fetchTime(date: Date): string {
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} +00:00`;
}
