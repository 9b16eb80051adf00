import puppeteer, { type Browser, type HTTPRequest, type HTTPResponse, type Page } from '@cloudflare/puppeteer';
import { ApiError } from '../../core/errors';
import type { PageAction, RenderedPage, Renderer, RenderOptions, Screenshot, ScreenshotRequest } from '../../core/render';
import { normalizeUpstream } from '../normalize';
import { isAdHost } from './render-policy';
import { waitUnlessAborted } from './deadline';
import { PAGE_BOUNDS } from './page-bounds';
import { MAX_BODY_BYTES } from './safe-fetch';
import { SubrequestBudget } from '../../core/subrequests';
import { seekScript, type Clip, type SeekOutcome } from './video-seek';

/**
 * The renderer over a Browser Rendering binding: Cloudflare's `[browser]` when deployed, the local stack's
 * service of the same shape (scripts/browser-service.ts) here. The page is hostile content: every request
 * it makes is checked by the safe fetch's rules before it leaves the browser, downloads are refused, no
 * permission is granted, and a render past its time, heap, DOM or window bounds is abandoned with 422.
 */
export const RENDER_LIMITS = {
  /**
   * Renders at once per isolate; more wait in a queue (bounded by their call's time). Each render holds
   * one browser session (one DevTools connection per session, as Cloudflare allows), so this is also the
   * sessions an isolate keeps: within Cloudflare's concurrent-browser limit per account, and 4 chromium
   * processes (about 150 MB each) on a local machine.
   */
  concurrentRenders: 4,
  /** Wall-clock bound of one render, load to last action; never past the call's own timeout. */
  wallClockMs: 30_000,
  /** V8 heap of the page; past it the render is abandoned. */
  maxHeapBytes: 256 * 1024 * 1024,
  /** DOM nodes (elements and text) of the page; twice the static path's element bound. */
  maxNodes: PAGE_BOUNDS.maxElements * 2,
  /** Windows a page may try to open (each is refused) before it counts as hostile. */
  maxPopups: 20,
  /** Idle time a browser session stays open for the next render of this isolate (Cloudflare's keep_alive). */
  keepAliveMs: 60_000,
  /** At the binding's limit of sessions, how long to wait before looking for a free one again. */
  sessionRetryMs: 250,
  /** After load, how long the network must be quiet before the page counts as settled; and the most waited for it. */
  settleIdleMs: 500,
  settleMaxMs: 3_000,
  /** Chromium's largest texture: a full-page screenshot is cut there. */
  screenshotMaxHeight: 16_384,
  /** How long a video player page has to show its video's frame at the second asked for. */
  videoSeekMs: 15_000,
  /** How often the heap and DOM are measured while the page loads and acts. */
  watchEveryMs: 500,
} as const;

export const DESKTOP_VIEWPORT = { width: 1280, height: 800, deviceScaleFactor: 1, isMobile: false, hasTouch: false } as const;
export const MOBILE_VIEWPORT = { width: 390, height: 844, deviceScaleFactor: 1, isMobile: true, hasTouch: true } as const;

const PROVIDER = 'The built-in web provider';

/** A page that broke a bound: answered 422, and its browser session closed rather than reused. */
class HostilePage extends Error {}

/** What puppeteer says when the browser or its tab went away under a step: not the step's fault. */
const BROWSER_LOST = /Target closed|Session closed|Connection closed|browser has disconnected/i;

export class BrowserBindingRenderer implements Renderer {
  private readonly binding: Fetcher;

  /**
   * Every request to the binding (a list of sessions, a launch, a connection) is taken from the share of
   * `budget`, the call's, that its waits may spend: a wait for a browser leaves the rest to the page.
   */
  constructor(
    binding: Fetcher,
    private readonly budget: SubrequestBudget = new SubrequestBudget(),
  ) {
    this.binding = budgeted(binding, budget.waiting);
  }

  async render(url: string, options: RenderOptions): Promise<RenderedPage> {
    await renderSlots.acquire(options.signal, url);
    try {
      return await this.renderAlone(url, options);
    } finally {
      renderSlots.release();
    }
  }

  private async renderAlone(url: string, options: RenderOptions): Promise<RenderedPage> {
    const browser = await openBrowser(this.binding, this.budget, options.signal, url);
    const render = new Render(browser, options);
    let reusable = false;
    try {
      const page = await render.run(url);
      reusable = true;
      return page;
    } finally {
      await render.finish(reusable);
    }
  }
}

/**
 * A free session of this binding when there is one (a browser kept alive by an earlier render), else a new
 * one. At the binding's limit of sessions (429: Cloudflare's concurrent browsers, the local service's 4) it
 * waits and looks again, for as long as the call's time allows: a session another render is letting go
 * still lists as connected for a moment after it ends, so seven renders asked at once would otherwise see
 * four sessions, all busy, and fail to launch a fifth.
 */
async function openBrowser(binding: Fetcher, budget: SubrequestBudget, signal: AbortSignal, url: string): Promise<Browser> {
  const timedOut = () => normalizeUpstream.failed(`Rendering ${url}`, 'timed out waiting for a browser');
  // Each look costs requests to the binding: a wait as long as the call's share for waiting allows ends as a timeout does.
  const gaveUp = () => normalizeUpstream.failed(`Rendering ${url}`, `gave up waiting for a browser: ${budget.waitEnded}`);
  for (;;) {
    const free = await connectToFree(binding);
    if (free) return free;
    if (signal.aborted) throw timedOut();
    if (budget.waiting.ranOut) throw gaveUp();
    try {
      return await puppeteer.launch(binding, { keep_alive: RENDER_LIMITS.keepAliveMs });
    } catch (error) {
      if (budget.waiting.ranOut) throw gaveUp();
      const message = error instanceof Error ? error.message : String(error);
      if (!/\b429\b/.test(message)) {
        throw new ApiError('PROVIDER_UNAVAILABLE', `The browser that renders pages could not be started: ${message.slice(0, 300)}. Retry shortly; this call was not charged.`, { retryAfter: 10 });
      }
      await waitUnlessAborted(RENDER_LIMITS.sessionRetryMs, signal, timedOut);
    }
  }
}

async function connectToFree(binding: Fetcher): Promise<Browser | undefined> {
  const sessions = await puppeteer.sessions(binding).catch(() => []);
  for (const session of sessions) {
    if (session.connectionId) continue;
    try {
      return await puppeteer.connect(binding, session.sessionId);
    } catch {
      // Taken by another render between the listing and the connection: try the next.
    }
  }
  return undefined;
}

/** One render: a fresh browser context and page, the page's requests checked, bounded in time and size. */
class Render {
  private readonly stop = new AbortController();
  private page: Page | undefined;
  private refused = 0;
  private ads = 0;
  private topResponse: HTTPResponse | undefined;
  private topRefusal: unknown;
  private watching = true;

  constructor(
    private readonly browser: Browser,
    private readonly options: RenderOptions,
  ) {}

  async run(url: string): Promise<RenderedPage> {
    const { options } = this;
    const budgetMs = RENDER_LIMITS.wallClockMs;
    const deadline = setTimeout(() => this.abandon(new HostilePage(`the page did not finish rendering within ${budgetMs / 1000} s (a script that never yields, or a page that never stops loading)`)), budgetMs);
    // The call's own time ran out: a page that answered but never finished is the page's fault (422), one
    // that never answered is the network's (502, retryable).
    const onAbort = () =>
      this.abandon(this.topResponse ? new HostilePage('did not finish rendering within the call\'s timeout (a script that never yields, or a page that never stops loading)') : normalizeUpstream.failed(`Rendering ${url}`, 'timed out'));
    options.signal.addEventListener('abort', onAbort, { once: true });
    if (options.signal.aborted) onAbort();
    try {
      const page = await this.step(this.openPage());
      void this.watch(page);
      let response: HTTPResponse | null;
      try {
        response = await this.step(page.goto(url, { waitUntil: 'load', timeout: 0 }));
      } catch (error) {
        if (this.topRefusal) throw this.topRefusal;
        throw this.navigationError(error, url);
      }
      this.topResponse = response ?? this.topResponse;
      await this.settle(page);
      if (options.waitForMs > 0) await this.step(sleep(options.waitForMs));
      const videoClip = options.video ? await this.seekVideo(page, options.video.second) : undefined;
      const actionScreenshots: Screenshot[] = [];
      const actionScrapes: { url: string; html: string }[] = [];
      for (const action of options.actions) await this.perform(page, action, actionScreenshots, actionScrapes);
      await this.measure(page);
      const screenshot = options.screenshot ? await this.capture(page, options.screenshot, videoClip) : undefined;
      const html = await this.step(page.content());
      if (html.length > MAX_BODY_BYTES) throw new HostilePage(`the rendered page is larger than ${MAX_BODY_BYTES / 1024 / 1024} MB`);
      const headers = this.topResponse?.headers() ?? {};
      return {
        html,
        finalUrl: page.url(),
        status: this.topResponse?.status() ?? 200,
        contentType: headers['content-type'] ?? 'text/html',
        ...(screenshot ? { screenshot } : {}),
        actionScreenshots,
        actionScrapes,
        refusedRequests: this.refused,
        blockedAds: this.ads,
      };
    } catch (error) {
      throw error instanceof HostilePage ? normalizeUpstream.rejected(PROVIDER, `${url} ${error.message}`) : error;
    } finally {
      clearTimeout(deadline);
      options.signal.removeEventListener('abort', onAbort);
      this.watching = false;
    }
  }

  /** Closes the page's context; a healthy browser stays for the next render, one a page broke is closed. */
  async finish(reusable: boolean): Promise<void> {
    this.watching = false;
    const { browser } = this;
    try {
      if (reusable) {
        await withTimeout(this.page?.browserContext().close(), 5_000);
        await browser.disconnect();
      } else {
        await withTimeout(browser.close(), 5_000);
      }
    } catch {
      await Promise.resolve(browser.disconnect()).catch(() => {});
    }
  }

  private async openPage(): Promise<Page> {
    const { options } = this;
    const context = await this.browser.createBrowserContext();
    const page = await context.newPage();
    this.page = page;
    const client = await page.createCDPSession();
    await client.send('Page.setDownloadBehavior', { behavior: 'deny' });
    // Blocks what request interception never sees (WebSocket handshakes) and every scheme but http(s), data and blob.
    await client.send('Network.setBlockedURLs', { urls: ['ws://*', 'wss://*', 'ftp://*', 'file://*', 'chrome://*', 'chrome-extension://*'] });
    await page.setBypassServiceWorker(true);
    await page.setViewport(options.mobile ? MOBILE_VIEWPORT : DESKTOP_VIEWPORT);
    await page.setUserAgent(options.userAgent);
    if (Object.keys(options.headers).length > 0) await page.setExtraHTTPHeaders(options.headers);
    page.on('error', () => this.abandon(new HostilePage('crashed its browser tab (out of memory?)')));
    page.on('popup', (popup) => void popup?.close().catch(() => {}));
    // Called once, by the page, when a frame has tried to open more windows than the bound: counting each in
    // the worker cost a DevTools round trip per window, and 1,000 of them held the isolate for most of a second.
    await page.exposeFunction('__sluiceTooManyWindows', () => this.abandon(new HostilePage(`tried to open more than ${RENDER_LIMITS.maxPopups} windows`)));
    // Runs in every frame before the page's own scripts (a string: it is the page's code, not ours).
    // Sockets and peer connections are not requests the interception sees (nor Network.setBlockedURLs: checked
    // with chromium 156), so the page gets none: they are taken away in every frame before its scripts run.
    // Workers go too, since this script does not run in their scopes, where a socket would be out of reach
    // (docs/decisions.md, "Rendering": a page that needs a worker renders without it).
    await page.evaluateOnNewDocument(`{
      const tooMany = globalThis.__sluiceTooManyWindows;
      let windows = 0;
      window.open = () => { if (++windows === ${RENDER_LIMITS.maxPopups + 1}) tooMany?.(); return null; };
      for (const name of ['WebSocket', 'WebTransport', 'RTCPeerConnection', 'webkitRTCPeerConnection', 'Worker', 'SharedWorker']) {
        try { Object.defineProperty(globalThis, name, { value: undefined, writable: false, configurable: false }); } catch {}
      }
      try { Object.defineProperty(Navigator.prototype, 'serviceWorker', { get: () => undefined, configurable: false }); } catch {}
    }`);
    await page.setRequestInterception(true);
    page.on('request', (request) => void this.decide(page, request));
    page.on('response', (response) => {
      if (response.request().isNavigationRequest() && response.frame() === page.mainFrame()) this.topResponse = response;
    });
    return page;
  }

  /** Every request of the page (documents, frames, scripts, images, fetches) waits here for the safe fetch's verdict. */
  private async decide(page: Page, request: HTTPRequest): Promise<void> {
    const top = request.isNavigationRequest() && request.frame() === page.mainFrame();
    try {
      const url = new URL(request.url());
      if (url.protocol === 'data:' || url.protocol === 'blob:' || url.href === 'about:blank') return await request.continue();
      if (this.options.blockAds && !top && isAdHost(url.hostname)) {
        this.ads++;
        return await request.abort('blockedbyclient');
      }
      await this.options.assertAllowed(url);
      await request.continue();
    } catch (error) {
      if (!(error instanceof ApiError) && !(error instanceof TypeError)) return; // the page or its browser went away
      this.refused++;
      if (top) this.topRefusal = error;
      await request.abort('blockedbyclient').catch(() => {});
    }
  }

  /** Until the render ends: the heap and the DOM measured, so a page growing past them is stopped mid-load. */
  private async watch(page: Page): Promise<void> {
    while (this.watching && !this.stop.signal.aborted) {
      await sleep(RENDER_LIMITS.watchEveryMs);
      if (!this.watching) return;
      // A page whose script never yields does not answer: the wall-clock bound ends that one.
      await withTimeout(this.measure(page), RENDER_LIMITS.watchEveryMs * 4).catch((error: unknown) => {
        if (error instanceof HostilePage) this.abandon(error);
      });
    }
  }

  private async measure(page: Page): Promise<void> {
    const metrics = await page.metrics();
    if ((metrics.JSHeapUsedSize ?? 0) > RENDER_LIMITS.maxHeapBytes) throw new HostilePage(`uses more than ${RENDER_LIMITS.maxHeapBytes / 1024 / 1024} MB of script heap`);
    if ((metrics.Nodes ?? 0) > RENDER_LIMITS.maxNodes) throw new HostilePage(`builds more than ${RENDER_LIMITS.maxNodes.toLocaleString('en-US')} DOM nodes`);
  }

  /** Lets the page's first requests after load finish (a single-page app fetching its data), within a bound. */
  private async settle(page: Page): Promise<void> {
    await this.step(page.waitForNetworkIdle({ idleTime: RENDER_LIMITS.settleIdleMs, timeout: RENDER_LIMITS.settleMaxMs }).catch(() => {}));
  }

  /**
   * One of the caller's actions. What the browser refuses in it (an element it cannot click, a selector Chrome
   * rejects that the check's parser took) is the caller's page and input, not a fault of ours: 422 naming the
   * action, uncharged. The render being stopped, the page's own bounds and a lost browser keep their answers.
   */
  private async perform(page: Page, action: PageAction, screenshots: Screenshot[], scrapes: { url: string; html: string }[]): Promise<void> {
    try {
      await this.performOne(page, action, screenshots, scrapes);
    } catch (error) {
      if (error instanceof HostilePage || error instanceof ApiError || this.stop.signal.aborted || !(error instanceof Error) || BROWSER_LOST.test(error.message)) throw error;
      throw normalizeUpstream.rejected(PROVIDER, `the ${action.type} action failed: ${error.message.split('\n')[0]!.slice(0, 300)}`);
    }
  }

  private async performOne(page: Page, action: PageAction, screenshots: Screenshot[], scrapes: { url: string; html: string }[]): Promise<void> {
    switch (action.type) {
      case 'wait':
        if (action.selector) await this.step(page.waitForSelector(action.selector, { timeout: 0 }));
        else await this.step(sleep(action.milliseconds ?? 0));
        return;
      case 'click': {
        const targets = action.all ? await this.step(page.$$(action.selector)) : [await this.step(page.$(action.selector))].filter((found) => found !== null);
        if (targets.length === 0) throw normalizeUpstream.rejected(PROVIDER, `the click action found no element matching ${action.selector}`);
        for (const target of targets) await this.step(target.click());
        await this.settle(page);
        return;
      }
      case 'write':
        await this.step(page.keyboard.type(action.text));
        return;
      case 'press':
        await this.step(page.keyboard.press(action.key === 'Space' ? ' ' : (action.key as Parameters<Page['keyboard']['press']>[0])));
        await this.settle(page);
        return;
      case 'scroll':
        if (action.selector) {
          const found = await this.step(page.$(action.selector));
          if (!found) throw normalizeUpstream.rejected(PROVIDER, `the scroll action found no element matching ${action.selector}`);
          await this.step(found.scrollIntoView());
        } else {
          const height = (this.options.mobile ? MOBILE_VIEWPORT : DESKTOP_VIEWPORT).height;
          await this.step(page.mouse.wheel({ deltaY: action.direction === 'up' ? -height : height }));
        }
        await this.settle(page);
        return;
      case 'screenshot':
        screenshots.push(await this.capture(page, { fullPage: action.fullPage ?? false, ...(action.quality ? { quality: action.quality } : {}) }));
        return;
      case 'scrape':
        scrapes.push({ url: page.url(), html: await this.step(page.content()) });
        return;
    }
  }

  /**
   * Pauses the page's video at `second` and answers where it is on the page (what the screenshot is cut to).
   * A page with no video, or one whose video never shows a frame there, is the page's fault: 422.
   */
  private async seekVideo(page: Page, second: number): Promise<Clip> {
    const outcome = (await this.step(page.evaluate(seekScript(second, RENDER_LIMITS.videoSeekMs)))) as SeekOutcome;
    if (outcome.state === 'no-video') throw new HostilePage(`shows no video player within ${RENDER_LIMITS.videoSeekMs / 1000} s`);
    if (outcome.state === 'past-end') throw new HostilePage(`has a video ${Math.floor(outcome.duration ?? 0)} s long, which has no frame at second ${second}`);
    if (outcome.state !== 'ok' || !outcome.clip) throw new HostilePage(`did not show its video's frame at second ${second} within ${RENDER_LIMITS.videoSeekMs / 1000} s`);
    return outcome.clip;
  }

  private async capture(page: Page, request: ScreenshotRequest, videoClip?: Clip): Promise<Screenshot> {
    const type = request.quality ? 'jpeg' : 'png';
    const viewport = this.options.mobile ? MOBILE_VIEWPORT : DESKTOP_VIEWPORT;
    let clip: Clip | undefined = videoClip;
    if (request.fullPage && !clip) {
      const height = Number(await this.step(page.evaluate('Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0)')));
      if (height > RENDER_LIMITS.screenshotMaxHeight) clip = { x: 0, y: 0, width: viewport.width, height: RENDER_LIMITS.screenshotMaxHeight };
    }
    const base64 = await this.step(
      page.screenshot({
        type,
        encoding: 'base64',
        ...(request.quality ? { quality: request.quality } : {}),
        ...(clip ? { clip, captureBeyondViewport: true } : { fullPage: request.fullPage }),
      }),
    );
    return { mediaType: type === 'png' ? 'image/png' : 'image/jpeg', base64: base64 as string };
  }

  /** What a failed top navigation means for the caller. */
  private navigationError(error: unknown, url: string): unknown {
    if (error instanceof ApiError || error instanceof HostilePage) return error;
    const message = error instanceof Error ? error.message : String(error);
    if (/ERR_ABORTED/.test(message)) return normalizeUpstream.rejected(PROVIDER, `${url} is a download, not a page`);
    return normalizeUpstream.failed(`Rendering ${url}`, message.replace(/^net::/, '').slice(0, 200));
  }

  /** Ends the render now with this error: every step in progress rejects with it. */
  private abandon(reason: unknown): void {
    if (!this.stop.signal.aborted) this.stop.abort(reason);
  }

  /** A step of the render, given up when the render is abandoned (the browser call itself is left to the close). */
  private step<T>(work: Promise<T>): Promise<T> {
    const signal = this.stop.signal;
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<T>((resolve, reject) => {
      const abandoned = () => reject(signal.reason);
      signal.addEventListener('abort', abandoned, { once: true });
      work.then(
        (value) => {
          signal.removeEventListener('abort', abandoned);
          resolve(value);
        },
        (error: unknown) => {
          signal.removeEventListener('abort', abandoned);
          reject(signal.aborted ? signal.reason : error);
        },
      );
    });
  }
}

/** The binding with each of its requests taken from the call's budget first; one past it is refused, as the binding refuses. */
function budgeted(binding: Fetcher, budget: SubrequestBudget): Fetcher {
  return {
    fetch: (input: RequestInfo | URL, init?: RequestInit) => {
      if (!budget.take()) return Promise.reject(new Error(`no request left of the ${budget.limit} one call may make`));
      return binding.fetch(input, init);
    },
  } as Fetcher;
}

/**
 * At most RENDER_LIMITS.concurrentRenders renders of this isolate at once; the rest wait in order, each
 * for as long as its call's time allows.
 */
class Slots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly size: number) {}

  acquire(signal: AbortSignal, url: string): Promise<void> {
    if (this.running < this.size) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const turn = () => {
        signal.removeEventListener('abort', gaveUp);
        this.running++;
        resolve();
      };
      const gaveUp = () => {
        const index = this.waiting.indexOf(turn);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(normalizeUpstream.failed(`Rendering ${url}`, `timed out waiting for one of the ${this.size} renders this server runs at once`));
      };
      if (signal.aborted) return gaveUp();
      signal.addEventListener('abort', gaveUp, { once: true });
      this.waiting.push(turn);
    });
  }

  release(): void {
    this.running--;
    this.waiting.shift()?.();
  }
}

const renderSlots = new Slots(RENDER_LIMITS.concurrentRenders);

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function withTimeout<T>(work: Promise<T> | undefined, ms: number): Promise<T | undefined> {
  if (!work) return undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([work, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
