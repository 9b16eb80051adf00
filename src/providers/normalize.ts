import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { clock } from '../core/clock';
import { ApiError, UPSTREAM_RETRY_AFTER_S } from '../core/errors';

/**
 * The spec's upstream normalization rules, in one module:
 * 1. a 200 carrying a failure body → 422 PROVIDER_ERROR;
 * 2. an upstream 4xx → PROVIDER_ERROR with that status;
 * 3. 5xx, network errors and timeouts → 502 PROVIDER_ERROR;
 * 4. our own upstream quota exhausted → 503 UPSTREAM_CREDITS_EXHAUSTED, never 402.
 * Our own credential being refused (401/403) is our fault, not the caller's: 502, detail logged only.
 */
/** What a failed upstream call's message ends with; a message shown in another setting (a webhook attempt) drops it. */
export const RETRY_ADVICE = 'Back off and retry; this call was not charged.';

export const normalizeUpstream = {
  unavailable(provider: string, missing: string[]): ApiError {
    return new ApiError('PROVIDER_UNAVAILABLE', `${provider} is not configured on this server: set ${missing.join(' and ')}.`, { retryAfter: 60 });
  },

  rejected(provider: string, upstreamMessage: string | undefined): ApiError {
    const reason = upstreamMessage ? `: ${upstreamMessage}` : '.';
    return new ApiError('PROVIDER_ERROR', `${provider} could not answer this request${reason}`, { status: 422 });
  },

  creditsExhausted(provider: string, status?: number): ApiError {
    return new ApiError('UPSTREAM_CREDITS_EXHAUSTED', `${provider} quota of this service is exhausted. Retry shortly; this call was not charged.`, {
      retryAfter: 60,
      upstream: { kind: 'out_of_credits', ...(status ? { status } : {}) },
    });
  },

  /** The vendor refused the credentials: ours (502, detail logged by the caller) or, on a connection, the workspace's. */
  credentialsRefused(provider: string, status?: number): ApiError {
    return new ApiError('PROVIDER_ERROR', `${provider} failed: the service could not authenticate upstream. ${RETRY_ADVICE}`, {
      status: 502,
      upstream: { kind: 'credentials_refused', ...(status ? { status } : {}) },
    });
  },

  /**
   * A service of this installation's own (not the vendor or page asked for) cannot be reached: the spec's
   * "a dependency is unreachable", 503. Said without a word on charges: free routes meet it too.
   */
  dependencyUnreachable(dependency: string, reason: string): ApiError {
    return new ApiError('PROVIDER_UNAVAILABLE', `${dependency} could not be reached (${reason}), so nothing was fetched. Retry shortly.`, { retryAfter: 30 });
  },

  failed(provider: string, reason: string): ApiError {
    return new ApiError('PROVIDER_ERROR', `${provider} failed: ${reason}. ${RETRY_ADVICE}`, { status: 502 });
  },

  /**
   * Classifies a non-2xx upstream response. A 429 is a throttle unless its body speaks of quota or
   * credits (`quotaHint`, per vendor); "Rate limit exceeded" is a throttle, not an empty wallet. 401 and 403
   * are our credential refused unless the vendor says otherwise (`credentialStatuses`: Firecrawl's 403 is a site
   * it will not scrape, whose own message passes through).
   */
  async fromStatus(provider: string, response: Response, { quotaHint = /quota|credits?/i, credentialStatuses = [401, 403] }: { quotaHint?: RegExp; credentialStatuses?: number[] } = {}): Promise<ApiError> {
    const text = await response.text().catch(() => '');
    const status = response.status;
    if (status === 402 || (status === 429 && quotaHint.test(text))) return normalizeUpstream.creditsExhausted(provider, status);
    // 408 is the upstream's own time limit passing: a timeout (rule 3), not the caller's mistake.
    if (status === 408) return normalizeUpstream.failed(provider, 'timed out (HTTP 408)');
    if (credentialStatuses.includes(status)) {
      console.error(JSON.stringify({ level: 'error', provider, upstreamStatus: status, body: text.slice(0, 500), note: 'our upstream credential was refused' }));
      return normalizeUpstream.credentialsRefused(provider, status);
    }
    if (status >= 400 && status < 500) {
      return new ApiError('PROVIDER_ERROR', `${provider} rejected the request (HTTP ${status})${messageOf(text)}`, {
        status: status as ContentfulStatusCode,
        // A throttle always says how long to wait: the upstream's own wait, or the one a 502 gets.
        ...(status === 429 ? { retryAfter: retryAfterOf(response.headers) ?? UPSTREAM_RETRY_AFTER_S, upstream: { kind: 'throttled' as const, status } } : {}),
      });
    }
    return normalizeUpstream.failed(provider, `HTTP ${status}`);
  },

  /** A fetch that never throws anything but a classified ApiError. */
  async fetch(provider: string, input: string | URL, init: RequestInit & { signal: AbortSignal }): Promise<Response> {
    try {
      return await fetch(input, init);
    } catch (error) {
      if (init.signal.aborted) throw normalizeUpstream.failed(provider, 'timed out');
      throw normalizeUpstream.failed(provider, networkError(error));
    }
  },

  /** Reads a JSON body; a body that is not JSON is an upstream failure. */
  async json(provider: string, response: Response, signal: AbortSignal): Promise<unknown> {
    try {
      return await response.json();
    } catch {
      if (signal.aborted) throw normalizeUpstream.failed(provider, 'timed out');
      throw normalizeUpstream.failed(provider, 'answered with a body that is not JSON');
    }
  },
};

function messageOf(text: string): string {
  try {
    const body = JSON.parse(text) as { message?: unknown; error?: unknown };
    const message = typeof body.message === 'string' ? body.message : typeof body.error === 'string' ? body.error : undefined;
    return message ? `: ${message.slice(0, 300)}` : '.';
  } catch {
    return '.';
  }
}

/** The longest wait passed on: an upstream naming more (a date years ahead, a number past any sense) is told as a day. */
const MAX_RETRY_AFTER_S = 86_400;

/**
 * The wait a response's Retry-After names, in whole seconds: a number of seconds or an HTTP date (RFC 9110,
 * section 10.2.3), at most MAX_RETRY_AFTER_S. Undefined when it names none, or none still ahead.
 */
function retryAfterOf(headers: Headers): number | undefined {
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  const seconds = /^\d+$/.test(value) ? Number(value) : (Date.parse(value) - clock.now()) / 1000;
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(Math.ceil(seconds), MAX_RETRY_AFTER_S) : undefined;
}

/**
 * A fetch that threw, in words for whoever reads the message: the runtime's own words, except workerd's
 * "internal error; reference = …" for a connection it could not make, which names nothing they can act on.
 */
export function networkError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return `network error (${/internal error; reference =/i.test(message) ? 'no connection could be made' : message})`;
}
