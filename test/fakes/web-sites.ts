/**
 * A fake of the public web for the built-in web provider: a DNS-over-HTTPS resolver (JSON API) and a
 * handful of sites, dispatched by host name. It is pure (no file access), so it runs both inside workerd
 * (tests hand `fetch` to the provider) and in Node as part of the outbound service; the saved pages of
 * test/fixtures/pages are handed in by whoever builds it.
 */

export const FAKE_DNS_URL = 'https://dns.fake/dns-query';

/** Bytes as a response body: never shared memory here, which is all the narrower type insists on. */
function body(bytes: Uint8Array): BodyInit {
  return bytes as Uint8Array<ArrayBuffer>;
}

/** The saved pages the sites serve. */
export interface FixturePages {
  article: string;
  docs: string;
  gallery: string;
  pdf: Uint8Array;
}

export interface FakeWeb {
  /** Drop-in for the platform's fetch. */
  fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  /** The outbound-service form: one request in, one response out. */
  handle: (request: Request) => Promise<Response>;
  /** Every URL requested, in order, DNS queries included. */
  requests: string[];
  /** Serves `html` at `url` from now on, with `status` (a page that changes between scrapes). */
  setPage(url: string, html: string, status?: number): void;
  /** Answers `url` with what `respond` makes, from now on (a body in another charset, or one that streams). */
  setResponse(url: string, respond: () => Response): void;
}

const PUBLIC_V4 = '93.184.215.14';
const PUBLIC_V6 = '2606:2800:21f:cb07:6820:80da:af6b:8b2c';

type DnsEntry = { A?: string[]; AAAA?: string[]; CNAME?: string; status?: number; httpStatus?: number };

/** What the fake resolver knows; any other name is NXDOMAIN. */
export const FAKE_DNS: Record<string, DnsEntry> = {
  'news.example.com': { A: [PUBLIC_V4], AAAA: [PUBLIC_V6] },
  'docs.example.org': { A: [PUBLIC_V4] },
  'shop.example.net': { A: [PUBLIC_V4] },
  'static.example.net': { A: [PUBLIC_V4] },
  'www.map.example.com': { A: [PUBLIC_V4] },
  'blog.map.example.com': { A: [PUBLIC_V4] },
  'other.example.org': { A: [PUBLIC_V4] },
  'plain.example.com': { A: [PUBLIC_V4] },
  'apps.example.com': { A: [PUBLIC_V4] },
  // The social network's media CDN (post media of test/fixtures/facebook-scraper3/post.json).
  'video.xx.fbcdn.net': { A: [PUBLIC_V4] },
  'scontent.xx.fbcdn.net': { A: [PUBLIC_V4] },
  'private.fbcdn.net': { A: ['10.4.4.4'] },
  // The webhook receiver of test/fakes/webhook-receiver.ts.
  'hooks.example.com': { A: [PUBLIC_V4] },
  'v6only.example.com': { AAAA: [PUBLIC_V6] },
  'nat64-public.example.com': { AAAA: ['64:ff9b::5db8:d70e'] },
  'private.example.com': { A: ['10.1.2.3'] },
  'loopback.example.com': { A: ['127.0.0.1'] },
  'mixed.example.com': { A: [PUBLIC_V4, '192.168.1.10'] },
  'metadata.example.com': { A: ['169.254.169.254'] },
  'cgnat.example.com': { A: ['100.100.100.200'] },
  'zero.example.com': { A: ['0.0.0.0'] },
  'multicast.example.com': { A: ['239.1.2.3'] },
  'ula.example.com': { AAAA: ['fd00:ec2::254'] },
  'linklocal6.example.com': { AAAA: ['fe80::1'] },
  'loopback6.example.com': { A: [PUBLIC_V4], AAAA: ['::1'] },
  'mapped.example.com': { AAAA: ['::ffff:10.0.0.1'] },
  'nat64.example.com': { AAAA: ['64:ff9b::a00:1'] },
  'sixtofour.example.com': { AAAA: ['2002:c0a8:101::1'] },
  'cname-private.example.com': { CNAME: 'edge.internal-cdn.example.net', A: ['10.9.9.9'] },
  'servfail.example.com': { status: 2 },
  'resolver-error.example.com': { httpStatus: 500 },
  'malformed.example.com': { A: ['2130706433'] },
};

const html = (body: string, init: ResponseInit = {}) =>
  new Response(body, { ...init, headers: { 'content-type': 'text/html; charset=utf-8', ...(init.headers as Record<string, string> | undefined) } });
const text = (body: string, type = 'text/plain; charset=utf-8', status = 200) => new Response(body, { status, headers: { 'content-type': type } });
const redirect = (location: string, status = 302) => new Response(null, { status, headers: { location } });
const page = (title: string, links: string[], extra = '') =>
  `<!doctype html><html lang="en"><head><title>${title}</title><meta name="description" content="About ${title.toLowerCase()}."></head><body><h1>${title}</h1>${extra}<ul>${links
    .map((href) => `<li><a href="${href}">${href}</a></li>`)
    .join('')}</ul></body></html>`;

/** Private hosts the fake answers too, so a refusal that ever failed would show as a page, not an error. */
const INTERNAL_HOSTS = ['10.0.0.5', '127.0.0.1', '169.254.169.254', '[::1]', 'private.example.com', 'loopback.example.com', 'intranet.corp', 'localhost'];

/** Every host name the fake web answers for (IPv6 literals in brackets), for routing outbound requests to it. */
export const FAKE_WEB_HOSTS = [
  'dns.fake',
  'news.example.com',
  'docs.example.org',
  'shop.example.net',
  'v6only.example.com',
  'nat64-public.example.com',
  'www.map.example.com',
  'blog.map.example.com',
  'plain.example.com',
  'other.example.org',
  'apps.example.com',
  'video.xx.fbcdn.net',
  'scontent.xx.fbcdn.net',
  ...INTERNAL_HOSTS,
];

/** What a private address would answer if a refusal ever failed: a test that sees it has found a hole. */
const INTERNAL = () => html('<html><head><title>Internal admin</title></head><body><h1>INTERNAL SECRET</h1></body></html>');

export function fakeWeb(pages: FixturePages): FakeWeb {
  const requests: string[] = [];
  const overrides = new Map<string, () => Response>();

  const sites: Record<string, (url: URL, request: Request) => Response | Promise<Response>> = {
    'dns.fake': (url) => resolve(url),
    'news.example.com': (url, request) => news(url, request, pages),
    'docs.example.org': (url) => (url.pathname === '/guide/install' ? html(pages.docs) : html('<h1>Not found</h1>', { status: 404 })),
    'shop.example.net': (url) => (url.pathname === '/catalogue/' ? html(pages.gallery) : html('<h1>Introuvable</h1>', { status: 404 })),
    'v6only.example.com': () => html('<html><head><title>IPv6 only</title></head><body><p>Reached over IPv6.</p></body></html>'),
    'nat64-public.example.com': () => html('<html><head><title>NAT64</title></head><body><p>A public address through NAT64.</p></body></html>'),
    'www.map.example.com': (url) => mapSite(url),
    'blog.map.example.com': (url) => blogSite(url),
    'plain.example.com': (url) => plainSite(url),
    'other.example.org': () => html(page('Elsewhere', ['/more'])),
    'apps.example.com': (url) => clientMetadataDocuments(url),
    'video.xx.fbcdn.net': (url, request) => mediaFile(url, request),
    'scontent.xx.fbcdn.net': (url, request) => mediaFile(url, request),
  };
  for (const internal of INTERNAL_HOSTS) sites[internal] = INTERNAL;

  const handle = async (request: Request): Promise<Response> => {
    requests.push(request.url);
    const url = new URL(request.url);
    const override = overrides.get(`${url.origin}${url.pathname}`);
    if (override !== undefined) return override();
    const site = sites[url.host] ?? sites[url.hostname];
    return site ? site(url, request) : new Response(`no fake site for ${url.host}`, { status: 599 });
  };

  return {
    handle,
    fetch: (input, init) => handle(new Request(input, init)),
    requests,
    setPage: (url, body, status = 200) => {
      const target = new URL(url);
      overrides.set(`${target.origin}${target.pathname}`, () => html(body, { status }));
    },
    setResponse: (url, respond) => {
      const target = new URL(url);
      overrides.set(`${target.origin}${target.pathname}`, respond);
    },
  };
}

/**
 * Media files of a CDN, as such servers answer: HEAD with the size and type; a ranged GET with 206 and
 * Content-Range. `/no-head/...` refuses HEAD (405), `/expired/...` is 403, `/redirect/...` is one hop away.
 * The size is in the name (`clip-5242880.mp4`); a whole GET streams that many zero bytes.
 */
const MEDIA_TYPES: Record<string, string> = { mp4: 'video/mp4', jpg: 'image/jpeg', png: 'image/png' };

function mediaFile(url: URL, request: Request): Response {
  const path = url.pathname;
  if (path.startsWith('/redirect/')) return redirect(path.replace('/redirect/', '/'));
  if (path.startsWith('/expired/')) return text('URL signature expired', 'text/plain', 403);
  const match = /-(\d+)\.(mp4|jpg|png)$/.exec(path);
  if (!match) return text('Not found', 'text/plain', 404);
  const size = Number(match[1]);
  const type = MEDIA_TYPES[match[2]!]!;
  if (request.method === 'HEAD') {
    if (path.startsWith('/no-head/')) return new Response(null, { status: 405 });
    return new Response(null, { headers: { 'content-type': type, 'content-length': String(size) } });
  }
  if (request.headers.get('range') === 'bytes=0-0') {
    return new Response(new Uint8Array(1), { status: 206, headers: { 'content-type': type, 'content-range': `bytes 0-0/${size}`, 'content-length': '1' } });
  }
  return new Response(body(new Uint8Array(size)), { headers: { 'content-type': type, 'content-length': String(size) } });
}

function resolve(url: URL): Response {
  const name = url.searchParams.get('name') ?? '';
  const type = url.searchParams.get('type') as 'A' | 'AAAA';
  const entry = FAKE_DNS[name];
  if (!entry) return Response.json({ Status: 3, Question: [{ name, type: type === 'A' ? 1 : 28 }] }, { headers: { 'content-type': 'application/dns-json' } });
  if (entry.httpStatus) return text('resolver trouble', 'text/plain', entry.httpStatus);
  if (entry.status) return Response.json({ Status: entry.status }, { headers: { 'content-type': 'application/dns-json' } });
  const answers = [
    ...(entry.CNAME ? [{ name, type: 5, TTL: 300, data: `${entry.CNAME}.` }] : []),
    ...(entry[type] ?? []).map((data) => ({ name: entry.CNAME ?? name, type: type === 'A' ? 1 : 28, TTL: 300, data })),
  ];
  return Response.json({ Status: 0, TC: false, RD: true, RA: true, AD: false, CD: false, Answer: answers }, { headers: { 'content-type': 'application/dns-json' } });
}

function news(url: URL, request: Request, pages: FixturePages): Response | Promise<Response> {
  const path = url.pathname;
  if (path === '/2026/harbour-dredging') return html(pages.article);
  if (path === '/missing') return html('<html><head><title>Page not found</title></head><body><h1>Page not found</h1><p>Try the <a href="/">front page</a>.</p></body></html>', { status: 404 });
  if (path === '/broken') return html('<html><head><title>Server error</title></head><body><h1>Something went wrong</h1></body></html>', { status: 500 });
  if (path === '/old-path') return redirect('/2026/harbour-dredging', 301);
  if (path.startsWith('/hops/')) {
    const left = Number(path.slice('/hops/'.length));
    return left > 0 ? redirect(`/hops/${left - 1}`) : html('<html><head><title>Arrived</title></head><body><p>After the redirects.</p></body></html>');
  }
  if (path === '/loop') return redirect('/loop');
  const redirects: Record<string, string> = {
    '/to-private': 'http://10.0.0.5/admin',
    '/to-metadata': 'http://169.254.169.254/latest/meta-data/',
    '/to-loopback-v6': 'http://[::1]/',
    '/to-private-name': 'https://private.example.com/',
    '/to-localhost': 'http://localhost/',
    '/to-file': 'file:///etc/passwd',
    '/to-decimal': 'http://2130706433/',
  };
  if (redirects[path]) return redirect(redirects[path]);
  if (path === '/report.pdf') return new Response(body(pages.pdf), { headers: { 'content-type': 'application/pdf' } });
  if (path === '/download') return new Response(body(pages.pdf), { headers: { 'content-type': 'application/octet-stream' } });
  if (path === '/logo.png') return new Response(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), { headers: { 'content-type': 'image/png' } });
  if (path === '/notes.txt') return text('Tide tables\n\nHigh water 06:12, low water 12:30.\n');
  if (path === '/latin1') {
    const bytes = Uint8Array.from('<html><head><title>Café du port</title></head><body><p>Crème brûlée à volonté.</p></body></html>', (char) => char.charCodeAt(0));
    return new Response(bytes, { headers: { 'content-type': 'text/html; charset=iso-8859-1' } });
  }
  const nested = /^\/nested\/(\d+)$/.exec(path);
  if (nested) return html(nestedPage(Number(nested[1])));
  const plain = /^\/plain-text\/(\d+)$/.exec(path);
  if (plain) return html(plainTextPage(Number(plain[1])));
  const wide = /^\/wide\/(\d+)$/.exec(path);
  if (wide) return html(widePage(Number(wide[1])));
  if (path === '/huge') return new Response(endless(), { headers: { 'content-type': 'text/html' } });
  if (path === '/slow') return new Promise<Response>((_, reject) => request.signal.addEventListener('abort', () => reject(new Error('aborted'))));
  if (path === '/echo') {
    const headers = Object.fromEntries([...request.headers].filter(([name]) => name === 'user-agent' || name === 'accept-language'));
    return html(`<html><head><title>Echo</title></head><body><pre><code>${JSON.stringify(headers)}</code></pre></body></html>`);
  }
  if (path === '/tracked') return html('<html><head><title>Prices</title></head><body><main><h1>Prices</h1><h2>Ferry</h2><p>Adult: 12 EUR</p><h2>Parking</h2><p>Per day: 9 EUR</p></main></body></html>');
  return html('<h1>Not found</h1>', { status: 404 });
}

/** A hostile page: `depth` nested <div>s around one line (depth 600 is about 7 KB, the size that froze the api worker). */
export function nestedPage(depth: number): string {
  const known = nestedPages.get(depth);
  if (known) return known;
  const page = `<!doctype html><html><head><title>Nested ${depth}</title></head><body>${'<div>'.repeat(depth)}Deep down there is one line.${'</div>'.repeat(depth)}</body></html>`;
  nestedPages.set(depth, page);
  return page;
}
const nestedPages = new Map<number, string>();

/** One element carrying `count` attributes (`a0="x" a1="x" ...`): 200,000 of them make a 2.2 MB start tag. */
export function manyAttributesPage(count: number): string {
  return `<!doctype html><html><head><title>Attributes</title></head><body><div ${Array.from({ length: count }, (_, index) => `a${index}="x"`).join(' ')}>One element.</div></body></html>`;
}

/** A harmless page of about `bytes` bytes: one paragraph of words (a control for a hostile page of the same size). */
export function plainTextPage(bytes: number): string {
  return `<!doctype html><html><head><title>Plain</title></head><body><main><p>${'Words of a long paragraph. '.repeat(Math.ceil(bytes / 27))}</p></main></body></html>`;
}

/** A page of `count` paragraphs, each with a link: shallow, but as many elements as asked. */
export function widePage(count: number): string {
  return `<!doctype html><html><head><title>Wide ${count}</title></head><body><main><h1>Wide</h1>${'<p>One more line of a very long page, with <a href="/more">a link</a>.</p>'.repeat(Math.ceil(count / 2))}</main></body></html>`;
}

/** 11 MB of HTML, sent in pieces with no Content-Length: only counting the stream catches it. */
function endless(): ReadableStream<Uint8Array> {
  const piece = new TextEncoder().encode(`<p>${'x'.repeat(1020)}</p>`);
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= 11 * 1024) return controller.close();
      controller.enqueue(piece);
      sent++;
    },
  });
}

const MAP = 'https://www.map.example.com';
const BLOG = 'https://blog.map.example.com';

const MAP_ROBOTS = `# Crawlers in general
User-agent: *
Disallow: /private/

# Our own crawler gets one more rule (and must repeat the general ones: only its group applies)
User-agent: SluiceBot
Disallow: /private/
Disallow: /drafts/

Sitemap: ${MAP}/sitemap_index.xml
`;

const SITEMAP_INDEX = `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>${MAP}/sitemaps/pages.xml.gz</loc><lastmod>2026-03-01</lastmod></sitemap>
  <sitemap><loc>${MAP}/sitemaps/posts.xml</loc></sitemap>
</sitemapindex>`;

const PAGES_SITEMAP = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <url><loc>${MAP}/</loc></url>
  <url><loc>${MAP}/about</loc><image:image><image:loc>${MAP}/img/team.jpg</image:loc></image:image></url>
  <url><loc>${MAP}/pricing</loc></url>
  <url><loc>${MAP}/contact?ref=footer</loc></url>
  <url><loc>${MAP}/docs/getting-started</loc></url>
</urlset>`;

const POSTS_SITEMAP = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>${BLOG}/2026/spring-release</loc></url>
  <url><loc>${BLOG}/2026/harbour-sensors</loc></url>
  <url><loc>https://other.example.org/elsewhere</loc></url>
</urlset>`;

async function gzip(body: string): Promise<Uint8Array> {
  const compressed = new Blob([new TextEncoder().encode(body)]).stream().pipeThrough(new CompressionStream('gzip'));
  return new Uint8Array(await new Response(compressed).arrayBuffer());
}

async function mapSite(url: URL): Promise<Response> {
  switch (url.pathname) {
    case '/robots.txt':
      return text(MAP_ROBOTS);
    case '/sitemap_index.xml':
      return text(SITEMAP_INDEX, 'application/xml');
    case '/sitemaps/pages.xml.gz':
      return new Response(body(await gzip(PAGES_SITEMAP)), { headers: { 'content-type': 'application/gzip' } });
    case '/sitemaps/posts.xml':
      return text(POSTS_SITEMAP, 'text/xml');
    case '/':
      return html(
        page('Harbour Sensors', [
          '/about',
          '/products/lanterns?utm_source=nav',
          '/products/lanterns?utm_source=footer',
          '/private/secret',
          '/drafts/new-pricing',
          '/team#people',
          `${BLOG}/`,
          'https://other.example.org/',
          'mailto:hello@map.example.com',
        ]),
      );
    case '/about':
      return html(page('About us', ['/', '/team']));
    case '/team':
      return html(page('Our team', ['/about']));
    case '/products/lanterns':
      return html(page('Lanterns', ['/products/lanterns/storm', '/products/buoys']));
    case '/products/lanterns/storm':
      return html(page('Storm lantern', []));
    case '/products/buoys':
      return html(page('Sensor buoys', ['/products/buoys/tide-gauge']));
    case '/products/buoys/tide-gauge':
      return html(page('Tide gauge buoy', []));
    case '/private/secret':
      return html(page('Secret', ['/private/only-from-secret']));
    case '/drafts/new-pricing':
      return html(page('Draft pricing', ['/drafts/only-from-draft']));
    default:
      return html(page('Not found', []), { status: 404 });
  }
}

function blogSite(url: URL): Response {
  switch (url.pathname) {
    case '/robots.txt':
      return text('User-agent: *\nDisallow: /admin/\n');
    case '/':
      return html(page('Harbour Sensors blog', ['/admin/login', '/2026/spring-release', '/tags/sensors']));
    case '/2026/spring-release':
      return html(page('Spring release', ['/']));
    case '/2026/harbour-sensors':
      return html(page('Harbour sensors in the field', ['/']));
    case '/tags/sensors':
      return html(page('Posts about sensors', ['/2026/harbour-sensors']));
    case '/admin/login':
      return html(page('Admin login', ['/admin/secret-page']));
    default:
      return html(page('Not found', []), { status: 404 });
  }
}

/** A site with no robots.txt, found through /sitemap.xml alone, listed as plain text. */
function plainSite(url: URL): Response {
  if (url.pathname === '/sitemap.xml') return text('https://plain.example.com/\nhttps://plain.example.com/a\nhttps://plain.example.com/b\n');
  if (url.pathname === '/') return html(page('Plain', ['/a']));
  if (url.pathname === '/a' || url.pathname === '/b') return html(page(url.pathname, []));
  return html('<h1>Not found</h1>', { status: 404 });
}

/** OAuth client ID metadata documents an MCP client publishes at its own URL (the document names that URL). */
function clientMetadataDocuments(url: URL): Response {
  const documents: Record<string, Record<string, unknown>> = {
    '/oauth/client.json': { client_id: url.href, client_name: 'Example Agent', redirect_uris: ['https://apps.example.com/callback'], token_endpoint_auth_method: 'none' },
    '/oauth/impostor.json': { client_id: 'https://other.example.org/oauth/client.json', client_name: 'Impostor', redirect_uris: ['https://apps.example.com/callback'] },
  };
  const document = documents[url.pathname];
  return document ? Response.json(document, { headers: { 'cache-control': 'max-age=300' } }) : text('not found', 'text/plain', 404);
}
