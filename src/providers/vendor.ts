import type { SettingName } from '../core/config';
import type { ProviderCall, ProviderContext } from '../core/operation';
import type { Vendor, VendorEndpoint } from '../core/vendor';
import { normalizeUpstream } from './normalize';

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
