import type { SettingName } from '../core/config';
import type { Vendor, VendorReading } from '../core/vendor';

/**
 * The RapidAPI family: the key and the vendor's host travel as `x-rapidapi-key` and `x-rapidapi-host`,
 * the base URL defaults to `https://<host>`, and each vendor answers in one of a few body shapes.
 * Settings are a triple per vendor: `<PREFIX>_API_KEY`, `<PREFIX>_API_HOST`, `<PREFIX>_BASE_URL`.
 */
export function rapidApiVendor(options: { id: string; label: string; settingsPrefix: string; read: Vendor['read'] }): Vendor {
  const setting = (suffix: string) => `${options.settingsPrefix}_${suffix}` as SettingName;
  return {
    id: options.id,
    label: options.label,
    keySetting: setting('API_KEY'),
    hostSetting: setting('API_HOST'),
    baseUrlSetting: setting('BASE_URL'),
    authenticate: (key, host) => ({ headers: { 'x-rapidapi-key': key, 'x-rapidapi-host': host ?? '' } }),
    read: options.read,
  };
}

type Body = Record<string, unknown> | null;
const asObject = (body: unknown): Body => (typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : null);
const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** The answer shapes RapidAPI vendors use, each a reading of a 2xx body. */
export const rapidApiAnswers = {
  /** `{ success, message, data }`: a failure says `success: false` (LinkedIn Data API). */
  successFlag(body: unknown): VendorReading {
    const answer = asObject(body);
    const message = typeof answer?.message === 'string' ? answer.message : undefined;
    if (answer?.success !== true) return { ok: false, message: text(message) };
    return { ok: true, data: answer.data ?? null, ...(message !== undefined ? { message } : {}) };
  },

  /** `{ code, msg, data }`: `code` 0 is success, anything else a failure told in `msg` (TikTok Scraper). */
  codeZero(body: unknown): VendorReading {
    const answer = asObject(body);
    if (answer?.code !== 0) return { ok: false, message: text(answer?.msg) };
    return { ok: true, data: answer.data ?? null };
  },

  /**
   * The whole body is the payload; a failure is a body whose `status` says so (`error`, `fail`, `false`) or
   * that carries only an `error` text (Twitter API45, Instagram Looter, Facebook Scraper3, YT-API).
   */
  whole(body: unknown): VendorReading {
    const answer = asObject(body);
    if (answer === null) return body === null ? { ok: false } : { ok: true, data: body };
    const status = answer.status;
    const failed = status === false || (typeof status === 'string' && /^(error|fail|failed)$/i.test(status)) || (text(answer.error) !== undefined && Object.keys(answer).length <= 3);
    if (failed) return { ok: false, message: text(answer.message) ?? text(answer.error) ?? text(answer.errorMessage) };
    return { ok: true, data: answer };
  },
};
