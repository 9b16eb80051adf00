import { readAll, readHead } from '../../core/bounded-read';
import { normalizeUpstream } from '../normalize';
import { escapeText } from './dom';
import type { ScrapeInput } from './inputs';
import { toMarkdown } from './markdown';
import { collectImages, collectLinks, parsePage, readMetadata, selectContent, type HtmlPage as ParsedPage, type PageMetadata } from './page';
import { PageBudget, measureHtml, type HtmlPage, type MeasuredHtml } from './page-bounds';
import { readPdf } from './pdf';
import { pdfPagesOf, unreadPagesWarning } from '../../core/web-inputs';
import type { OpenedResource } from './safe-fetch';

/** Which content a scrape has to produce. */
export interface Wanted {
  markdown: boolean;
  html: boolean;
  rawHtml: boolean;
  links: boolean;
  images: boolean;
}

/** The formats of one page, before change tracking and metadata are added. */
export interface PageContent {
  markdown?: string;
  html?: string;
  rawHtml?: string;
  links?: string[];
  images?: string[];
  metadata: PageMetadata & { numPages?: number; totalPages?: number };
  warnings: string[];
}

const PROVIDER = 'The built-in web provider';

/** What is looked at before a page is read: where a PDF's signature, a doctype and `<meta charset>` are. */
const HEAD_BYTES = 1024;

/**
 * Turns what was fetched into the wanted formats, by what it is: HTML, a PDF, or other text. HTML is read
 * as it streams through bounded stages (see page-bounds.ts): a page past a bound is a 422, uncharged, and
 * its rest is never read. Other documents are read whole (within the fetcher's byte cap).
 */
export async function pageContent(resource: OpenedResource, input: ScrapeInput, wanted: Wanted, signal: AbortSignal): Promise<PageContent> {
  const { head, body } = await readHead(resource.body, HEAD_BYTES);
  const kind = kindOf(resource.contentType, head);
  const charset = charsetOf(resource, head);
  if (kind === 'html') return htmlContent({ url: resource.url, body, charset }, input, wanted, signal);
  if (kind === 'binary') {
    await body.cancel();
    throw normalizeUpstream.rejected(PROVIDER, `${resource.url} is ${resource.contentType || 'binary data'}, which has no text to scrape`);
  }
  const bytes = await readAll(body);
  if (kind === 'pdf') return pdfContent(resource.url, bytes, input, wanted);
  return textContent(new TextDecoder(charset).decode(bytes), wanted);
}

/**
 * An HTML page read the way /scrape reads one (as it streams, within the page bounds, cancelled at the first
 * bound passed) and parsed: what /map reads of each page it crawls. A page past a bound is the same 422.
 */
export async function readHtmlPage(resource: OpenedResource, signal: AbortSignal): Promise<ParsedPage> {
  const { head, body } = await readHead(resource.body, HEAD_BYTES);
  const page = { url: resource.url, body, charset: charsetOf(resource, head) };
  return (await measuredAndParsed(page, new PageBudget(page.url, signal), false)).parsed;
}

/**
 * An HTML page read as `readHtmlPage` reads it, with its source kept (what the page sent, scripts included)
 * and its element count: what the on-page audit looks at.
 */
export async function readHtmlSource(resource: OpenedResource, signal: AbortSignal): Promise<{ parsed: ParsedPage; source: string; elements: number }> {
  const { head, body } = await readHead(resource.body, HEAD_BYTES);
  const page = { url: resource.url, body, charset: charsetOf(resource, head) };
  const { measured, parsed } = await measuredAndParsed(page, new PageBudget(page.url, signal), true);
  return { parsed, source: measured.source ?? '', elements: measured.elements };
}

/** The one way both read HTML: measured while it streams (page-bounds.ts), then parsed as a stage of the budget. */
async function measuredAndParsed(page: HtmlPage, budget: PageBudget, keepSource: boolean): Promise<{ measured: MeasuredHtml; parsed: ParsedPage }> {
  const measured = await measureHtml(page, budget, { keepSource });
  return { measured, parsed: await budget.stage('parsing', () => parsePage(measured.html, page.url)) };
}

async function htmlContent(page: HtmlPage, input: ScrapeInput, wanted: Wanted, signal: AbortSignal): Promise<PageContent> {
  const budget = new PageBudget(page.url, signal);
  const { measured, parsed } = await measuredAndParsed(page, budget, wanted.rawHtml);
  const content: PageContent = { metadata: readMetadata(parsed), warnings: [] };
  if (wanted.rawHtml) content.rawHtml = measured.source!;
  if (wanted.links) content.links = collectLinks(parsed);
  if (wanted.images) content.images = collectImages(parsed);
  if (wanted.markdown || wanted.html) {
    const container = await budget.stage('choosing the content', () =>
      selectContent(parsed, {
        onlyMainContent: input.onlyMainContent ?? true,
        warnings: content.warnings,
        size: { elements: measured.elements, depth: measured.depth },
        ...(input.includeTags ? { includeTags: input.includeTags } : {}),
        ...(input.excludeTags ? { excludeTags: input.excludeTags } : {}),
      }),
    );
    if (wanted.html) content.html = container.innerHTML.trim();
    if (wanted.markdown) content.markdown = await budget.stage('converting to Markdown', () => toMarkdown(container));
  }
  return content;
}

type Kind = 'html' | 'pdf' | 'text' | 'binary';

function kindOf(contentType: string, head: Uint8Array): Kind {
  if (contentType === 'application/pdf' || startsWith(head, '%PDF-')) return 'pdf';
  if (contentType.includes('html')) return 'html';
  if (contentType.startsWith('text/') || /[/+](json|xml)$/.test(contentType) || contentType === 'application/javascript') return 'text';
  if (contentType && contentType !== 'application/octet-stream') return 'binary';
  // No useful type: look at the bytes, as a browser would.
  const start = new TextDecoder().decode(head.subarray(0, 512)).trimStart().toLowerCase();
  if (start.startsWith('<!doctype html') || start.startsWith('<html')) return 'html';
  return head.subarray(0, 512).includes(0) ? 'binary' : 'text';
}

async function pdfContent(url: string, body: Uint8Array, input: ScrapeInput, wanted: Wanted): Promise<PageContent> {
  const parsers = input.parsers;
  const maxPages = pdfPagesOf(parsers);
  if (maxPages === null) {
    throw normalizeUpstream.rejected(PROVIDER, `${url} is a PDF and parsers leaves PDF parsing out; the built-in provider does not return files as base64`);
  }
  const pdf = await readPdf(body, maxPages);
  const warnings: string[] = [];
  if (parsers?.some((parser) => typeof parser === 'object' && parser.mode === 'ocr')) warnings.push('There is no OCR in the built-in provider: only the text layer of the PDF was read.');
  const unread = unreadPagesWarning(pdf.pagesRead, pdf.totalPages, parsers);
  if (unread) warnings.push(unread);
  if (wanted.html || wanted.rawHtml) warnings.push('html and rawHtml do not apply to a PDF; its text is in markdown.');
  return {
    ...(wanted.markdown ? { markdown: pdf.markdown } : {}),
    ...(wanted.links ? { links: [] } : {}),
    ...(wanted.images ? { images: [] } : {}),
    // Firecrawl's fields: numPages is the pages read (and billed), totalPages the document's.
    metadata: { ...(pdf.title ? { title: pdf.title } : {}), numPages: pdf.pagesRead, totalPages: pdf.totalPages },
    warnings,
  };
}

function textContent(text: string, wanted: Wanted): PageContent {
  return {
    ...(wanted.markdown ? { markdown: text.trim() } : {}),
    ...(wanted.html ? { html: `<pre>${escapeText(text)}</pre>` } : {}),
    ...(wanted.rawHtml ? { rawHtml: text } : {}),
    ...(wanted.links ? { links: [] } : {}),
    ...(wanted.images ? { images: [] } : {}),
    metadata: {},
    warnings: [],
  };
}

/** The charset the server named, else the one the page declares, else UTF-8 (as TextDecoder names it). */
function charsetOf({ headers }: OpenedResource, head: Uint8Array): string {
  const declared = /charset=["']?([\w-]+)/i.exec(headers.get('content-type') ?? '')?.[1] ?? sniffCharset(head);
  try {
    return new TextDecoder(declared ?? 'utf-8').encoding;
  } catch {
    return 'utf-8';
  }
}

/** `<meta charset>` or its http-equiv form, within the first 1024 bytes (where HTML requires it). */
function sniffCharset(head: Uint8Array): string | undefined {
  return /<meta[^>]+charset=["']?([\w-]+)/i.exec(String.fromCharCode(...head.subarray(0, 1024)))?.[1];
}

function startsWith(body: Uint8Array, signature: string): boolean {
  return signature.split('').every((char, index) => body[index] === char.charCodeAt(0));
}
