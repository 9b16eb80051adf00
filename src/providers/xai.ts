import { normalizeUpstream } from './normalize';
import type { Vendor } from '../core/vendor';

type XaiError = { code?: unknown; error?: unknown } | undefined;
const errorText = (body: unknown): string => {
  const error = (body as XaiError)?.error;
  return typeof error === 'string' ? error : '';
};

/**
 * xAI's REST API (api.x.ai), the maker of Grok, the platform's own assistant: the key is a bearer token; a
 * `/v1/responses` answer is the response object itself, whose `status` says whether Grok finished. Errors are
 * `{code, error}` with the HTTP status (docs.x.ai "Debugging Errors"). Our team's credits or monthly spending
 * limit running out is told in the error text, on a 429 or a 403; a 400 may also be our key being wrong.
 */
export const xai: Vendor = {
  id: 'xai',
  label: 'The xAI (Grok) provider',
  keySetting: 'XAI_API_KEY',
  baseUrlSetting: 'XAI_BASE_URL',
  defaultBaseUrl: 'https://api.x.ai',
  authenticate: (key) => ({ headers: { authorization: `Bearer ${key}` } }),
  read(body) {
    const answer = body as { status?: unknown; incomplete_details?: { reason?: unknown } | null; error?: { message?: unknown } | null } | null;
    if (answer?.status === 'completed') return { ok: true, data: answer };
    const reason = answer?.error?.message ?? answer?.incomplete_details?.reason;
    return { ok: false, message: typeof reason === 'string' ? `Grok did not finish (${reason})` : 'Grok did not finish its answer' };
  },
  classify(status, body) {
    const text = errorText(body);
    // "Your team ... has either used all available credits or reached its monthly spending limit."
    if ((status === 429 || status === 403) && /credits|spending limit/i.test(text)) return normalizeUpstream.creditsExhausted(xai.label, status);
    // "An incorrect API key is supplied" is a 400 (docs.x.ai): our credential, not the caller's request.
    if (status === 400 && /api key/i.test(text)) {
      console.error(JSON.stringify({ level: 'error', provider: xai.label, upstreamStatus: status, body: text.slice(0, 500), note: 'our upstream credential was refused' }));
      return normalizeUpstream.credentialsRefused(xai.label, status);
    }
    return undefined;
  },
};
