import mapAnswer from '../fixtures/firecrawl/map.json' with { type: 'json' };
import scrapeAnswer from '../fixtures/firecrawl/scrape.json' with { type: 'json' };
import searchAnswer from '../fixtures/firecrawl/search.json' with { type: 'json' };

export const FAKE_FIRECRAWL = { key: 'fc-fake-key', baseUrl: 'https://firecrawl.fake' } as const;

/**
 * A fake of Firecrawl v2 speaking its wire format: POST /v2/scrape, /v2/search and /v2/map with a bearer key.
 * The subject of a call (the `url` of a scrape or map, the `query` of a search) chooses the outcome: one
 * containing `fail-400`, `fail-402`, `fail-403` (a site it does not scrape), `fail-408`, `fail-429`, `fail-500`, `success-false`, `not-json` or
 * `network` provokes that class of answer; `no-results` makes a search or map find nothing; `slow` answers
 * 2 s late. A scrape of a URL with `pdf-<n>-pages` is a PDF of n pages, read up to its pdf parser's maxPages
 * (every page without parsers, Firecrawl's default `["pdf"]`; `metadata.numPages` the pages read, `totalPages`
 * the document's; none with `parsers: []`, the file as base64); one with `anti-bot` is refused by the basic
 * proxy with a 403 page, so `proxy: "auto"` escalates to the enhanced one (`metadata.proxyUsed: "stealth"`)
 * and `proxy: "basic"` answers that 403 page as scraped, as Firecrawl does (and bills it).
 *
 * It records what it received, and tells it over its own HTTP surface, so tests in workerd can read it:
 * `GET https://firecrawl.fake/__last?path=/v2/scrape&subject=<url or query>` answers
 * `{ body, authorization }` of the last such call (the subject keeps parallel test files apart).
 */

interface Received {
  body: unknown;
  authorization: string | null;
}

const received = new Map<string, Received>();

type Body = Record<string, unknown>;
type Format = string | { type: string; modes?: string[] };

export async function firecrawlUpstream(request: Request): Promise<Response> {
  const url = new URL(request.url);
  if (request.method === 'GET' && url.pathname === '/__last') return lastReceived(url);
  // The team's credits (docs.firecrawl.dev, GET /v2/team/credit-usage): the check of a connection's key.
  if (request.method === 'GET' && url.pathname === '/v2/team/credit-usage') {
    if (request.headers.get('authorization') !== `Bearer ${FAKE_FIRECRAWL.key}`) return Response.json({ success: false, error: 'Unauthorized: Invalid token' }, { status: 401 });
    return Response.json({ success: true, data: { remaining_credits: 1000, plan_credits: 3000, billing_period_start: '2026-11-01T00:00:00Z', billing_period_end: '2026-12-01T00:00:00Z' } });
  }
  if (request.method !== 'POST') return Response.json({ success: false, error: 'Not Found' }, { status: 404 });

  let body: Body;
  try {
    body = (await request.json()) as Body;
  } catch {
    return Response.json({ success: false, error: 'Bad Request: body is not JSON' }, { status: 400 });
  }
  const subject = String(url.pathname === '/v2/search' ? body.query : body.url);
  received.set(`${url.pathname} ${subject}`, { body, authorization: request.headers.get('authorization') });

  if (request.headers.get('authorization') !== `Bearer ${FAKE_FIRECRAWL.key}`) {
    return Response.json({ success: false, error: 'Unauthorized: Invalid token' }, { status: 401 });
  }
  const failure = failureFor(subject);
  if (failure) return failure();
  if (subject.includes('slow')) await new Promise((resolve) => setTimeout(resolve, 2_000));

  switch (url.pathname) {
    case '/v2/scrape':
      return Response.json(scrape(body));
    case '/v2/search':
      return Response.json(search(body, subject.includes('no-results')));
    case '/v2/map':
      return Response.json(map(body, subject.includes('no-results')));
    default:
      return Response.json({ success: false, error: 'Not Found' }, { status: 404 });
  }
}

/** What the fake last received at `path` for `subject`, read over its HTTP surface, so it works from workerd. */
export async function lastReceivedBy(path: string, subject: string): Promise<Received | undefined> {
  const response = await fetch(`${FAKE_FIRECRAWL.baseUrl}/__last?${new URLSearchParams({ path, subject })}`);
  return response.ok ? ((await response.json()) as Received) : undefined;
}

function lastReceived(url: URL): Response {
  const found = received.get(`${url.searchParams.get('path')} ${url.searchParams.get('subject')}`);
  return found ? Response.json(found) : Response.json({ error: 'nothing received for that path and subject' }, { status: 404 });
}

const FAILURES: Record<string, () => Response> = {
  'fail-400': () => Response.json({ success: false, error: 'Bad Request', details: [{ path: ['url'], message: 'Invalid URL' }] }, { status: 400 }),
  'fail-402': () =>
    Response.json(
      { success: false, error: 'Payment Required: Insufficient credits to perform this request. For more credits, you can upgrade your plan at https://firecrawl.dev/pricing.' },
      { status: 402 },
    ),
  // What Firecrawl answers for a site it blocks (YouTube, some social networks): the key is fine.
  'fail-403': () =>
    Response.json(
      { success: false, error: 'This website is no longer supported, please reach out to help@firecrawl.com for more info on how to activate it on your account.' },
      { status: 403 },
    ),
  'fail-408': () => Response.json({ success: false, code: 'SCRAPE_TIMEOUT', error: 'Request timed out' }, { status: 408 }),
  'fail-429': () =>
    Response.json(
      { success: false, error: 'Rate limit exceeded. Consumed (req/min): 101, Remaining (req/min): 0. Upgrade your plan at https://firecrawl.dev/pricing for increased rate limits or please retry after 7s.' },
      { status: 429, headers: { 'retry-after': '7' } },
    ),
  'fail-500': () => Response.json({ success: false, code: 'UNKNOWN_ERROR', error: 'An unexpected error occurred on the server.' }, { status: 500 }),
  'success-false': () => Response.json({ success: false, error: 'All scraping engines failed! -- Double check the URL to make sure it is not broken.' }),
  'not-json': () => new Response('<html><body>502 Bad Gateway</body></html>', { status: 200, headers: { 'content-type': 'text/html' } }),
  // The connection drops mid-answer: headers arrive, the body never does.
  network: () =>
    new Response(
      new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"success":tr'));
          controller.error(new Error('connection reset by peer'));
        },
      }),
      { headers: { 'content-type': 'application/json' } },
    ),
};

function failureFor(subject: string): (() => Response) | undefined {
  const name = Object.keys(FAILURES).find((candidate) => subject.includes(candidate));
  return name ? FAILURES[name] : undefined;
}

function typeOf(format: Format): string {
  return typeof format === 'string' ? format : format.type;
}

/** Like Firecrawl, answers only the formats asked for, with metadata; every scrape gets its own scrapeId. */
function scrape(body: Body) {
  const formats = ((body.formats as Format[] | undefined) ?? ['markdown']).map(typeOf);
  const page = scrapeAnswer.data;
  const content: Record<string, unknown> = {};
  for (const name of ['markdown', 'summary', 'html', 'rawHtml', 'links', 'images'] as const) if (formats.includes(name)) content[name] = page[name];
  if (formats.includes('json')) content.json = { company: 'Acme Anvils', founded: 1949 };
  if (formats.includes('screenshot')) content.screenshot = 'https://storage.firecrawl.fake/screenshots/acme.png';
  if (formats.includes('changeTracking')) content.changeTracking = { previousScrapeAt: null, changeStatus: 'new', visibility: 'visible' };
  const url = String(body.url);
  const escalated = body.proxy === 'enhanced' || (body.proxy === 'auto' && url.includes('anti-bot'));
  const metadata: Record<string, unknown> = {
    ...page.metadata,
    sourceURL: body.url,
    url: body.url,
    proxyUsed: escalated ? 'stealth' : 'basic',
    scrapeId: crypto.randomUUID(),
  };
  if (url.includes('anti-bot') && !escalated) metadata.statusCode = 403;
  const pdfPages = Number(/pdf-(\d+)-pages/.exec(url)?.[1] ?? 0);
  const parsers = (body.parsers as (string | { type: string; maxPages?: number })[] | undefined) ?? ['pdf'];
  const parser = parsers.map((entry) => (typeof entry === 'string' ? { type: entry, maxPages: undefined } : entry)).find((entry) => entry.type === 'pdf');
  if (pdfPages > 0) {
    metadata.contentType = 'application/pdf';
    if (parser) Object.assign(metadata, { numPages: Math.min(pdfPages, parser.maxPages ?? pdfPages), totalPages: pdfPages });
  }
  const actions = body.actions as { type: string; script?: string }[] | undefined;
  if (actions?.length) {
    // Firecrawl's captures of the actions, in their order: a screenshot's URL, a scrape's page, a script's return value.
    content.actions = {
      screenshots: actions.filter((action) => action.type === 'screenshot').map((_, index) => `https://storage.firecrawl.fake/screenshots/action-${index}.png`),
      scrapes: actions.filter((action) => action.type === 'scrape').map(() => ({ url: body.url, html: page.html })),
      javascriptReturns: actions.filter((action) => action.type === 'executeJavascript').map((action) => ({ type: 'string', value: `ran ${action.script?.length ?? 0} characters` })),
      pdfs: [],
    };
  }
  return { success: true, data: { ...content, metadata } };
}

/** One list per source asked for, each cut to `limit`; with scrapeOptions, web and news results carry Markdown. */
function search(body: Body, empty: boolean) {
  const limit = typeof body.limit === 'number' ? body.limit : 10;
  const sources = ((body.sources as Format[] | undefined) ?? ['web']).map(typeOf) as ('web' | 'news' | 'images')[];
  const scrapes = body.scrapeOptions !== undefined;
  const data: Record<string, unknown[]> = {};
  for (const source of sources) {
    const hits = empty ? [] : (searchAnswer.data[source] as Record<string, unknown>[]).slice(0, limit);
    data[source] =
      scrapes && source !== 'images'
        ? hits.map((hit) => ({ ...hit, markdown: `# ${String(hit.title)}\n\nScraped.`, metadata: { title: hit.title, sourceURL: hit.url, url: hit.url, statusCode: 200 } }))
        : hits;
  }
  return { success: true, data, creditsUsed: 2, id: crypto.randomUUID() };
}

function map(body: Body, empty: boolean) {
  const limit = typeof body.limit === 'number' ? body.limit : 5000;
  return { success: true, links: empty ? [] : mapAnswer.links.slice(0, limit) };
}
