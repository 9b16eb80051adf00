import { readHead } from '../../core/bounded-read';
import type { SafeFetcher } from './safe-fetch';

export interface SitemapLimits {
  /** Sitemap files read at most, indexes included. */
  maxFiles: number;
  /** Page URLs collected at most. */
  maxUrls: number;
}

/**
 * What is read of one sitemap, after gunzip: about 100,000 URLs, more than sitemaps hold in practice. The
 * protocol allows 50 MB; past this bound the rest of the file is left unread, so one /map call holds one
 * sitemap's 10 MB and its URLs at a time, whatever robots.txt lists (a shared isolate has 128 MB).
 */
const MAX_SITEMAP_BYTES = 10 * 1024 * 1024;
/** An index of indexes of indexes is as deep as anyone nests them. */
const MAX_DEPTH = 3;

/**
 * The page URLs of the sitemaps given, following sitemap indexes, reading gzip and plain-text sitemaps.
 * A sitemap that cannot be fetched or read is skipped: the others still count.
 */
export async function sitemapPages(sources: string[], fetcher: SafeFetcher, headers: Record<string, string>, limits: SitemapLimits): Promise<string[]> {
  const pages: string[] = [];
  const seen = new Set<string>();
  let level = sources.map((url) => ({ url, depth: 0 }));
  let filesRead = 0;
  while (level.length > 0 && filesRead < limits.maxFiles && pages.length < limits.maxUrls && !fetcher.exhausted) {
    const batch = level.filter(({ url }) => !seen.has(url)).slice(0, limits.maxFiles - filesRead);
    batch.forEach(({ url }) => seen.add(url));
    filesRead += batch.length;
    level = [];
    // One at a time: fifty sitemaps read at once would hold fifty files in memory together.
    for (const { url, depth } of batch) {
      if (pages.length >= limits.maxUrls || fetcher.exhausted) break;
      const entries = await readSitemap(url, fetcher, headers);
      pages.push(...entries.pages.slice(0, limits.maxUrls - pages.length));
      if (depth < MAX_DEPTH) level.push(...entries.sitemaps.map((url) => ({ url, depth: depth + 1 })));
    }
  }
  return pages.slice(0, limits.maxUrls);
}

interface SitemapEntries {
  pages: string[];
  sitemaps: string[];
}

async function readSitemap(url: string, fetcher: SafeFetcher, headers: Record<string, string>): Promise<SitemapEntries> {
  const none = { pages: [], sitemaps: [] };
  try {
    // The transfer's own bound sits above what is read of it: a plain sitemap is cut at MAX_SITEMAP_BYTES below.
    const resource = await fetcher.open(url, { headers: { ...headers, accept: 'application/xml,text/xml,text/plain,*/*;q=0.5' }, maxBytes: 2 * MAX_SITEMAP_BYTES });
    if (resource.status < 200 || resource.status >= 300) {
      await resource.body.cancel();
      return none;
    }
    return parseSitemap(await textOf(resource.body));
  } catch {
    return none;
  }
}

/**
 * A `<url>` or `<sitemap>` opening tag (not `<urlset>` or `<sitemapindex>`), or a `<loc>` with its text. Tags
 * of other namespaces (`<image:loc>`) do not match. A `<loc>`'s text holds no `<` but a CDATA section's, so no
 * part of the pattern can run past the next `<`: one pass, linear in the file.
 */
const SITEMAP_TOKENS = /<(url|sitemap)(?=[\s>/])[^>]*>|<loc(?:\s[^>]*)?>((?:[^<]|<!\[CDATA\[(?:[^\]]|\](?!\]>))*\]\]>)*)<\/loc\s*>/g;

/**
 * Sitemap XML (a urlset or a sitemapindex) or the protocol's plain-text form, one URL a line. Read by a scan
 * of its tokens rather than a DOM: a sitemap's DOM is many times its text, and the text is all that is needed.
 */
export function parseSitemap(text: string): SitemapEntries {
  const trimmed = text.trimStart();
  if (!trimmed.startsWith('<')) {
    return { pages: trimmed.split(/\r?\n/).map((line) => line.trim()).filter(isHttpUrl), sitemaps: [] };
  }
  const entries: SitemapEntries = { pages: [], sitemaps: [] };
  let within: 'url' | 'sitemap' | undefined;
  for (const [, tag, location] of trimmed.matchAll(SITEMAP_TOKENS)) {
    if (tag !== undefined) within = tag as 'url' | 'sitemap';
    else if (within !== undefined) {
      const url = xmlText(location ?? '').trim();
      if (isHttpUrl(url)) (within === 'url' ? entries.pages : entries.sitemaps).push(url);
    }
  }
  return entries;
}

/** A text node's value: CDATA sections as they are, the five named entities and numeric references decoded. */
function xmlText(raw: string): string {
  return raw.replace(/<!\[CDATA\[([\s\S]*?)\]\]>|&(amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);/g, (_, cdata: string | undefined, entity: string | undefined) => {
    if (cdata !== undefined) return cdata;
    const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
    if (entity! in named) return named[entity!]!;
    const code = entity!.startsWith('#x') ? Number.parseInt(entity!.slice(2), 16) : Number(entity!.slice(1));
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '';
  });
}

/** The body as text, gunzipped when it is gzip (a .xml.gz file is served as bytes, not content-encoded), cut at MAX_SITEMAP_BYTES. */
async function textOf(stream: ReadableStream<Uint8Array>): Promise<string> {
  const { head: magic, body } = await readHead(stream, 2);
  const plain = magic[0] === 0x1f && magic[1] === 0x8b ? body.pipeThrough(new DecompressionStream('gzip')) : body;
  const { head, body: rest } = await readHead(plain, MAX_SITEMAP_BYTES);
  await rest.cancel().catch(() => undefined);
  return new TextDecoder().decode(head);
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
