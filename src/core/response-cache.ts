import type { ProviderResult } from '../operations/types';
import { clock } from './clock';
import { canonicalize, sha256Hex } from './digest';

/**
 * Answers of successful upstream calls, kept in the Workers cache for an operation's freshness window.
 * Entries are scoped to the organization: a shared entry would tell one tenant, through
 * `meta.cached`, what another had just asked. Failures are never stored.
 *
 * The cache is used only where it pays. Most inputs are asked once, and a lookup and a store cost more
 * than the whole rest of the pipeline, so an isolate neither looks up nor stores an input it has not
 * seen before; from the second time it sees one, it looks it up and stores the answer when it misses.
 * The price is the same either way, so this changes what is fetched, never what is billed.
 */
export interface CacheEntryKey {
  organizationId: string;
  operation: string;
  input: unknown;
}

const STORED_AT = 'x-sluice-stored-at';
/** Inputs this isolate has seen, by their canonical text; cleared when it grows past this many. */
const MAX_SEEN = 10_000;
const seen = new Set<string>();

/** The answer from the cache when the input is worth a lookup and it is there, else from `compute` (stored when asked before). */
export async function answerFromCache(
  key: CacheEntryKey,
  freshnessMs: number,
  waitUntil: (promise: Promise<unknown>) => void,
  compute: () => Promise<ProviderResult>,
): Promise<{ result: ProviderResult; cached: boolean }> {
  if (freshnessMs <= 0) return { result: await compute(), cached: false };
  const canonical = `${key.organizationId}/${key.operation}/${JSON.stringify(canonicalize(key.input))}`;
  if (!seen.has(canonical)) {
    if (seen.size >= MAX_SEEN) seen.clear();
    seen.add(canonical);
    return { result: await compute(), cached: false };
  }
  const url = await cacheUrl(key, canonical);
  const hit = await cachedAnswer(url, freshnessMs);
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

/** The entry's address: the SHA-256 of the canonical input (keys sorted, so field order never matters). */
async function cacheUrl(key: CacheEntryKey, canonical: string): Promise<string> {
  return `https://response-cache.sluice.invalid/${key.organizationId}/${key.operation}/${await sha256Hex(canonical)}`;
}
