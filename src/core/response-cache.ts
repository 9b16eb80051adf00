import type { ProviderResult } from '../operations/types';
import { clock } from './clock';
import { sha256Hex } from './digest';

/**
 * Answers of successful upstream calls, kept in the Workers cache for an operation's freshness window.
 * Entries are scoped to the organization: a shared entry would tell one tenant, through
 * `meta.cached`, what another had just asked. Failures are never stored.
 */
export interface CacheEntryKey {
  organizationId: string;
  operation: string;
  input: unknown;
}

const STORED_AT = 'x-sluice-stored-at';

export async function cachedAnswer(key: CacheEntryKey, freshnessMs: number): Promise<ProviderResult | undefined> {
  if (freshnessMs <= 0) return undefined;
  const hit = await caches.default.match(await cacheUrl(key));
  if (!hit) return undefined;
  // An entry may have been stored for a longer window than this call accepts (scrape's maxAge).
  if (clock.now() - Number(hit.headers.get(STORED_AT)) > freshnessMs) return undefined;
  return (await hit.json()) as ProviderResult;
}

export async function storeAnswer(key: CacheEntryKey, result: ProviderResult, freshnessMs: number): Promise<void> {
  if (freshnessMs <= 0) return;
  const response = new Response(JSON.stringify(result), {
    headers: {
      'content-type': 'application/json',
      'cache-control': `max-age=${Math.max(1, Math.ceil(freshnessMs / 1000))}`,
      [STORED_AT]: String(clock.now()),
    },
  });
  await caches.default.put(await cacheUrl(key), response);
}

/** The entry's address: the SHA-256 of the canonical input (keys sorted, so field order never matters). */
async function cacheUrl(key: CacheEntryKey): Promise<string> {
  const canonical = JSON.stringify(canonicalize(key.input));
  return `https://response-cache.sluice.invalid/${key.organizationId}/${key.operation}/${await sha256Hex(canonical)}`;
}

function canonicalize(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonicalize);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .filter(([, entry]) => entry !== undefined)
        .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0))
        .map(([name, entry]) => [name, canonicalize(entry)]),
    );
  }
  return value;
}
