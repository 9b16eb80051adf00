import type { Env } from '../../core/config';
import { ApiError } from '../../core/errors';
import type { ProviderResult } from '../../core/operation';
import { readHead } from '../../core/bounded-read';
import type { RenderedPage, Renderer, RenderOptions, Screenshot } from '../../core/render';
import { normalizeUpstream } from '../normalize';
import { trackChanges, type ChangeMode, type ChangeTracking } from './change-tracking';
import { waitUnlessAborted, withDeadline } from './deadline';
import { pageContent, type Wanted } from './documents';
import type { BuiltinWebContext, ScrapeFormat, ScrapeInput } from './inputs';
import { checkSelectors } from './page';
import { browserAsks, checkActions, looksScriptBuilt } from './render-policy';
import { BrowserBindingRenderer } from './renderer';
import { sharedFairly } from './organization-renders';
import { parseTarget, SafeFetcher, type OpenedResource } from './safe-fetch';
import { acceptLanguage, pageRequestHeaders } from './headers';
import { languageModelOf } from './language-model';
import { builtinWebSettings, type BuiltinWebSettings } from './settings';
import { SubrequestBudget } from '../../core/subrequests';

const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * With a browser configured, a served page no larger than this is looked at whole before it is read, to tell
 * a shell its scripts fill in (rendered) from a page with its text (read as served). A shell is small (an
 * empty root element and script tags); a bigger page reads as served, streaming on from these bytes.
 */
const SHELL_PEEK_BYTES = 64 * 1024;

/**
 * /scrape without any vendor: one GET of the page, turned into the requested formats; or, when the request
 * asks for what only a browser gives (a screenshot, actions, waitFor, mobile) or the page served is a shell
 * its scripts fill in, the page rendered in a browser (renderer.ts, when the BROWSER binding is there).
 * Answers `{ result: [page] }` with Firecrawl's page shape. Every failure is a classified ApiError, so the
 * pipeline bills it zero.
 */
export async function scrapeWithBuiltin(input: ScrapeInput, context: BuiltinWebContext): Promise<ProviderResult> {
  const formats = input.formats ?? ['markdown'];
  const renderer = rendererOf(context);
  refuseWhatNeedsAnotherProvider(input, formats, { browser: renderer !== undefined, model: languageModelOf(context.env) !== undefined }, context.env);
  checkSelectors(input);
  checkActions(input.actions);
  const tracking = changeTrackingOf(formats);
  if (tracking && !context.organizationId) throw new Error('Change tracking needs the organization of the call in the provider context.');

  return withDeadline(context.signal, input.timeout ?? DEFAULT_TIMEOUT_MS, (signal) => scrapePage(input, formats, tracking, context, signal));
}

async function scrapePage(
  input: ScrapeInput,
  formats: readonly ScrapeFormat[],
  tracking: { modes: readonly ChangeMode[] } | undefined,
  context: BuiltinWebContext,
  signal: AbortSignal,
): Promise<ProviderResult> {
  const settings = builtinWebSettings(context.env);
  const warnings: string[] = [];
  const budget = context.subrequests ?? new SubrequestBudget();
  const renderer = rendererOf(context, budget);
  const asks = browserAsks(input);
  if (input.waitFor && !renderer) {
    await waitUnlessAborted(input.waitFor, signal, () => normalizeUpstream.failed(`Fetching ${input.url}`, 'timed out during waitFor'));
    warnings.push(`waitFor was a plain wait of ${input.waitFor} ms before fetching: with no browser configured here (the BROWSER binding), the built-in provider does not run the page's JavaScript.`);
  }
  if (input.location?.country) {
    warnings.push(`The page was fetched from this server's own network, not from ${input.location.country}; only Accept-Language follows location.languages.`);
  }

  const fetcher = new SafeFetcher({ settings, signal, budget, ...(context.fetch ? { fetch: context.fetch } : {}) });
  let resource: OpenedResource;
  let rendered: RenderedPage | undefined;
  if (renderer && asks.length > 0) {
    await fetcher.assertPublic(parseTarget(input.url));
    rendered = await renderer.render(input.url, renderOptions(input, settings, fetcher, signal));
    resource = renderedResource(input.url, rendered);
  } else {
    resource = await fetcher.open(input.url, { headers: pageRequestHeaders(settings, input) });
    if (renderer && resource.contentType === 'text/html') {
      const { head, body } = await readHead(resource.body, SHELL_PEEK_BYTES + 1);
      resource = { ...resource, body };
      if (head.byteLength <= SHELL_PEEK_BYTES && looksScriptBuilt(new TextDecoder().decode(head))) {
        await body.cancel();
        rendered = await renderer.render(input.url, renderOptions(input, settings, fetcher, signal)).catch((error: unknown) => {
          // A shell is still a page: when the browser cannot be had, its served HTML is the answer.
          if (error instanceof ApiError && error.code === 'PROVIDER_UNAVAILABLE') {
            warnings.push(`The page looks built by its scripts, but it could not be rendered (${error.message}); this is its HTML as served.`);
            return undefined;
          }
          throw error;
        });
        resource = rendered ? renderedResource(input.url, rendered) : { ...resource, body: streamOf(head) };
      }
    }
  }
  const refused = refusedRequestsWarning(rendered, budget);
  if (refused) warnings.push(refused);
  const has = (format: ScrapeFormat) => formats.includes(format);
  const extraction = formats.find((format) => typeof format === 'object' && format.type === 'json') as { schema?: Record<string, unknown>; prompt?: string } | undefined;
  const model = has('summary') || extraction ? languageModelOf(context.env) : undefined;
  const wanted: Wanted = { markdown: has('markdown') || tracking !== undefined || model !== undefined, html: has('html'), rawHtml: has('rawHtml'), links: has('links'), images: has('images') };
  const { markdown, warnings: contentWarnings, metadata, ...content } = await pageContent(resource, input, wanted, signal);

  let changeTracking: ChangeTracking | undefined;
  if (tracking) {
    const snapshot = { organizationId: context.organizationId!, url: resource.requestedUrl, markdown: markdown ?? '', statusCode: resource.status };
    changeTracking = await trackChanges(context.env, snapshot, tracking.modes);
  }
  warnings.push(...contentWarnings);
  const summary = model && has('summary') ? await model.summarize(markdown ?? '') : undefined;
  const json = model && extraction ? await model.extract(markdown ?? '', extraction) : undefined;

  const page = {
    ...(has('markdown') ? { markdown } : {}),
    ...content,
    ...(summary !== undefined ? { summary } : {}),
    ...(json !== undefined ? { json } : {}),
    ...(changeTracking ? { changeTracking } : {}),
    ...(rendered?.screenshot ? { screenshot: dataUrlOf(rendered.screenshot) } : {}),
    ...(rendered && input.actions?.length ? { actions: actionResults(rendered) } : {}),
    ...(warnings.length > 0 ? { warning: warnings.join(' ') } : {}),
    metadata: {
      ...metadata,
      sourceURL: input.url,
      url: resource.url,
      statusCode: resource.status,
      contentType: resource.headers.get('content-type') ?? '',
      ...(input.location ? { location: input.location } : {}),
    },
  };
  return { data: { result: [page] } };
}

/** Formats and options only a provider with a language model, a browser or proxies can serve. */
function refuseWhatNeedsAnotherProvider(input: ScrapeInput, formats: readonly ScrapeFormat[], has: { browser: boolean; model: boolean }, env: Env): void {
  // With a Firecrawl key present the built-in provider was chosen on purpose; the way out is to unchoose it.
  const missing = env.FIRECRAWL_API_KEY ? ['WEB_PROVIDER=firecrawl'] : ['FIRECRAWL_API_KEY'];
  const browser = env.FIRECRAWL_API_KEY ? missing : ['the BROWSER binding ([browser] in wrangler.toml) or FIRECRAWL_API_KEY'];
  const model = env.FIRECRAWL_API_KEY ? missing : ['the AI binding ([ai] in wrangler.toml, Workers AI) or FIRECRAWL_API_KEY'];
  const types = new Set(formats.map((format) => (typeof format === 'string' ? format : format.type)));
  if (types.has('summary') && !has.model) throw normalizeUpstream.unavailable('A language model for the summary format', model);
  if (types.has('json') && !has.model) throw normalizeUpstream.unavailable('A language model for the json format', model);
  if (types.has('screenshot') && !has.browser) throw normalizeUpstream.unavailable('A browser for the screenshot format', browser);
  if (input.actions?.length && !has.browser) throw normalizeUpstream.unavailable('A browser for actions', browser);
  if (input.proxy === 'enhanced') throw normalizeUpstream.unavailable('An anti-bot proxy for proxy: enhanced', missing);
}

/**
 * The context's renderer (tests hand in theirs), else the Browser Rendering binding's when the worker has one;
 * a call billed to an organization renders within its slots (organization-renders.ts). Its looks for a browser
 * and for a slot are taken from the share of `budget`, the call's, that waits may spend (`budget.waiting`).
 */
export function rendererOf(context: BuiltinWebContext, budget = new SubrequestBudget()): Renderer | undefined {
  // Browser Rendering (wrangler.toml [browser]); locally the stack binds it to scripts/browser-service.ts.
  const binding = (context.env as { BROWSER?: Fetcher }).BROWSER;
  const renderer = context.renderer ?? (binding ? new BrowserBindingRenderer(binding, budget) : undefined);
  return renderer && context.organizationId ? sharedFairly(renderer, context.env.ORG_WALLET, context.organizationId, budget) : renderer;
}

function renderOptions(input: ScrapeInput, settings: BuiltinWebSettings, fetcher: SafeFetcher, signal: AbortSignal): RenderOptions {
  const screenshot = input.formats?.find((format) => typeof format === 'object' && format.type === 'screenshot') as { fullPage?: boolean; quality?: number } | undefined;
  const languages = input.location?.languages;
  return {
    mobile: input.mobile ?? false,
    userAgent: input.mobile ? settings.mobileUserAgent : settings.userAgent,
    // The same header a fetched page is asked with: tags that are not language tags (a line break) are left out.
    headers: languages?.length ? { 'accept-language': acceptLanguage(input.location) } : ({} as Record<string, string>),
    waitForMs: input.waitFor ?? 0,
    actions: checkActions(input.actions),
    ...(screenshot ? { screenshot: { fullPage: screenshot.fullPage ?? false, ...(screenshot.quality ? { quality: screenshot.quality } : {}) } } : {}),
    blockAds: input.blockAds ?? true,
    assertAllowed: (url: URL) => fetcher.assertPublic(url),
    signal,
  };
}

/** The rendered document as the content stages read a fetched one. */
export function renderedResource(requestedUrl: string, rendered: RenderedPage): OpenedResource {
  return {
    requestedUrl,
    url: rendered.finalUrl,
    status: rendered.status,
    headers: new Headers({ 'content-type': 'text/html; charset=utf-8' }),
    contentType: 'text/html',
    body: streamOf(new TextEncoder().encode(rendered.html)),
  };
}

function streamOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
}

/**
 * A screenshot is answered as a data: URL: the picture travels in the answer itself, so it can be read for
 * as long as the client keeps the answer (the spec's "at least 24 hours") without a store, a public route
 * or an expiry to run (docs/decisions.md, "Rendering").
 */
export function dataUrlOf(screenshot: Screenshot): string {
  return `data:${screenshot.mediaType};base64,${screenshot.base64}`;
}

/** Firecrawl's `actions` answer: what the screenshot and scrape actions captured, in order. */
function actionResults(rendered: RenderedPage) {
  return { screenshots: rendered.actionScreenshots.map(dataUrlOf), scrapes: rendered.actionScrapes, javascriptReturns: [], pdfs: [] };
}

function changeTrackingOf(formats: readonly ScrapeFormat[]): { modes: readonly ChangeMode[] } | undefined {
  for (const format of formats) if (typeof format === 'object' && format.type === 'changeTracking') return { modes: format.modes ?? [] };
  return undefined;
}

/** What a rendered page's answer says when some of its requests were refused (a private address, or past the call's budget), else undefined. */
export function refusedRequestsWarning(rendered: RenderedPage | undefined, budget: SubrequestBudget): string | undefined {
  if (!rendered?.refusedRequests) return undefined;
  const why = budget.ranOut ? `only public http(s) addresses are fetched, and a call looks up at most ${budget.limit} names and requests` : 'only public http(s) addresses are fetched';
  return `${rendered.refusedRequests} request${rendered.refusedRequests === 1 ? '' : 's'} of the page were refused: ${why}.`;
}
