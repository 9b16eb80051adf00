import type { SettingName } from '../core/config';
import type { ProviderCall } from '../operations/types';
import { normalizeUpstream } from './normalize';

type Setting = SettingName;

/** A RapidAPI-style vendor: key and host headers, JSON answers shaped `{ success, message, data }`. */
export interface RapidApiVendor {
  label: string;
  keySetting: Setting;
  hostSetting: Setting;
  baseUrlSetting: Setting;
}

interface VendorAnswer {
  success?: unknown;
  message?: unknown;
  data?: unknown;
}

/** A GET operation of a RapidAPI vendor: the validated input becomes the query string of `path`. */
export function rapidApiGet<Input extends Record<string, unknown>>(vendor: RapidApiVendor, path: string): ProviderCall<Input> {
  return async (input, { env, signal }) => {
    const key = env[vendor.keySetting] as string | undefined;
    const host = env[vendor.hostSetting] as string | undefined;
    if (!key || !host) {
      const missing = [key ? undefined : vendor.keySetting, host ? undefined : vendor.hostSetting].filter((name) => name !== undefined);
      throw normalizeUpstream.unavailable(vendor.label, missing);
    }

    const base = (env[vendor.baseUrlSetting] as string | undefined) || `https://${host}`;
    const url = new URL(path, base.endsWith('/') ? base : `${base}/`);
    for (const [name, value] of Object.entries(input)) if (value !== undefined) url.searchParams.set(name, String(value));

    const response = await normalizeUpstream.fetch(vendor.label, url, {
      headers: { 'x-rapidapi-key': key, 'x-rapidapi-host': host, accept: 'application/json' },
      signal,
    });
    if (!response.ok) throw await normalizeUpstream.fromStatus(vendor.label, response);
    const body = (await normalizeUpstream.json(vendor.label, response, signal)) as VendorAnswer;
    const message = typeof body.message === 'string' ? body.message : undefined;
    if (body.success !== true) throw normalizeUpstream.rejected(vendor.label, message);
    return { data: body.data ?? null, ...(message !== undefined ? { message } : {}) };
  };
}
