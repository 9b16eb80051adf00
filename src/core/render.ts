/**
 * Rendering a page in a real browser: what the built-in web provider asks of a renderer, and what it gets
 * back. One implementation drives the Browser Rendering binding (`[browser]` in wrangler.toml) with
 * @cloudflare/puppeteer; locally the stack binds the same name to a service of the same shape over
 * Debian's chromium (scripts/browser-service.ts), so the same code renders in both places.
 */

/** Firecrawl's page actions that the built-in renderer performs (src/core/web-inputs.ts validates them). */
export type PageAction =
  | { type: 'wait'; milliseconds?: number; selector?: string }
  | { type: 'click'; selector: string; all?: boolean }
  | { type: 'write'; text: string }
  | { type: 'press'; key: string }
  | { type: 'scroll'; direction?: 'up' | 'down'; selector?: string }
  | { type: 'screenshot'; fullPage?: boolean; quality?: number }
  | { type: 'scrape' };

export interface ScreenshotRequest {
  fullPage: boolean;
  /** JPEG quality 1 to 100; without it the picture is a PNG. */
  quality?: number;
}

export interface RenderOptions {
  /** A handset's viewport, touch and user agent instead of a desktop's. */
  mobile: boolean;
  userAgent: string;
  /** Headers every request of the page carries (Accept-Language from location.languages). */
  headers: Record<string, string>;
  /** Milliseconds to wait once the page has loaded, before actions and reading it. */
  waitForMs: number;
  actions: readonly PageAction[];
  screenshot?: ScreenshotRequest;
  /**
   * The page is a video player: once loaded, its first `<video>` is paused at this second (seeked, the frame
   * decoded), and the screenshot is of that video element alone.
   */
  video?: { second: number };
  /** Requests to ad and tracker hosts are refused. */
  blockAds: boolean;
  /**
   * Awaited before any request of the page leaves the browser (documents, frames, scripts, images,
   * fetches): it throws to refuse the request. The safe fetch's address rules, DNS included. A refusal of
   * the top document itself is what the render throws.
   */
  assertAllowed(url: URL): Promise<void>;
  /** Aborted when the call's time runs out or its client goes away. */
  signal: AbortSignal;
}

export interface Screenshot {
  mediaType: 'image/png' | 'image/jpeg';
  /** The picture, base64 as the browser hands it over. */
  base64: string;
}

export interface RenderedPage {
  /** The document as the browser holds it after scripts, waits and actions. */
  html: string;
  /** Where the top frame ended up, after redirects and script navigations. */
  finalUrl: string;
  /** The HTTP status of the top document's response. */
  status: number;
  contentType: string;
  screenshot?: Screenshot;
  /** What the screenshot and scrape actions captured, in order. */
  actionScreenshots: Screenshot[];
  actionScrapes: { url: string; html: string }[];
  /** Requests of the page that were refused by the address rules, and as ads. */
  refusedRequests: number;
  blockedAds: number;
}

export interface Renderer {
  render(url: string, options: RenderOptions): Promise<RenderedPage>;
}
