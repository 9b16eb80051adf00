import type { ProviderResult } from '../core/operation';
import { clock } from '../core/clock';
import { canonicalize, sha256Hex } from '../core/digest';

/**
 * Answers of successful upstream calls, kept in the Workers cache for an operation's freshness window.
 * Entries are scoped to the organization: a shared entry would tell one tenant, through
 * `meta.cached`, what another had just asked. Failures are never stored.
 *
 * Every call that accepts a cached answer (a freshness window over 0: scrape's `maxAge`, an operation's
 * own window) looks its input up and, on a miss, stores the answer off the response path: on Cloudflare a
 * repeat usually lands on another isolate, so nothing an isolate remembers can tell it that an input was
 * never stored. The price is the same either way, so this changes what is fetched, never what is billed.
 * Nothing about an input is kept in the isolate's memory.
 */
export interface CacheEntryKey {
  organizationId: string;
  operation: string;
  input: unknown;
}

const STORED_AT = 'x-sluice-stored-at';

/** An answer looked up in the cache: its entry's address, and what was stored there if it is fresh enough for the call. */
export interface CacheLookup {
  url: string;
  freshnessMs: number;
  hit: ProviderResult | undefined;
}

/**
 * Begins the lookup of a call that accepts a cached answer (freshness window over 0), or answers undefined.
 * The pipeline begins it before the gate's `meter` and reads it after: deployed, the lookup and the gate are
 * two hops, and they travel at once. A lookup never read (the gate refused the call) is dropped, its failure
 * with it.
 */
export function lookUpAnswer(key: CacheEntryKey, freshnessMs: number): Promise<CacheLookup> | undefined {
  if (freshnessMs <= 0) return undefined;
  const lookup = (async () => {
    const url = await cacheUrl(key);
    return { url, freshnessMs, hit: await cachedAnswer(url, freshnessMs) };
  })();
  lookup.catch(() => undefined);
  return lookup;
}

/** The answer of a lookup when it found one, else from `compute` (then stored, off the response path); no lookup, no cache. */
export async function answerFromCache(
  lookup: Promise<CacheLookup> | undefined,
  waitUntil: (promise: Promise<unknown>) => void,
  compute: () => Promise<ProviderResult>,
): Promise<{ result: ProviderResult; cached: boolean }> {
  if (!lookup) return { result: await compute(), cached: false };
  const { url, freshnessMs, hit } = await lookup;
  if (hit) return { result: hit, cached: true };
  const result = await compute();
  waitUntil(
    storeAnswer(url, result, freshnessMs).catch((reason: unknown) =>
      console.error(JSON.stringify({ level: 'error', note: 'answer not cached', error: String(reason) })),
    ),
  );
  return { result, cached: false };
}

async function cachedAnswer(url: string, freshnessMs: number): Promise<ProviderResult | undefined> {
  const hit = await caches.default.match(url);
  if (!hit) return undefined;
  // An entry may have been stored for a longer window than this call accepts (scrape's maxAge).
  if (clock.now() - Number(hit.headers.get(STORED_AT)) > freshnessMs) return undefined;
  return (await hit.json()) as ProviderResult;
}

async function storeAnswer(url: string, result: ProviderResult, freshnessMs: number): Promise<void> {
  const response = new Response(JSON.stringify(result), {
    headers: {
      'content-type': 'application/json',
      'cache-control': `max-age=${Math.max(1, Math.ceil(freshnessMs / 1000))}`,
      [STORED_AT]: String(clock.now()),
    },
  });
  await caches.default.put(url, response);
}

/**
 * Inputs whose canonical JSON is at most this long are written out in their entry's address; longer ones are
 * addressed by its SHA-256. Most inputs are a domain or a query: written out, their address costs no digest
 * (about 7 µs of CPU a call for the digest and its await, against under 1 µs, measured in a loop in workerd).
 */
export const WRITTEN_OUT_CHARS = 256;

/**
 * The entry's address, from the canonical input (keys sorted, so field order never matters): written out
 * (`i/`, URL-encoded, one path segment) when short, else its SHA-256 (`h/`), so the two never meet.
 */
function cacheUrl(key: CacheEntryKey): string | Promise<string> {
  const canonical = JSON.stringify(canonicalize(key.input));
  const entries = `https://response-cache.sluice.invalid/${key.organizationId}/${key.operation}`;
  if (canonical.length <= WRITTEN_OUT_CHARS) return `${entries}/i/${encodeURIComponent(canonical)}`;
  return sha256Hex(canonical).then((digest) => `${entries}/h/${digest}`);
}
