import type { SettingName } from '../core/config';
import type { ApiError } from '../core/errors';
import type { ProviderCall, ProviderContext } from '../core/operation';
import { normalizeUpstream } from './normalize';

/** What a vendor's 2xx answer means: its payload, or a failure told in the body (spec rule 1: 422). */
export type VendorReading = { ok: true; data: unknown; message?: string } | { ok: false; message?: string };

/**
 * One upstream vendor, declared as data plus the few functions its family needs. A family (RapidAPI
 * scrapers, Google APIs, Hunter, People Data Labs) supplies `authenticate`, `read` and, where its errors
 * are its own, `classify`; every operation of the vendor is then a table row (`VendorEndpoint`).
 */
export interface Vendor {
  /** Named in error messages: "The TikTok data provider failed: ...". */
  label: string;
  /** Our fixture and fake directory name, and the vendor's name in the catalog of decisions. */
  id: string;
  keySetting: SettingName;
  /** RapidAPI-style families need the vendor's host as a header; others leave it out. */
  hostSetting?: SettingName;
  baseUrlSetting: SettingName;
  /** Base URL when `baseUrlSetting` is unset and the family has no host to derive it from. */
  defaultBaseUrl?: string;
  /** Where the key goes: headers and/or query parameters. */
  authenticate(key: string, host: string | undefined): { headers?: Record<string, string>; query?: Record<string, string> };
  read(body: unknown): VendorReading;
  /** A vendor's own reading of a non-2xx answer (e.g. Google's 403 quotaExceeded); undefined: the common rules. */
  classify?(status: number, body: unknown): ApiError | undefined;
}

type Scalar = string | number | boolean;

/**
 * One vendor endpoint as data: the path, how our validated input becomes its parameters (renamed where the
 * vendor's names differ, fixed values it always needs), and whether the input travels as query or JSON body.
 */
export interface VendorEndpoint {
  method?: 'GET' | 'POST';
  /** Relative to the vendor's base URL: `user/info`, `v2/email-finder`, `` for the root. */
  path: string;
  /** Our field name → the vendor's parameter name. */
  rename?: Record<string, string>;
  /**
   * Parameters sent on every call (Google's `part`, a search `type`). Objects and arrays only travel in a
   * JSON body (POST): xAI's `tools: [{type: 'x_search'}]`.
   */
  fixed?: Record<string, Scalar | readonly object[] | object>;
  /** Input fields prefixed onto a vendor parameter: `{ tag: '#' }` makes a hashtag search query. */
  prefix?: Record<string, string>;
}

function settingOf(env: ProviderContext['env'], name: SettingName | undefined): string | undefined {
  if (!name) return undefined;
  const value = env[name] as string | undefined;
  return value ? value : undefined;
}

/** The vendor parameters of a call: fixed values, then the input, renamed and prefixed; absent fields left out. */
export function vendorParameters(endpoint: VendorEndpoint, input: Record<string, unknown>): Record<string, unknown> {
  const parameters: Record<string, unknown> = { ...endpoint.fixed };
  for (const [field, value] of Object.entries(input)) {
    if (value === undefined) continue;
    const prefix = endpoint.prefix?.[field];
    parameters[endpoint.rename?.[field] ?? field] = prefix !== undefined ? `${prefix}${String(value)}` : value;
  }
  return parameters;
}

/** The URL of an endpoint: the base keeps its own path (`.../youtube/v3`), the endpoint's path is added to it. */
export function endpointUrl(base: string, path: string): URL {
  return new URL(path.replace(/^\/+/, ''), base.endsWith('/') ? base : `${base}/`);
}

/** A call of one vendor endpoint: settings, authentication, the common failure rules, then the vendor's reading. */
export function vendorCall<Input extends Record<string, unknown>>(vendor: Vendor, endpoint: VendorEndpoint): ProviderCall<Input> {
  return async (input, { env, signal }) => {
    const key = settingOf(env, vendor.keySetting);
    const host = settingOf(env, vendor.hostSetting);
    if (!key || (vendor.hostSetting && !host)) {
      const missing = [key ? undefined : vendor.keySetting, vendor.hostSetting && !host ? vendor.hostSetting : undefined].filter((name) => name !== undefined);
      throw normalizeUpstream.unavailable(vendor.label, missing);
    }
    const base = settingOf(env, vendor.baseUrlSetting) ?? (host ? `https://${host}` : vendor.defaultBaseUrl);
    if (!base) throw normalizeUpstream.unavailable(vendor.label, [vendor.baseUrlSetting]);

    const url = endpointUrl(base, endpoint.path);
    const auth = vendor.authenticate(key, host);
    const parameters = vendorParameters(endpoint, input);
    const method = endpoint.method ?? 'GET';
    const headers: Record<string, string> = { accept: 'application/json', ...auth.headers };
    for (const [name, value] of Object.entries(auth.query ?? {})) url.searchParams.set(name, value);
    if (method === 'GET') {
      for (const [name, value] of Object.entries(parameters)) url.searchParams.set(name, String(value));
    } else {
      headers['content-type'] = 'application/json';
    }

    const response = await normalizeUpstream.fetch(vendor.label, url, {
      method,
      headers,
      ...(method === 'POST' ? { body: JSON.stringify(parameters) } : {}),
      signal,
    });
    if (!response.ok) {
      if (vendor.classify) {
        const text = await response.clone().text().catch(() => '');
        const own = vendor.classify(response.status, parseJson(text));
        if (own) throw own;
      }
      throw await normalizeUpstream.fromStatus(vendor.label, response);
    }
    const reading = vendor.read(await normalizeUpstream.json(vendor.label, response, signal));
    if (!reading.ok) throw normalizeUpstream.rejected(vendor.label, reading.message);
    return { data: reading.data, ...(reading.message !== undefined ? { message: reading.message } : {}) };
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
