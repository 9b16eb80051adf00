import { ApiError } from '../../core/errors';
import { networkError, normalizeUpstream } from '../normalize';
import { isIpLiteral, nonPublicAddressReason, privateNameReason } from './addresses';
import { readAll } from '../../core/bounded-read';
import { mediaTypeOf } from '../../core/request-body';
import { resolveHost, type Fetcher } from './resolver';
import { hostPortOf, type BuiltinWebSettings } from './settings';
import { SubrequestBudget } from '../../core/subrequests';

/**
 * The only way the built-in web provider reaches the network: public http(s) targets only, every redirect
 * hop checked again, at most 5 redirects, bodies capped while they stream, and no more requests than the
 * call's subrequest budget (each hop and each DNS query counted) however many a site asks for.
 *
 * What it cannot close: the DNS-rebinding window. A name is resolved through DNS-over-HTTPS and every
 * address checked, but the platform's fetch resolves the name again on its own, and a hostile
 * authoritative server answering with a zero TTL could hand it a different (private) address in the
 * milliseconds between. The Workers runtime offers no way to pin the checked address while keeping TLS
 * and SNI on the name. On Cloudflare's network a Worker's fetch does not reach private networks anyway; a
 * self-hosted workerd should additionally run without routes to private networks it must not reach.
 */

export const MAX_REDIRECTS = 5;
export const MAX_BODY_BYTES = 10 * 1024 * 1024;
/**
 * How far a compressed body may inflate. The runtime's fetch decompresses a gzip or brotli body and keeps
 * the compressed Content-Length (checked in workerd: a 51 KB gzip of 50 MB answered content-encoding gzip,
 * content-length 51 KB, and 10 MB were read in 71 ms), so both sizes are known while the body streams.
 * HTML and text compress five to twenty times; a compression bomb a thousand. A body past this ratio (and
 * past MIN_INFLATED_BYTES, so a small page never trips it) is abandoned there, before the rest of the
 * provider spends seconds reading megabytes of padding.
 */
export const MAX_INFLATION = 100;
export const MIN_INFLATED_BYTES = 1024 * 1024;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const PROVIDER = 'The built-in web provider';

export interface FetchedResource {
  /** The URL asked for. */
  requestedUrl: string;
  /** Where the last redirect led. */
  url: string;
  status: number;
  headers: Headers;
  /** The media type, lower case, without parameters; empty when the server sent none. */
  contentType: string;
  body: Uint8Array;
}

/** A response whose body is still arriving: what `open` answers, so a page can be read as it streams. */
export interface OpenedResource extends Omit<FetchedResource, 'body'> {
  /**
   * The body, counted as it streams: past the cap, on a broken connection or when the call's time runs out
   * it errors with the same ApiError `fetch` would throw. Cancelling it closes the upstream connection, so
   * a reader that has seen enough stops paying for the rest.
   */
  body: ReadableStream<Uint8Array>;
}

export interface SafeFetchContext {
  settings: BuiltinWebSettings;
  signal: AbortSignal;
  /** Defaults to the platform's fetch. */
  fetch?: Fetcher;
  /** The call's budget, shared with whatever else of the call goes out (its renderer); a fetcher given none has its own. */
  budget?: SubrequestBudget;
}

export interface FetchOptions {
  headers?: Record<string, string>;
  maxBytes?: number;
  /** The field a refusal names (map refuses on `url` too, but a caller may check other inputs). */
  field?: string;
}

export class SafeFetcher {
  private readonly fetcher: Fetcher;
  /** One resolution per name per call: a crawl asks for the same host many times. */
  private readonly resolved = new Map<string, Promise<string[]>>();
  readonly budget: SubrequestBudget;

  constructor(private readonly context: SafeFetchContext) {
    this.fetcher = context.fetch ?? ((input, init) => fetch(input, init));
    this.budget = context.budget ?? new SubrequestBudget();
  }

  get signal(): AbortSignal {
    return this.context.signal;
  }

  /** Nothing more will be fetched: the call's time or its subrequest budget is spent. */
  get exhausted(): boolean {
    return this.context.signal.aborted || this.budget.ranOut;
  }

  /** Throws 400 VALIDATION_ERROR on `field` unless the URL is a public http(s) target (or an allowed private one). */
  async assertPublic(url: URL, field = 'url', redirectedFrom?: string): Promise<void> {
    const hostname = assertPublicName(url, this.context.settings, field, redirectedFrom);
    if (hostname === null) return;
    const addresses = await this.resolve(hostname);
    for (const address of addresses) {
      const reason = nonPublicAddressReason(address);
      if (reason) throw refusal(field, url, `a name that resolves to ${address}, ${reason}`, redirectedFrom, allowanceOf(this.context.settings));
    }
  }

  /**
   * GETs a URL, following at most 5 redirects by hand and checking each hop before it is requested, and
   * reads the body whole.
   */
  async fetch(target: string | URL, options: FetchOptions = {}): Promise<FetchedResource> {
    const { body, ...resource } = await this.open(target, options);
    return { ...resource, body: await readAll(body) };
  }

  /** As `fetch`, but answers once the headers are in, with the body still streaming (and still capped). */
  async open(target: string | URL, options: FetchOptions = {}): Promise<OpenedResource> {
    const { response, ...resource } = await this.follow(target, options, 'GET');
    return { ...resource, body: await this.counted(response, new URL(resource.url), options.maxBytes ?? MAX_BODY_BYTES) };
  }

  /** A HEAD request, redirects followed and checked as `open` does: the headers of what is there, no body. */
  async head(target: string | URL, options: FetchOptions = {}): Promise<Omit<OpenedResource, 'body'>> {
    const { response, ...resource } = await this.follow(target, options, 'HEAD');
    await response.body?.cancel();
    return resource;
  }

  private async follow(target: string | URL, options: FetchOptions, method: 'GET' | 'HEAD'): Promise<Omit<OpenedResource, 'body'> & { response: Response }> {
    const field = options.field ?? 'url';
    const requestedUrl = typeof target === 'string' ? parseTarget(target, field) : target;
    let url = requestedUrl;
    for (let redirects = 0; ; redirects++) {
      await this.assertPublic(url, field, redirects > 0 ? requestedUrl.href : undefined);
      const response = await this.request(url, options.headers ?? {}, { method });
      const location = response.headers.get('location');
      if (!REDIRECTS.has(response.status) || !location) {
        return {
          requestedUrl: requestedUrl.href,
          url: url.href,
          status: response.status,
          headers: response.headers,
          contentType: mediaTypeOf(response.headers.get('content-type')),
          response,
        };
      }
      await response.body?.cancel();
      if (redirects === MAX_REDIRECTS) throw normalizeUpstream.rejected(PROVIDER, `${requestedUrl.href} redirects more than ${MAX_REDIRECTS} times`);
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw normalizeUpstream.rejected(PROVIDER, `${url.href} redirects to an address that is not a URL`);
      }
      url = next;
    }
  }

  /**
   * POSTs once to a public URL and answers the status (webhook deliveries). A redirect is not followed:
   * the receiver's 3xx is its answer. The response body is not read.
   */
  async post(target: URL, body: string, headers: Record<string, string>): Promise<{ status: number }> {
    await this.assertPublic(target);
    const response = await this.request(target, headers, { method: 'POST', body });
    await response.body?.cancel();
    return { status: response.status };
  }

  private resolve(hostname: string): Promise<string[]> {
    let pending = this.resolved.get(hostname);
    if (!pending) {
      // Two queries, A and AAAA.
      if (!this.budget.take(2)) return Promise.reject(budgetSpent(`${hostname} was not looked up`, this.budget));
      pending = resolveHost(hostname, this.context.settings.dnsUrl, this.fetcher, this.context.signal);
      this.resolved.set(hostname, pending);
    }
    return pending;
  }

  private async request(url: URL, headers: Record<string, string>, init: { method: 'GET' | 'HEAD' | 'POST'; body?: string } = { method: 'GET' }): Promise<Response> {
    const signal = this.context.signal;
    if (!this.budget.take()) throw budgetSpent(`${url.href} was not fetched`, this.budget);
    try {
      return await this.fetcher(url, { ...init, headers, redirect: 'manual', signal });
    } catch (error) {
      if (signal.aborted) throw normalizeUpstream.failed(`Fetching ${url.href}`, 'timed out');
      throw normalizeUpstream.failed(`Fetching ${url.href}`, networkError(error));
    }
  }

  /**
   * The body, counted as it streams: a response past the cap is abandoned, whatever its Content-Length
   * claimed. Each chunk is read only when asked for, so nothing is read ahead of the consumer.
   */
  private async counted(response: Response, url: URL, maxBytes: number): Promise<ReadableStream<Uint8Array>> {
    const tooLarge = () => normalizeUpstream.rejected(PROVIDER, `${url.href} is larger than ${formatBytes(maxBytes)}`);
    if (Number(response.headers.get('content-length')) > maxBytes) {
      await response.body?.cancel();
      throw tooLarge();
    }
    if (!response.body) return new ReadableStream({ start: (controller) => controller.close() });
    const compressedBytes = Number(response.headers.get('content-length'));
    const encoding = response.headers.get('content-encoding')?.trim().toLowerCase();
    const inflationCap = encoding && encoding !== 'identity' && compressedBytes > 0 ? Math.max(MIN_INFLATED_BYTES, compressedBytes * MAX_INFLATION) : Number.POSITIVE_INFINITY;
    const bomb = () =>
      normalizeUpstream.rejected(PROVIDER, `${url.href} inflates from ${formatBytes(compressedBytes)} of ${encoding} to more than ${MAX_INFLATION} times that (a compression bomb)`);
    const reader = response.body.getReader();
    const signal = this.context.signal;
    let total = 0;
    return new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          let chunk: ReadableStreamReadResult<Uint8Array>;
          try {
            chunk = await reader.read();
          } catch (error) {
            if (signal.aborted) throw normalizeUpstream.failed(`Fetching ${url.href}`, 'timed out');
            throw normalizeUpstream.failed(`Fetching ${url.href}`, `the connection broke (${error instanceof Error ? error.message : String(error)})`);
          }
          if (chunk.done) return controller.close();
          total += chunk.value.byteLength;
          if (total > maxBytes || total > inflationCap) {
            await reader.cancel();
            throw total > maxBytes ? tooLarge() : bomb();
          }
          controller.enqueue(chunk.value);
        },
        cancel: (reason) => reader.cancel(reason),
      },
      { highWaterMark: 0 },
    );
  }
}

/**
 * What `assertPublic` checks without DNS: an http(s) URL with no credentials, not an address or a name that is
 * private on its face (an IP literal outside the public ranges, localhost, a metadata service, an internal
 * suffix). Answers the name still to resolve, or null when nothing is left to check (an IP literal, or a
 * host the operator allowed). Also what a URL handed to a vendor that fetches it (Firecrawl) must pass.
 */
export function assertPublicName(url: URL, settings: Pick<BuiltinWebSettings, 'allowedPrivateHosts' | 'allowanceSetting'>, field = 'url', redirectedFrom?: string): string | null {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refusal(field, url, `not an http(s) URL (${url.protocol.replace(/:$/, '')})`, redirectedFrom);
  if (url.username || url.password) throw refusal(field, url, 'a URL with a user name or password, which is never fetched', redirectedFrom);
  if (settings.allowedPrivateHosts.has(hostPortOf(url))) return null;
  const hostname = url.hostname.replace(/\.$/, '');
  const reason = isIpLiteral(hostname) ? nonPublicAddressReason(hostname) : privateNameReason(hostname);
  // A private address may be one the operator means to reach (a local test site): say how to allow it.
  if (reason) throw refusal(field, url, reason, redirectedFrom, allowanceOf(settings));
  return isIpLiteral(hostname) ? null : hostname;
}

function allowanceOf(settings: Pick<BuiltinWebSettings, 'allowanceSetting'>): string {
  return `${settings.allowanceSetting} (exact host:port pairs; set by the operator of this installation)`;
}

/** Parses what the caller sent; a string that is not an absolute URL is refused on its field. */
export function parseTarget(text: string, field = 'url'): URL {
  try {
    return new URL(text);
  } catch {
    throw ApiError.validation([{ field, location: 'body', message: 'An absolute http(s) URL, such as https://example.com/page.' }]);
  }
}

function refusal(field: string, url: URL, reason: string, redirectedFrom: string | undefined, allowance?: string): ApiError {
  const what = redirectedFrom ? `${redirectedFrom} redirects to ${url.href}, which is ${reason}` : `${url.href} is ${reason}`;
  const message = `Only public http(s) addresses are fetched: ${what}.${allowance ? ` Private hosts are fetched only when listed in ${allowance}.` : ''}`;
  return ApiError.validation([{ field, location: 'body', message }], message);
}

/** What a request past the call's budget is refused with: 422, uncharged, and not worth retrying (it would ask as much again). */
export function budgetSpent(what: string, budget: SubrequestBudget): ApiError {
  return normalizeUpstream.rejected(PROVIDER, `${what}: this call has made the ${budget.limit} requests one call may make (pages, redirects, robots.txt files, sitemaps and DNS lookups count)`);
}

function formatBytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MB` : `${bytes} bytes`;
}
