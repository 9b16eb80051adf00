import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ApiError } from '../core/errors';
import { normalizeUpstream } from './normalize';
import type { Vendor } from '../core/vendor';

/**
 * Hunter (api.hunter.io/v2): the key is the `api_key` query parameter; a success is `{data, meta}`, a failure
 * `{errors: [{id, code, details}]}` with the HTTP status. Our plan's monthly requests running out is HTTP 429
 * with id `too_many_requests` and a "usage" detail, or 403 `restricted_account`.
 */
export const hunter: Vendor = {
  id: 'hunter',
  label: 'The Hunter email data provider',
  keySetting: 'HUNTER_API_KEY',
  baseUrlSetting: 'HUNTER_BASE_URL',
  defaultBaseUrl: 'https://api.hunter.io',
  authenticate: (key) => ({ query: { api_key: key } }),
  read(body) {
    const answer = body as { data?: unknown; meta?: unknown; errors?: { details?: string }[] } | null;
    if (!answer || answer.errors || answer.data === undefined) return { ok: false, message: answer?.errors?.[0]?.details };
    return { ok: true, data: answer };
  },
  classify(status, body) {
    const error = (body as { errors?: { id?: string; details?: string }[] } | undefined)?.errors?.[0];
    if (!error) return undefined;
    // A 429 that speaks of usage is our month's allowance spent; any other 429 is a throttle (common rules).
    if (error.id === 'restricted_account' || (status === 429 && /usage|monthly|plan|credits?/i.test(error.details ?? ''))) {
      return normalizeUpstream.creditsExhausted(hunter.label, status);
    }
    if (status === 401 || error.id === 'authentication_failed' || error.id === 'no_user') return undefined;
    // 408 and 429 keep the common rules: a timeout, and a throttle with the vendor's Retry-After.
    if (status >= 400 && status < 500 && status !== 408 && status !== 429) {
      return new ApiError('PROVIDER_ERROR', `${hunter.label} rejected the request (HTTP ${status}, ${error.id ?? 'error'}): ${(error.details ?? '').slice(0, 300)}`, {
        status: status as ContentfulStatusCode,
      });
    }
    return undefined;
  },
};

/**
 * People Data Labs (api.peopledatalabs.com/v5): the key is the `X-Api-Key` header; a person enrichment answers
 * `{status: 200, likelihood, data}`, a search `{status: 200, data: [...], total, scroll_token}`, a company
 * enrichment the record itself with `status: 200`. A failure is `{status, error: {type, message}}`; our credits
 * running out is HTTP 402 `payment_required`, which the common rules already make 503.
 */
export const peopleDataLabs: Vendor = {
  id: 'peopledatalabs',
  label: 'The People Data Labs provider',
  keySetting: 'PEOPLEDATALABS_API_KEY',
  baseUrlSetting: 'PEOPLEDATALABS_BASE_URL',
  defaultBaseUrl: 'https://api.peopledatalabs.com',
  authenticate: (key) => ({ headers: { 'x-api-key': key } }),
  read(body) {
    const answer = body as { status?: unknown; error?: { message?: string } } | null;
    if (!answer || answer.error || answer.status !== 200) return { ok: false, message: answer?.error?.message };
    return { ok: true, data: answer };
  },
  classify(status, body) {
    const error = (body as { error?: { type?: string; message?: string } } | undefined)?.error;
    // PDL answers "no record matches" as HTTP 404: the caller's lookup found nothing, with the vendor's words.
    if (status === 404 && error) {
      return new ApiError('PROVIDER_ERROR', `${peopleDataLabs.label} rejected the request (HTTP 404, ${error.type ?? 'not_found'}): ${(error.message ?? '').slice(0, 300)}`, { status: 404 });
    }
    return undefined;
  },
};

/**
 * The Companies API (api.thecompaniesapi.com/v2): the key travels as `Authorization: Basic <key>`; a success is
 * the payload itself (`{companies, meta}` for lists); failures come as non-2xx statuses only, which the common
 * rules classify (402 is our credits running out).
 */
export const theCompaniesApi: Vendor = {
  id: 'thecompaniesapi',
  label: 'The Companies API provider',
  keySetting: 'THECOMPANIESAPI_API_KEY',
  baseUrlSetting: 'THECOMPANIESAPI_BASE_URL',
  defaultBaseUrl: 'https://api.thecompaniesapi.com',
  authenticate: (key) => ({ headers: { authorization: `Basic ${key}` } }),
  read: (body) => (typeof body === 'object' && body !== null ? { ok: true, data: body } : { ok: false }),
};
