import type { Env, SettingName } from '../core/config';
import type { Operation } from '../core/operation';
import type { Vendor } from '../core/vendor';
import { ApiError } from '../core/errors';
import { OPERATIONS } from '../operations';
import { basicAuthorization } from '../providers/dataforseo';
import { networkError } from '../providers/normalize';
import { endpointUrl } from '../providers/vendor';

/** One credential a vendor needs: the field the workspace fills in, and the setting it stands in for on its calls. */
export interface CredentialField {
  name: string;
  setting: SettingName;
  /** Shown as typed (a login) or never shown again (a key, a password). */
  secret: boolean;
  description: string;
  /** Sent encoded (HTTP Basic's base64 of UTF-8), so any text goes; a field sent as it is must be printable ASCII. */
  encoded?: true;
}

export type CheckOutcome = { status: 'ok' } | { status: 'rejected'; reason: string } | { status: 'unreachable'; reason: string };

/**
 * A vendor a workspace can bring its own account of (issue 33): its credential fields, the operations it
 * serves, the settings a call through it gets, and the vendor's cheapest authenticated call, which tells
 * whether it accepts the credentials.
 */
export interface ConnectableVendor {
  slug: string;
  label: string;
  fields: CredentialField[];
  /** The secret the hint ("…4f2a") is taken from. */
  hintField: string;
  /** Settings besides the credentials (the web provider a Firecrawl account is for). */
  settings?: Partial<Record<SettingName, string>>;
  operations: Operation[];
  check(env: Env, credentials: Record<string, string>, signal: AbortSignal): Promise<CheckOutcome>;
}

const CHECK_TIME_LIMIT_MS = 10_000;

/**
 * What an answer to a credential check means: the vendor refusing the credentials (401/403, or its own words for
 * it) is `rejected` with its reason; a 5xx is `unreachable`; anything else (a 2xx, a 404 for the probe, a 429 or
 * 402 of an account that is throttled or spent) means the vendor knew the credentials.
 */
async function outcomeOf(response: Response, refusedInBody?: (status: number, body: unknown) => boolean): Promise<CheckOutcome> {
  const text = await response.text().catch(() => '');
  const body = parseJson(text);
  if (response.status === 401 || response.status === 403 || refusedInBody?.(response.status, body)) {
    return { status: 'rejected', reason: `the vendor refused the credentials (HTTP ${response.status}${reasonOf(body) ? `: ${reasonOf(body)}` : ''})` };
  }
  if (response.status >= 500) return { status: 'unreachable', reason: `the vendor answered HTTP ${response.status}` };
  return { status: 'ok' };
}

async function probe(url: URL | string, init: RequestInit, signal: AbortSignal, refusedInBody?: (status: number, body: unknown) => boolean): Promise<CheckOutcome> {
  const limit = AbortSignal.any([signal, AbortSignal.timeout(CHECK_TIME_LIMIT_MS)]);
  let response: Response;
  try {
    response = await fetch(url, { ...init, signal: limit });
  } catch (error) {
    return { status: 'unreachable', reason: limit.aborted ? 'the vendor did not answer in time' : networkError(error) };
  }
  return outcomeOf(response, refusedInBody);
}

/** The vendor's own words for a failure, from the shapes the vendors here use. */
function reasonOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const answer = body as { message?: unknown; messages?: unknown; error?: unknown; status_message?: unknown; errors?: { details?: unknown }[] };
  const candidates = [answer.message, answer.messages, answer.status_message, typeof answer.error === 'object' && answer.error ? (answer.error as { message?: unknown }).message : answer.error, answer.errors?.[0]?.details];
  const found = candidates.find((candidate): candidate is string => typeof candidate === 'string' && candidate !== '');
  return found?.slice(0, 300);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const setting = (env: Env, name: SettingName): string | undefined => (env[name] as string | undefined) || undefined;

/**
 * A vendor of the registry's table rows (one key): its operations are the rows that name it. `checkPath` is
 * relative to the vendor's base URL and may carry the query its documentation requires.
 */
function tableVendor(vendor: Vendor, checkPath: string, description: string): ConnectableVendor {
  const operations = OPERATIONS.filter((operation) => operation.upstream?.vendor.id === vendor.id);
  return {
    slug: vendor.id,
    label: vendor.label,
    fields: [{ name: 'apiKey', setting: vendor.keySetting, secret: true, description }],
    hintField: 'apiKey',
    operations,
    check(env, credentials, signal) {
      const host = vendor.hostSetting ? setting(env, vendor.hostSetting) : undefined;
      const base = setting(env, vendor.baseUrlSetting) ?? (host ? `https://${host}` : vendor.defaultBaseUrl);
      if (!base) return Promise.resolve({ status: 'unreachable', reason: `this installation does not reach ${vendor.label} (${vendor.baseUrlSetting} unset)` });
      const url = endpointUrl(base, checkPath);
      const auth = vendor.authenticate(credentials.apiKey!, host);
      for (const [name, value] of Object.entries(auth.query ?? {})) url.searchParams.set(name, value);
      return probe(url, { headers: { accept: 'application/json', ...auth.headers } }, signal, (status, body) => vendor.classify?.(status, body)?.upstream?.kind === 'credentials_refused');
    },
  };
}

const vendorOf = (id: string): Vendor => OPERATIONS.find((operation) => operation.upstream?.vendor.id === id)!.upstream!.vendor;

/** The vendors a connection can be made to, by slug. */
export const CONNECTABLE_VENDORS: readonly ConnectableVendor[] = [
  {
    slug: 'dataforseo',
    label: 'DataForSEO',
    fields: [
      { name: 'login', setting: 'DATAFORSEO_LOGIN', secret: false, description: 'The API login (app.dataforseo.com/api-access).', encoded: true },
      { name: 'password', setting: 'DATAFORSEO_PASSWORD', secret: true, description: 'The API password.', encoded: true },
    ],
    hintField: 'password',
    operations: OPERATIONS.filter((operation) => operation.platform === 'seo'),
    check(env, credentials, signal) {
      const base = (setting(env, 'DATAFORSEO_BASE_URL') ?? 'https://api.dataforseo.com').replace(/\/+$/, '');
      // The account's own figures: authenticated, and free.
      return probe(`${base}/v3/appendix/user_data`, { headers: { authorization: basicAuthorization(credentials.login!, credentials.password!), accept: 'application/json' } }, signal);
    },
  },
  {
    slug: 'firecrawl',
    label: 'Firecrawl',
    fields: [{ name: 'apiKey', setting: 'FIRECRAWL_API_KEY', secret: true, description: 'An API key (fc-...) of the Firecrawl team.' }],
    hintField: 'apiKey',
    settings: { WEB_PROVIDER: 'firecrawl' },
    operations: OPERATIONS.filter((operation) => operation.platform === 'web'),
    check(env, credentials, signal) {
      const base = setting(env, 'FIRECRAWL_BASE_URL') ?? 'https://api.firecrawl.dev';
      // The team's remaining credits: authenticated, and free.
      return probe(endpointUrl(base, 'v2/team/credit-usage'), { headers: { authorization: `Bearer ${credentials.apiKey}`, accept: 'application/json' } }, signal);
    },
  },
  tableVendor(vendorOf('hunter'), 'v2/account', 'A Hunter API key (hunter.io/api-keys).'),
  tableVendor(vendorOf('peopledatalabs'), 'v5/autocomplete', 'A People Data Labs API key.'),
  // i18nRegions.list: 1 quota unit, the least a Data API call costs; a wrong key is 400 keyInvalid.
  tableVendor(vendorOf('youtube-data-api'), 'i18nRegions?part=snippet', 'A YouTube Data API v3 key of a Google Cloud project (console.cloud.google.com/apis/credentials).'),
  // GET /v1/api-key describes the key itself: free; a wrong key is 400 "Incorrect API key provided".
  tableVendor(vendorOf('xai'), 'v1/api-key', 'An xAI API key (xai-..., console.x.ai).'),
  // GET /v2/user, the token's user: free; a wrong token is 401 tokenNotFound.
  tableVendor(vendorOf('thecompaniesapi'), 'v2/user', 'An API token of The Companies API (thecompaniesapi.com/settings/api-tokens).'),
  ...['linkedin-data-api', 'tiktok-scraper7', 'twitter-api45', 'instagram-looter2', 'facebook-scraper3', 'yt-api', 'twitter283'].map((id) =>
    // RapidAPI's gateway checks the key before the vendor sees the request: the vendor's root is enough.
    tableVendor(vendorOf(id), '', `A RapidAPI key subscribed to ${vendorOf(id).label.replace(/^The /, '')}.`),
  ),
];

export function connectableVendor(slug: string): ConnectableVendor | undefined {
  return CONNECTABLE_VENDORS.find((vendor) => vendor.slug === slug);
}

/** 404 ENDPOINT_NOT_FOUND for an operation the connection's vendor does not serve, naming the vendors that do. */
export function notServedBy(vendor: ConnectableVendor, operation: Operation): ApiError {
  const servers = CONNECTABLE_VENDORS.filter((candidate) => candidate.operations.includes(operation)).map((candidate) => candidate.slug);
  const who = servers.length > 0 ? `Connections to ${servers.join(', ')} serve it.` : 'No connectable vendor serves it: call it on /v1/data with Sluice’s own accounts.';
  return new ApiError('ENDPOINT_NOT_FOUND', `A ${vendor.slug} connection does not serve ${operation.platform}/${operation.name}. ${who}`);
}
