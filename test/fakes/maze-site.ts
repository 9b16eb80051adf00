/**
 * A hostile site, for the call's subrequest budget: every name under maze.example.com resolves to a public
 * address (at the fake resolver's URL), every page is reached through a redirect to a name not asked for
 * before and links to a thousand new subdomains, each of which has a robots.txt behind a redirect of its own,
 * and its sitemap index names fifty sitemaps that redirect from name to name until they give up. Nothing in it
 * ends by itself: only the caller's bounds stop a crawl of it.
 */
import { FAKE_DNS_URL } from './web-sites';

export const MAZE = 'https://maze.example.com';
const DOMAIN = 'maze.example.com';
const LINKS_A_PAGE = 1_000;
const SITEMAPS = 50;

export interface MazeSite {
  /** Drop-in for the platform's fetch. */
  fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  /** Every URL requested, in order, DNS queries included: what a Worker would have made as subrequests. */
  requests: string[];
  /** Every URL a page or sitemap of the maze named: what a map of it may list. */
  named: Set<string>;
}

export function mazeSite(): MazeSite {
  const requests: string[] = [];
  const named = new Set<string>();
  let fresh = 0;
  const name = (label: string) => `https://${label}${++fresh}.${DOMAIN}`;

  const handle = (url: URL): Response => {
    if (url.href.startsWith(FAKE_DNS_URL)) return resolve(url.searchParams.get('name') ?? '', url.searchParams.get('type') === 'AAAA' ? 28 : 1);
    if (url.hostname !== DOMAIN && !url.hostname.endsWith(`.${DOMAIN}`)) return new Response(`no such site: ${url.host}`, { status: 599 });
    const hops = Number(url.searchParams.get('hops') ?? 0);
    if (url.pathname === '/robots.txt') {
      return hops === 0 ? redirect(`${name('robots')}/robots.txt?hops=1`) : new Response('not here', { status: 404 });
    }
    if (url.pathname === '/sitemap.xml') {
      const sitemaps = Array.from({ length: SITEMAPS }, () => `<sitemap><loc>${name('sitemap')}/part.xml</loc></sitemap>`).join('');
      return xml(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${sitemaps}</sitemapindex>`);
    }
    // A sitemap that redirects from name to name, past the fetcher's five.
    if (url.pathname === '/part.xml') return redirect(`${name('sitemap')}/part.xml?hops=${hops + 1}`);
    if (hops === 0) return redirect(`${name('page')}${url.pathname}?hops=1`);
    const links = Array.from({ length: LINKS_A_PAGE }, () => `${name('sub')}/page`);
    for (const link of links) named.add(link);
    return new Response(`<!doctype html><html><head><title>Maze</title></head><body><h1>Maze</h1>${links.map((link) => `<a href="${link}">${link}</a>`).join('')}</body></html>`, {
      headers: { 'content-type': 'text/html; charset=utf-8' },
    });
  };

  return {
    fetch: async (input, init) => {
      const request = new Request(input, init);
      requests.push(request.url);
      return handle(new URL(request.url));
    },
    requests,
    named,
  };
}

function resolve(name: string, type: 1 | 28): Response {
  const inMaze = name === DOMAIN || name.endsWith(`.${DOMAIN}`);
  const answer = inMaze ? [{ name, type, TTL: 300, data: type === 1 ? '93.184.215.14' : '2606:2800:21f:cb07:6820:80da:af6b:8b2c' }] : [];
  return Response.json({ Status: inMaze ? 0 : 3, Answer: answer }, { headers: { 'content-type': 'application/dns-json' } });
}

function redirect(location: string): Response {
  return new Response(null, { status: 302, headers: { location } });
}

function xml(body: string): Response {
  return new Response(body, { headers: { 'content-type': 'application/xml' } });
}
