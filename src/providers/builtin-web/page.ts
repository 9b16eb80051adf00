import { Readability } from '@mozilla/readability';
import { ApiError } from '../../core/errors';
import { elements, escapeText, parseDocument, type DomDocument, type DomElement, type DomNode } from './dom';
import { PAGE_BOUNDS } from './page-bounds';

/** One HTML page: its document and the URL its relative references resolve against (<base href> included). */
export interface HtmlPage {
  document: DomDocument;
  baseUrl: URL;
}

export interface PageMetadata {
  title?: string;
  description?: string;
  language?: string;
}

export interface ContentOptions {
  onlyMainContent: boolean;
  /** Where a note is left when the content was chosen with less than the usual care (a page too big for Readability). */
  warnings?: string[];
  /** The page's size as measured while it streamed; Readability runs only on pages small enough for it. */
  size?: { elements: number; depth: number };
  includeTags?: readonly string[];
  excludeTags?: readonly string[];
}

/** Never content, in any format but rawHtml. */
const NOT_CONTENT = 'script, style, noscript, template, iframe, object, embed, canvas, svg, link, meta, base';

/** What surrounds the content of a page rather than being it: dropped when onlyMainContent is true. */
const SURROUNDINGS = [
  'nav',
  'aside',
  'footer',
  'dialog',
  '[role="navigation"]',
  '[role="complementary"]',
  '[role="contentinfo"]',
  '[role="search"]',
  '[role="dialog"]',
  '[aria-hidden="true"]',
].join(', ');

/** Only outside a chosen content element: a page's own header holds its menu, an article's holds its title. */
const PAGE_CHROME = 'header, [role="banner"]';

/** Below this much text a <main> or <article> is a shell (a skeleton filled by script), not the content. */
const MIN_CONTENT_CHARS = 100;

export function parsePage(html: string, pageUrl: string): HtmlPage {
  const document = parseDocument(html);
  let baseUrl = new URL(pageUrl);
  const baseHref = document.querySelector('base[href]')?.getAttribute('href');
  if (baseHref) {
    try {
      baseUrl = new URL(baseHref, pageUrl);
    } catch {
      // A broken <base> is ignored, as browsers do.
    }
  }
  return { document, baseUrl };
}

export function readMetadata({ document }: HtmlPage): PageMetadata {
  const meta = (selector: string) => document.querySelector(selector)?.getAttribute('content')?.trim() || undefined;
  const title = document.querySelector('title')?.textContent?.trim() || meta('meta[property="og:title"]');
  const description = meta('meta[name="description" i]') ?? meta('meta[property="og:description"]');
  const language = document.documentElement.getAttribute('lang')?.trim() || meta('meta[http-equiv="content-language" i]');
  return { ...(title ? { title } : {}), ...(description ? { description } : {}), ...(language ? { language } : {}) };
}

/** Every link of the whole page: absolute, http(s) only, without fragments, each once, in page order. */
export function collectLinks({ document, baseUrl }: HtmlPage): string[] {
  return unique(elements(document.querySelectorAll('a[href], area[href]')).map((anchor) => absolute(anchor.getAttribute('href'), baseUrl, true)));
}

/** Every image of the whole page: absolute, http(s) only (inline data: images are not addresses), each once. */
export function collectImages({ document, baseUrl }: HtmlPage): string[] {
  return unique(elements(document.querySelectorAll('img')).map((image) => absolute(image.getAttribute('src') || image.getAttribute('data-src'), baseUrl, false)));
}

/** Refuses, naming each, selectors that are not valid CSS, before anything is fetched. */
export function checkSelectors(input: { includeTags?: readonly string[]; excludeTags?: readonly string[] }): void {
  const details = selectorProblems(input);
  if (details.length > 0) throw ApiError.validation(details);
}

/** What `checkSelectors` refuses, each named; empty when every selector is CSS. */
export function selectorProblems(input: { includeTags?: readonly string[]; excludeTags?: readonly string[] }): { field: string; location: 'body'; message: string }[] {
  // A document costs tens of microseconds to build: only made when there are selectors to check.
  if (!input.includeTags?.length && !input.excludeTags?.length) return [];
  const probe = parseDocument('<p></p>');
  return (['includeTags', 'excludeTags'] as const).flatMap((field) =>
    (input[field] ?? []).flatMap((selector, index) => {
      try {
        probe.querySelectorAll(selector);
        return [];
      } catch {
        return [{ field: `${field}[${index}]`, location: 'body' as const, message: `Not a valid CSS selector: ${selector}` }];
      }
    }),
  );
}

/**
 * The part of the page the content formats are made from, as one container element whose children are
 * the content, with every link and image made absolute. Mutates the page's document.
 */
export function selectContent(page: HtmlPage, options: ContentOptions): DomElement {
  const { document } = page;
  // Comments never reach the DOM: the page's stream is stripped of them (page-bounds.ts).
  for (const element of elements(document.querySelectorAll(NOT_CONTENT))) element.remove();
  for (const selector of options.excludeTags ?? []) for (const element of elements(document.querySelectorAll(selector))) element.remove();

  let container: DomElement;
  if (options.includeTags?.length) {
    // The caller named what to keep; guessing the main content on top would second-guess them.
    container = document.createElement('div');
    // An element inside one already taken comes with it. Looked up by ancestors (bounded by the page's
    // depth), not by asking every taken element: that was quadratic in the number of matches.
    const picked = new Set<DomNode>();
    for (const element of elements(document.querySelectorAll(options.includeTags.join(', ')))) {
      if (hasAncestorIn(element, picked)) continue;
      picked.add(element);
      container.append(element.cloneNode(true));
    }
  } else if (options.onlyMainContent) {
    container = mainContent(document, options.warnings ?? [], options.size);
  } else {
    container = document.body ?? document.documentElement;
  }
  makeAbsolute(container, page.baseUrl);
  return container;
}

/**
 * The page's main content: its one <main> (or role=main), else its one <article>, when they hold real
 * text; otherwise Readability's pick; and as a last resort the body without its header. Navigation,
 * sidebars and footers inside are dropped in every case.
 */
function mainContent(document: DomDocument, warnings: string[], size: ContentOptions['size']): DomElement {
  const semantic = single(document, 'main, [role="main"]') ?? single(document, 'article');
  const container = document.createElement('div');
  if (semantic) {
    container.append(semantic);
  } else {
    const readable = readableContent(document, warnings, size);
    if (readable) container.append(...Array.from(readable.childNodes));
    else {
      const body = document.body ?? document.documentElement;
      for (const element of elements(body.querySelectorAll(PAGE_CHROME))) element.remove();
      container.append(...Array.from(body.childNodes));
    }
  }
  for (const element of elements(container.querySelectorAll(SURROUNDINGS))) element.remove();
  return container;
}

function hasAncestorIn(node: DomNode, set: Set<DomNode>): boolean {
  for (let parent = node.parentNode; parent; parent = parent.parentNode) if (set.has(parent)) return true;
  return false;
}

function single(document: DomDocument, selector: string): DomElement | undefined {
  const found = elements(document.querySelectorAll(selector));
  const only = found.length === 1 ? found[0] : undefined;
  return only && (only.textContent ?? '').trim().length >= MIN_CONTENT_CHARS ? only : undefined;
}

/**
 * Readability's article, with the heading it lifts out as the title put back in front: the page's own
 * single <h1> when it has one (Readability's title often carries the site's name).
 */
function readableContent(document: DomDocument, warnings: string[], size: ContentOptions['size']): DomElement | undefined {
  const limit = PAGE_BOUNDS.readabilityMaxElements;
  // Counted before cloning: the clone alone is work a page this big should not get. Readability's own limit stays as the backstop.
  const count = size?.elements ?? document.querySelectorAll('*').length;
  const tooBig = count > limit ? `more than ${limit.toLocaleString('en-US')} elements` : size && size.elements * size.depth > PAGE_BOUNDS.readabilityMaxWork ? `${size.elements.toLocaleString('en-US')} elements nested ${size.depth} deep` : undefined;
  if (tooBig) {
    warnings.push(`The page has ${tooBig} and no single <main> or <article>, so its main content is its body without header, navigation or footer (not Readability's pick).`);
    return undefined;
  }
  const headings = elements(document.querySelectorAll('h1'));
  const pageHeading = headings.length === 1 ? headings[0]!.textContent?.trim() : undefined;
  const article = new Readability(document.cloneNode(true) as never, { keepClasses: true, maxElemsToParse: limit }).parse();
  if (!article?.content || (article.textContent ?? '').trim().length < MIN_CONTENT_CHARS) return undefined;
  const title = pageHeading || article.title;
  const heading = title && !/<h1[\s>]/i.test(article.content) ? `<h1>${escapeText(title)}</h1>` : '';
  return parseDocument(`${heading}${article.content}`).body ?? undefined;
}

function makeAbsolute(root: DomElement, baseUrl: URL): void {
  for (const anchor of elements(root.querySelectorAll('a[href]'))) {
    const href = absolute(anchor.getAttribute('href'), baseUrl, false);
    if (href) anchor.setAttribute('href', href);
    else anchor.removeAttribute('href');
  }
  for (const image of elements(root.querySelectorAll('img'))) {
    const src = absolute(image.getAttribute('src') || image.getAttribute('data-src'), baseUrl, false);
    if (src) image.setAttribute('src', src);
    else image.remove();
    image.removeAttribute('srcset');
  }
}

/** An http(s) URL resolved against the page, or undefined (mailto:, javascript:, data:, or not a URL). */
function absolute(reference: string | null, baseUrl: URL, dropFragment: boolean): string | undefined {
  if (!reference?.trim()) return undefined;
  try {
    const url = new URL(reference.trim(), baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    if (dropFragment) url.hash = '';
    return url.href;
  } catch {
    return undefined;
  }
}

function unique(values: (string | undefined)[]): string[] {
  return [...new Set(values.filter((value): value is string => value !== undefined))];
}
