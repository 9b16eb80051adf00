import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import company from '../fixtures/linkedin-data-api/get-company-by-domain.json' with { type: 'json' };
import { manyAttributesPage, nestedPage } from './web-sites.ts';

/**
 * A loopback stand-in for the professional-network vendor (the recorded company answer at
 * /get-company-by-domain; a domain starting `connection-reset.` gets its connection closed unanswered),
 * for a public web page of about 200 KB (/article-200k.html: the saved article, its body grown with
 * paragraphs) and for hostile pages (/nested/<depth>: that many nested <div>s; /attributes/<count>: one
 * element carrying that many attributes), as fast as Node serves
 * them. It runs in its own process
 * so the load generator's event loop cannot slow it down. A domain `slow-<ms>.` is answered that many
 * milliseconds late, as a vendor that takes its time.
 */
export async function startFakeLinkedin(): Promise<{ url: string; stop: () => void }> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['serve'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message) => resolve(Number(message)));
    child.once('exit', (code) => reject(new Error(`fake upstream exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill() };
}

/** The saved article with paragraphs added inside its main content until the page is about 200 KB. */
function largeArticle(): string {
  const article = readFileSync(new URL('../fixtures/pages/article.html', import.meta.url), 'utf8');
  const paragraph = '<p>Dredging of the outer harbour continued through the night; the survey vessel logged depths every forty metres, and the pilots reported the new channel markers clearly visible from the breakwater.</p>\n';
  const closing = article.lastIndexOf('</article>') >= 0 ? article.lastIndexOf('</article>') : article.lastIndexOf('</body>');
  const padding = paragraph.repeat(Math.ceil((200_000 - article.length) / paragraph.length));
  return article.slice(0, closing) + padding + article.slice(closing);
}

function serve() {
  const body = JSON.stringify(company);
  const page = largeArticle();
  /** Each hostile page built once: the fake answers as fast as Node serves bytes, not as fast as it builds strings. */
  const hostilePages = new Map<string, string>();
  const hostile = (key: string, build: () => string) => hostilePages.get(key) ?? hostilePages.set(key, build()).get(key)!;
  const server = createServer((request, response) => {
    if (request.url?.startsWith('/article-200k.html')) {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(page) }).end(page);
      return;
    }
    // A dropped connection, for real: the socket closes before any answer, as a crashed vendor's would.
    if (request.url?.includes('domain=connection-reset.')) {
      request.socket.destroy();
      return;
    }
    const shape = /^\/(nested|attributes)\/(\d+)/.exec(request.url ?? '');
    if (shape) {
      const size = Number(shape[2]);
      const html = hostile(`${shape[1]}/${size}`, () => (shape[1] === 'nested' ? nestedPage(size) : manyAttributesPage(size)));
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(html) }).end(html);
      return;
    }
    if (!request.url?.startsWith('/get-company-by-domain')) {
      response.writeHead(404).end();
      return;
    }
    const answer = () => response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    // A vendor that takes its time: a domain `slow-<ms>.<anything>` is answered after that many milliseconds.
    const slow = /[?&]domain=slow-(\d+)\./.exec(request.url ?? '');
    if (slow) setTimeout(answer, Number(slow[1]));
    else answer();
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.send?.(typeof address === 'object' && address ? address.port : 0);
  });
  process.on('disconnect', () => process.exit(0));
}

if (process.argv[2] === 'serve') serve();
