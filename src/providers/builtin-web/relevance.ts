/** A URL found by /map, with what is known of its page. */
export interface SiteLink {
  url: string;
  title?: string;
  description?: string;
}

/**
 * Orders links by relevance to a query, most relevant first; nothing is dropped. Each word of the query
 * scores 3 when it is a whole word of the URL (host and path), 2 when it is only part of one, and 1 when
 * it is only in the page's title or description; a link that matches every word scores 2 more. Ties go
 * to the shallower URL (fewer path segments), then to the order of discovery.
 */
export function rankByRelevance<Link extends SiteLink>(links: Link[], query: string): Link[] {
  const terms = [...new Set(words(query))];
  if (terms.length === 0) return links;
  return links
    .map((link, order) => ({ link, order, score: score(link, terms), depth: depthOf(link.url) }))
    .sort((a, b) => b.score - a.score || a.depth - b.depth || a.order - b.order)
    .map(({ link }) => link);
}

function score(link: SiteLink, terms: string[]): number {
  const url = new URL(link.url);
  const urlWords = new Set(words(`${url.hostname} ${decodeSafely(url.pathname)}`));
  const urlText = decodeSafely(`${url.hostname}${url.pathname}`).toLowerCase();
  const pageWords = new Set(words(`${link.title ?? ''} ${link.description ?? ''}`));
  let total = 0;
  let matched = 0;
  for (const term of terms) {
    const points = urlWords.has(term) ? 3 : urlText.includes(term) ? 2 : pageWords.has(term) ? 1 : 0;
    total += points;
    if (points > 0) matched++;
  }
  return total + (matched === terms.length ? 2 : 0);
}

function words(text: string): string[] {
  return text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);
}

function depthOf(url: string): number {
  return new URL(url).pathname.split('/').filter(Boolean).length;
}

function decodeSafely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
