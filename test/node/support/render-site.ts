/**
 * The site the rendering tests scrape, served on loopback (the shared stack allows exactly its host:port in
 * SCRAPE_ALLOW_PRIVATE_HOSTS): a single-page app whose text exists only after its script runs, a tall page
 * for full-page screenshots, a page probing the private addresses, and the hostile pages.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RenderSite {
  url: string;
  /** `127.0.0.1:port`, what SCRAPE_ALLOW_PRIVATE_HOSTS lists. */
  hostPort: string;
  stop(): void;
}

/** The text the single-page app writes; none of it is in the HTML served. */
export const SPA_TEXT = 'Ferries leave the north pier every forty minutes from six in the morning until midnight, and the crossing to the island takes twenty-five minutes in calm weather.';
export const FARES_TEXT = 'Adult single fare 3.20 EUR, return 5.80 EUR.';
export const TALL_PAGE_HEIGHT = 3000;

/**
 * The hostile pages, each with the call timeout it is asked with and what its 422 names: the loop is ended by
 * the call's timeout, the others by their bounds, well within theirs (a busy machine may take seconds to start
 * a browser). The render tests and the bench's "hostile renders" row ask the same. The loop's page keeps a core
 * busy until its timeout, but 8 s was too little: in the bench, beside the other hostile pages, its browser had
 * not loaded the page by then (502, not 422).
 */
export const HOSTILE_RENDERS = [
  { path: '/loop', what: 'an infinite loop in script', timeout: 15_000, reason: /did not finish rendering/ },
  { path: '/popups', what: 'a page opening 1,000 windows', timeout: 30_000, reason: /more than 20 windows/ },
  { path: '/nodes', what: 'a 50,000-node DOM built by script', timeout: 30_000, reason: /more than 40,000 DOM nodes|more than 20,000 elements/ },
];

/** Private and special addresses a page's script asks for (from the safe fetch's refusal list), each aimed at `port`. */
export function privateTargets(port: number): string[] {
  return [
    `http://127.0.0.1:${port}/loopback`,
    `http://127.1:${port}/short`,
    `http://2130706433:${port}/decimal`,
    `http://0x7f.1:${port}/hex`,
    `http://0177.0.0.1:${port}/octal`,
    `http://localhost:${port}/localhost`,
    `http://app.localhost:${port}/sub-localhost`,
    `http://[::1]:${port}/v6-loopback`,
    `http://[::ffff:127.0.0.1]:${port}/v4-mapped`,
    `http://0.0.0.0:${port}/this-network`,
    'http://169.254.169.254/latest/meta-data/',
    'http://metadata.google.internal/computeMetadata/v1/',
    'http://10.0.0.5/',
    'http://192.168.1.1/',
    'http://[fd00:ec2::254]/',
  ];
}

const SPA = `<!doctype html><html lang="en"><head><title>Harbour</title></head>
<body><div id="root">Loading…</div><noscript>Please enable JavaScript.</noscript><script src="/app.js"></script></body></html>`;

const APP = `fetch('/data.json').then((response) => response.json()).then((data) => {
  document.getElementById('root').innerHTML = '<main><h1>' + data.title + '</h1><p>' + data.text + '</p><button id="fares">Show fares</button><div id="out"></div></main>';
  document.getElementById('fares').addEventListener('click', () => {
    document.getElementById('out').innerHTML = '<p>' + ${JSON.stringify(FARES_TEXT)} + '</p>';
  });
});`;

const ARTICLE = `<!doctype html><html><head><title>Served</title></head><body><main><h1>Served as is</h1>
<p>${SPA_TEXT}</p><p>${SPA_TEXT}</p></main><script>document.querySelector('main').insertAdjacentHTML('beforeend', '<p>Added by script.</p>');</script></body></html>`;

const TALL = `<!doctype html><html><head><title>Tall</title><style>*{margin:0}#tall{height:${TALL_PAGE_HEIGHT}px;background:linear-gradient(#0a5,#05a)}</style></head>
<body><div id="tall"><p>${SPA_TEXT}</p></div></body></html>`;

function probe(port: number): string {
  const targets = privateTargets(port);
  return `<!doctype html><html><head><title>Probe</title></head><body><main><h1>Probe</h1><p id="done">${SPA_TEXT}</p></main><script>
const targets = ${JSON.stringify(targets)};
for (const target of targets) {
  fetch(target, { mode: 'no-cors' }).catch(() => {});
  const image = new Image(); image.src = target + '?image';
  const frame = document.createElement('iframe'); frame.src = target + '?frame'; document.body.appendChild(frame);
}
try { new WebSocket('ws://127.0.0.1:${port}/socket'); } catch {}
try { new Worker(URL.createObjectURL(new Blob(["new WebSocket('ws://127.0.0.1:${port}/worker-socket'); fetch('http://127.0.0.1:${port}/worker-fetch')"]))); } catch {}
try { const frame = document.createElement('iframe'); document.body.appendChild(frame); new frame.contentWindow.WebSocket('ws://127.0.0.1:${port}/frame-socket'); } catch {}
try { navigator.serviceWorker.register('/sw.js'); } catch {}
navigator.sendBeacon && navigator.sendBeacon('http://127.0.0.1:${port}/beacon', 'x');
</script></body></html>`;
}

const LOOP = `<!doctype html><html><head><title>Loop</title></head><body><p>${SPA_TEXT}</p><script>for (;;) {}</script></body></html>`;
const POPUPS = `<!doctype html><html><head><title>Popups</title></head><body><p>${SPA_TEXT}</p><script>for (let i = 0; i < 1000; i++) window.open('about:blank', 'w' + i);</script></body></html>`;
const NODES = `<!doctype html><html><head><title>Nodes</title></head><body><p>${SPA_TEXT}</p><script>
const fragment = document.createDocumentFragment();
for (let i = 0; i < 50000; i++) fragment.appendChild(document.createElement('div'));
document.body.appendChild(fragment);
</script></body></html>`;

export async function startRenderSite(): Promise<RenderSite> {
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://site.local');
    const html = (body: string) => response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
    switch (url.pathname) {
      case '/spa':
        return html(SPA);
      case '/app.js':
        return response.writeHead(200, { 'content-type': 'text/javascript' }).end(APP);
      case '/data.json':
        return response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ title: 'Island ferry timetable', text: SPA_TEXT }));
      case '/article':
        return html(ARTICLE);
      case '/tall':
        return html(TALL);
      case '/probe':
        return html(probe(Number(url.searchParams.get('port'))));
      case '/to-private':
        return response.writeHead(302, { location: `http://127.0.0.1:${Number(url.searchParams.get('port'))}/redirected` }).end();
      case '/loop':
        return html(LOOP);
      case '/popups':
        return html(POPUPS);
      case '/nodes':
        return html(NODES);
      default:
        return response.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hostPort: `127.0.0.1:${port}`,
    stop: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
