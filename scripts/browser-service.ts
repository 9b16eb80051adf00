/**
 * The local stand-in for Cloudflare's Browser Rendering binding: the same endpoints @cloudflare/puppeteer
 * calls on `env.BROWSER` (acquire a session, list sessions and limits, open a session's DevTools socket,
 * close it), served on loopback and backed by Debian's chromium. The stack binds the api worker's BROWSER
 * to it, so the worker's renderer runs the same code locally as on Cloudflare.
 *
 * Why not Miniflare's own local Browser Rendering: it always installs Chrome for Testing 126 into wrangler's
 * cache (a download this machine cannot make) and has no option naming another executable
 * (docs/decisions.md, "Rendering").
 *
 * One session is one chromium process (as on Cloudflare: one connection at a time per session). The
 * DevTools socket is relayed byte for byte between the worker and chromium, so nothing here reads or
 * rewrites the protocol; what the page may reach is decided by the worker (route interception through the
 * safe fetch's checks). Chromium's own flags add what only a launch can set: no popups (window.open fails),
 * a V8 heap bound per renderer, no WebRTC over UDP, no background traffic of its own.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const DEFAULT_CHROMIUM = '/usr/bin/chromium';
const CHRT = '/usr/bin/chrt';

/** Sessions (chromium processes) at once: the renderer's per-isolate bound (RENDER_LIMITS.concurrentRenders). */
export const MAX_SESSIONS = 4;
/** How long an idle session stays when the client asked for no keep_alive (Cloudflare's default: 60 s). */
const DEFAULT_KEEP_ALIVE_MS = 60_000;
/** Cloudflare's ceiling on keep_alive. */
const MAX_KEEP_ALIVE_MS = 600_000;
/** V8 heap per renderer, in MB: a page allocating past it crashes its tab, which the renderer answers 422. */
const RENDERER_HEAP_MB = 512;

const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-extensions',
  '--disable-dev-shm-usage',
  '--disable-breakpad',
  '--disable-domain-reliability',
  '--disable-client-side-phishing-detection',
  '--no-first-run',
  '--no-default-browser-check',
  '--mute-audio',
  '--hide-scrollbars',
  '--block-new-web-contents',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--disable-features=Translate,MediaRouter,OptimizationHints,AutofillServerCommunication,InterestFeedContentSuggestions',
  `--js-flags=--max-old-space-size=${RENDERER_HEAP_MB}`,
  '--remote-debugging-address=127.0.0.1',
  '--remote-debugging-port=0',
];

interface Session {
  sessionId: string;
  startTime: number;
  process: ChildProcess;
  /** chromium's DevTools port and the browser target's path on it. */
  port: number;
  browserPath: string;
  profile: string;
  keepAliveMs: number;
  connectionId?: string;
  connectionStartTime?: number;
  idleTimer?: NodeJS.Timeout;
}

export interface BrowserService {
  /** `127.0.0.1:port`, what the stack binds BROWSER to. */
  address: string;
  /** The chromium it launches (`executablePath`, else Debian's); a session asked for while it is missing is refused with 503. */
  executablePath: string;
  /** Process ids of the running chromium browsers (their renderers are their children). */
  browserPids(): number[];
  stop(): Promise<void>;
}

export interface BrowserServiceOptions {
  executablePath?: string;
  maxSessions?: number;
  port?: number;
  /**
   * `idle` (the default): chromium takes only CPU nothing else wants, as if it ran on machines of its own as on
   * Cloudflare. `normal`: a fair share, for a machine whose every core is taken by other work (the test
   * suite), where an idle-priority browser would not start within its 20 s.
   */
  priority?: 'idle' | 'normal';
}

export async function startBrowserService(options: BrowserServiceOptions = {}): Promise<BrowserService> {
  const executablePath = options.executablePath ?? DEFAULT_CHROMIUM;
  const maxSessions = options.maxSessions ?? MAX_SESSIONS;
  const sessions = new Map<string, Session>();
  const sockets = new Set<Socket>();
  let launching = 0;

  const close = (session: Session) => {
    if (!sessions.delete(session.sessionId)) return;
    clearTimeout(session.idleTimer);
    session.process.kill('SIGKILL');
  };
  const idle = (session: Session) => {
    clearTimeout(session.idleTimer);
    session.idleTimer = setTimeout(() => close(session), session.keepAliveMs);
    session.idleTimer.unref();
  };
  const describe = (session: Session) => ({
    sessionId: session.sessionId,
    startTime: session.startTime,
    ...(session.connectionId ? { connectionId: session.connectionId, connectionStartTime: session.connectionStartTime } : {}),
  });

  const acquire = async (url: URL, response: ServerResponse) => {
    if (!existsSync(executablePath)) return json(response, 503, { error: `No chromium at ${executablePath}: install Debian's chromium (apt-get install -y chromium) or set CHROMIUM_PATH.` });
    if (sessions.size + launching >= maxSessions) return json(response, 429, { error: `At most ${maxSessions} browser sessions at once; retry when one closes.` });
    const keepAlive = Number(url.searchParams.get('keep_alive'));
    launching++;
    try {
      const session = await launch(executablePath, options.priority ?? 'idle', Number.isFinite(keepAlive) && keepAlive > 0 ? Math.min(keepAlive, MAX_KEEP_ALIVE_MS) : DEFAULT_KEEP_ALIVE_MS);
      sessions.set(session.sessionId, session);
      session.process.once('exit', () => {
        sessions.delete(session.sessionId);
        clearTimeout(session.idleTimer);
        void removeProfile(session.profile);
      });
      idle(session);
      json(response, 200, { sessionId: session.sessionId });
    } catch (error) {
      json(response, 503, { error: error instanceof Error ? error.message : String(error) });
    } finally {
      launching--;
    }
  };

  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://browser.local');
    const sessionPath = /^\/v1\/devtools\/browser\/([\w-]+)$/.exec(url.pathname);
    if (request.method === 'POST' && url.pathname === '/v1/devtools/browser') return void acquire(url, response);
    if (request.method === 'GET' && url.pathname === '/v1/sessions') return json(response, 200, { sessions: [...sessions.values()].map(describe) });
    if (request.method === 'GET' && url.pathname === '/v1/history') return json(response, 200, { history: [] });
    if (request.method === 'GET' && url.pathname === '/v1/limits') {
      return json(response, 200, {
        activeSessions: [...sessions.values()].map((session) => ({ id: session.sessionId })),
        maxConcurrentSessions: maxSessions,
        allowedBrowserAcquisitions: Math.max(0, maxSessions - sessions.size - launching),
        timeUntilNextAllowedBrowserAcquisition: 0,
      });
    }
    if (request.method === 'DELETE' && sessionPath) {
      const session = sessions.get(sessionPath[1]!);
      if (session) close(session);
      return json(response, session ? 200 : 404, session ? { status: 'closed' } : { error: 'Session not found' });
    }
    json(response, 404, { error: `No route ${request.method} ${url.pathname}` });
  });

  // The DevTools socket: the upgrade request is replayed to chromium's browser target, then bytes flow both ways.
  server.on('upgrade', (request: IncomingMessage, client: Socket, head: Buffer) => {
    const url = new URL(request.url ?? '/', 'http://browser.local');
    const match = /^\/v1\/devtools\/browser\/([\w-]+)$/.exec(url.pathname);
    const session = match ? sessions.get(match[1]!) : undefined;
    const refuse = (status: string) => client.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    if (!session) return refuse('404 Not Found');
    if (session.connectionId) return refuse('409 Conflict');
    const connectionId = randomUUID();
    session.connectionId = connectionId;
    session.connectionStartTime = Date.now();
    clearTimeout(session.idleTimer);
    sockets.add(client);

    const chromium = connect(session.port, '127.0.0.1');
    sockets.add(chromium);
    // DevTools is small messages, each awaited: Nagle's algorithm would hold each one for the last one's ACK.
    client.setNoDelay(true);
    chromium.setNoDelay(true);
    const lines = [`GET ${session.browserPath} HTTP/1.1`, `host: 127.0.0.1:${session.port}`];
    for (let index = 0; index < request.rawHeaders.length; index += 2) {
      const name = request.rawHeaders[index]!.toLowerCase();
      if (name === 'host' || name.startsWith('cf-')) continue;
      lines.push(`${request.rawHeaders[index]}: ${request.rawHeaders[index + 1]}`);
    }
    chromium.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length > 0) chromium.write(head);
    client.pipe(chromium).pipe(client);
    let ended = false;
    // The client letting go leaves the browser for the next connection; chromium dropping the socket first
    // means it is closing (Browser.close) or crashed, and a session listed free then would be handed to a
    // render that dies with it.
    const end = (from: Socket) => {
      if (ended) return;
      ended = true;
      client.destroy();
      chromium.destroy();
      sockets.delete(client);
      sockets.delete(chromium);
      if (from === chromium) return close(session);
      if (session.connectionId === connectionId) {
        delete session.connectionId;
        delete session.connectionStartTime;
        if (sessions.has(session.sessionId)) idle(session);
      }
    };
    for (const socket of [client, chromium]) {
      socket.once('close', () => end(socket));
      socket.once('error', () => end(socket));
    }
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  let stopping: Promise<void> | undefined;
  return {
    address,
    executablePath,
    browserPids: () => [...sessions.values()].flatMap((session) => (session.process.pid ? [session.process.pid] : [])),
    stop: () =>
      (stopping ??= new Promise<void>((resolve) => {
        for (const session of [...sessions.values()]) close(session);
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      })),
  };
}

/** Starts one chromium and waits for its DevTools address (it prints it on stderr). */
async function launch(executablePath: string, priority: 'idle' | 'normal', keepAliveMs: number): Promise<Session> {
  const profile = await mkdtemp(join(tmpdir(), 'sluice-browser-'));
  // Below the workers' priority: on Cloudflare the browser runs on machines of its own, so here a page's script
  // must not take the CPU the api worker answers with. SCHED_IDLE rather than `nice`: chromium, as root, raises
  // its own threads' priority (its display threads to nice -8), which undoes a niceness but not a policy
  // (`chrt` execs chromium: the pid is chromium's, and its processes inherit the policy). Without util-linux's
  // chrt (not Linux), chromium runs at the normal priority.
  const command = [executablePath, ...CHROMIUM_FLAGS, `--user-data-dir=${profile}`, 'about:blank'];
  if (priority === 'idle' && existsSync(CHRT)) command.unshift(CHRT, '--idle', '0');
  const child = spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise<Session>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => fail(new Error('chromium did not open its DevTools port within 20 s')), 20_000);
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      void removeProfile(profile);
      reject(error);
    };
    child.once('error', fail);
    child.once('exit', (code) => fail(new Error(`chromium exited (${code}) before opening its DevTools port: ${output.slice(-500)}`)));
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      if (output.length < 10_000) output += chunk;
      const found = /DevTools listening on ws:\/\/127\.0\.0\.1:(\d+)(\/devtools\/browser\/[\w-]+)/.exec(output);
      if (!found) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.removeListener('error', fail);
      child.stderr!.removeAllListeners('data');
      child.stderr!.resume();
      resolve({ sessionId: randomUUID(), startTime: Date.now(), process: child, port: Number(found[1]), browserPath: found[2]!, profile, keepAliveMs });
    });
  });
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/**
 * chromium's helpers may still be writing into the profile as it exits: a profile left behind is only a temp
 * folder. Off the event loop, which relays every session's DevTools socket (a synchronous removal of a
 * profile's thousands of files, with its retries' sleeps, held every other render's relay for 200 ms).
 */
async function removeProfile(profile: string): Promise<void> {
  await rm(profile, { recursive: true, force: true, maxRetries: 3, retryDelay: 100 }).catch(() => {
    // Left for the system's temp cleaning.
  });
}
