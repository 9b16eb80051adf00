/**
 * An ordinary site with many subdomains, craigslist-like: its home page links to 700 city subdomains, each with
 * a page of its own, and no host has a robots.txt or a sitemap (404). Every name under cities.example.com
 * resolves to a public address at the fake resolver's URL.
 */
import { FAKE_DNS_URL } from './web-sites';

export const CITIES = 'https://cities.example.com';
const DOMAIN = 'cities.example.com';
export const CITY_COUNT = 700;

export function citySite() {
  const requests: string[] = [];
  const cityUrls = Array.from({ length: CITY_COUNT }, (_, index) => `https://city${index}.${DOMAIN}/`);

  const handle = (url: URL): Response => {
    if (url.href.startsWith(FAKE_DNS_URL)) {
      const name = url.searchParams.get('name') ?? '';
      const type = url.searchParams.get('type') === 'AAAA' ? 28 : 1;
      const inSite = name === DOMAIN || name.endsWith(`.${DOMAIN}`);
      const answer = inSite ? [{ name, type, TTL: 300, data: type === 1 ? '93.184.215.14' : '2606:2800:21f:cb07:6820:80da:af6b:8b2c' }] : [];
      return Response.json({ Status: inSite ? 0 : 3, Answer: answer }, { headers: { 'content-type': 'application/dns-json' } });
    }
    if (url.pathname !== '/') return new Response('not found', { status: 404 });
    const links = url.hostname === DOMAIN ? cityUrls : ['/for-sale', '/jobs'];
    return new Response(`<!doctype html><html><head><title>${url.hostname}</title></head><body>${links.map((link) => `<a href="${link}">${link}</a>`).join('')}</body></html>`, {
      headers: { 'content-type': 'text/html; charset=utf-8' },
    });
  };

  return {
    fetch: async (input: string | URL | Request, init?: RequestInit) => {
      const request = new Request(input, init);
      requests.push(request.url);
      return handle(new URL(request.url));
    },
    requests,
    cityUrls,
  };
}
