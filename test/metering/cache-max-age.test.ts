import { afterEach, describe, expect, it, vi } from 'vitest';
import { clock } from '../../src/core/clock';
import { lastReceivedBy } from '../fakes/firecrawl';
import { funded, json, tool } from '../support/api';
import { watchCacheStores } from '../support/cache';

const DEFAULT_MAX_AGE = 172_800_000;

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the response cache honours the current call's maxAge", () => {
  it('fetches afresh for a maxAge of one minute when the answer stored under the default maxAge is two minutes old', async () => {
    const account = await funded(10, 'payg');
    // A page no other test asks for, so the fake's record of it is this test's own.
    const url = `https://acme.example/${crypto.randomUUID()}`;
    const stores = watchCacheStores();
    const first = await json(await tool(account.key, '/scrape', { url }));
    expect(first.meta.cached).toBe(false);
    expect((await lastReceivedBy('/v2/scrape', url))?.body).toMatchObject({ maxAge: DEFAULT_MAX_AGE });
    await stores.stored(1);

    vi.spyOn(clock, 'now').mockReturnValue(Date.now() + 2 * 60_000);

    // The default maxAge of two days still takes the two-minute-old answer: the entry is there.
    const underDefault = await json(await tool(account.key, '/scrape', { url }));
    expect(underDefault.meta).toMatchObject({ cached: true, costCents: 0.1 });
    expect(underDefault.data.result[0].metadata.scrapeId).toBe(first.data.result[0].metadata.scrapeId);

    // A one-minute maxAge refuses it: Firecrawl is asked again (with that maxAge), and the call is charged.
    const underMinute = await json(await tool(account.key, '/scrape', { url, maxAge: 60_000 }));
    expect(underMinute.success).toBe(true);
    expect(underMinute.meta).toMatchObject({ cached: false, costCents: 0.1 });
    expect(underMinute.data.result[0].metadata.scrapeId).not.toBe(first.data.result[0].metadata.scrapeId);
    expect((await lastReceivedBy('/v2/scrape', url))?.body).toMatchObject({ maxAge: 60_000 });
  });
});
