import type { Env } from '../../core/config';
import type { ProviderResult } from '../../core/operation';
import { normalizeUpstream } from '../normalize';
import { trackChanges, type ChangeMode, type ChangeTracking } from './change-tracking';
import { withDeadline } from './deadline';
import { pageContent, type Wanted } from './documents';
import type { BuiltinWebContext, ScrapeFormat, ScrapeInput } from './inputs';
import { checkSelectors } from './page';
import { SafeFetcher } from './safe-fetch';
import { pageRequestHeaders } from './headers';
import { builtinWebSettings } from './settings';

const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * /scrape without any vendor: one GET of the page (no JavaScript is run), turned into the requested
 * formats. Answers `{ result: [page] }` with Firecrawl's page shape. Every failure is a classified
 * ApiError, so the pipeline bills it zero.
 */
export async function scrapeWithBuiltin(input: ScrapeInput, context: BuiltinWebContext): Promise<ProviderResult> {
  const formats = input.formats ?? ['markdown'];
  refuseWhatNeedsAnotherProvider(formats, input.proxy, context.env);
  checkSelectors(input);
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
  if (input.waitFor) {
    await wait(input.waitFor, signal, input.url);
    warnings.push(`waitFor was a plain wait of ${input.waitFor} ms before fetching: the built-in provider does not run the page's JavaScript.`);
  }
  if (input.location?.country) {
    warnings.push(`The page was fetched from this server's own network, not from ${input.location.country}; only Accept-Language follows location.languages.`);
  }

  const fetcher = new SafeFetcher({ settings, signal, ...(context.fetch ? { fetch: context.fetch } : {}) });
  const resource = await fetcher.open(input.url, { headers: pageRequestHeaders(settings, input) });
  const has = (format: ScrapeFormat) => formats.includes(format);
  const wanted: Wanted = { markdown: has('markdown') || tracking !== undefined, html: has('html'), rawHtml: has('rawHtml'), links: has('links'), images: has('images') };
  const { markdown, warnings: contentWarnings, metadata, ...content } = await pageContent(resource, input, wanted, signal);

  let changeTracking: ChangeTracking | undefined;
  if (tracking) {
    const snapshot = { organizationId: context.organizationId!, url: resource.requestedUrl, markdown: markdown ?? '', statusCode: resource.status };
    changeTracking = await trackChanges(context.env.DB, snapshot, tracking.modes);
  }
  warnings.push(...contentWarnings);

  const page = {
    ...(has('markdown') ? { markdown } : {}),
    ...content,
    ...(changeTracking ? { changeTracking } : {}),
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
function refuseWhatNeedsAnotherProvider(formats: readonly ScrapeFormat[], proxy: string | undefined, env: Env): void {
  // With a Firecrawl key present the built-in provider was chosen on purpose; the way out is to unchoose it.
  const missing = env.FIRECRAWL_API_KEY ? ['WEB_PROVIDER=firecrawl'] : ['FIRECRAWL_API_KEY'];
  const types = new Set(formats.map((format) => (typeof format === 'string' ? format : format.type)));
  if (types.has('summary')) throw normalizeUpstream.unavailable('A language model for the summary format', missing);
  if (types.has('json')) throw normalizeUpstream.unavailable('A language model for the json format', missing);
  if (types.has('screenshot')) throw normalizeUpstream.unavailable('A browser for the screenshot format', missing);
  if (proxy === 'enhanced') throw normalizeUpstream.unavailable('An anti-bot proxy for proxy: enhanced', missing);
}

function changeTrackingOf(formats: readonly ScrapeFormat[]): { modes: readonly ChangeMode[] } | undefined {
  for (const format of formats) if (typeof format === 'object' && format.type === 'changeTracking') return { modes: format.modes ?? [] };
  return undefined;
}

function wait(ms: number, signal: AbortSignal, url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timedOut = () => {
      clearTimeout(timer);
      reject(normalizeUpstream.failed(`Fetching ${url}`, 'timed out during waitFor'));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', timedOut);
      resolve();
    }, ms);
    if (signal.aborted) timedOut();
    else signal.addEventListener('abort', timedOut, { once: true });
  });
}
