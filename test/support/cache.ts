import { expect, vi } from 'vitest';

/**
 * Counts the answers the response cache stores from now on. A store happens off the response path, so a
 * test that asks again waits for it (`stored(n)`: the n-th store) instead of racing it. Restore with
 * `vi.restoreAllMocks()`.
 */
export function watchCacheStores(): { stored(count: number): Promise<void> } {
  const put = vi.spyOn(caches.default, 'put');
  return {
    stored: async (count) => {
      await vi.waitFor(() => expect(put).toHaveBeenCalledTimes(count));
      // Called is not stored: a lookup made before a put settles finds nothing.
      await Promise.all(put.mock.results.map((result) => result.value));
    },
  };
}
