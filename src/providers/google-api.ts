import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { SettingName } from '../core/config';
import { ApiError } from '../core/errors';
import { normalizeUpstream } from './normalize';
import type { Vendor } from '../core/vendor';

interface GoogleError {
  error?: { code?: number; message?: string; errors?: { reason?: string; domain?: string; message?: string }[] };
}

/** Our project's quota is spent: 503 UPSTREAM_CREDITS_EXHAUSTED, never the caller's 4xx. */
const QUOTA_REASONS = new Set(['quotaExceeded', 'dailyLimitExceeded', 'dailyLimitExceededUnreg']);
/** Our key refused or not enabled for the API: our fault, 502 with the detail logged only. */
const CREDENTIAL_REASONS = new Set(['keyInvalid', 'keyExpired', 'accessNotConfigured', 'ipRefererBlocked']);

/**
 * The Google API family (YouTube Data API v3): the key is the `key` query parameter, a 2xx body is the payload,
 * and errors are `{error: {code, message, errors: [{reason}]}}` whose `reason` tells our quota and our key
 * apart from the caller's mistakes (`videoNotFound`, `commentsDisabled`, `invalidParameter`).
 */
export function googleApiVendor(options: { id: string; label: string; keySetting: SettingName; baseUrlSetting: SettingName; defaultBaseUrl: string }): Vendor {
  return {
    ...options,
    authenticate: (key) => ({ query: { key } }),
    read: (body) => ({ ok: true, data: body }),
    classify(status, body) {
      const error = (body as GoogleError | undefined)?.error;
      if (!error) return undefined;
      const reason = error.errors?.[0]?.reason ?? '';
      if (QUOTA_REASONS.has(reason)) return normalizeUpstream.creditsExhausted(options.label, status);
      if (CREDENTIAL_REASONS.has(reason) || status === 401) {
        console.error(JSON.stringify({ level: 'error', provider: options.label, upstreamStatus: status, reason, note: 'our upstream credential was refused' }));
        return normalizeUpstream.credentialsRefused(options.label, status);
      }
      if (status >= 400 && status < 500 && status !== 408 && status !== 429) {
        const detail = error.message ? `: ${error.message.slice(0, 300)}` : '.';
        return new ApiError('PROVIDER_ERROR', `${options.label} rejected the request (HTTP ${status}${reason ? `, ${reason}` : ''})${detail}`, {
          status: status as ContentfulStatusCode,
        });
      }
      return undefined;
    },
  };
}
