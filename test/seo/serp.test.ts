import { afterEach, describe, expect, it, vi } from 'vitest';
import { FAKE_DATAFORSEO, receivedBy } from '../fakes/dataforseo';
import serp from '../fixtures/dataforseo/serp-google-organic.json';
import { funded, json, tool, wallet } from '../support/api';
import { watchCacheStores } from '../support/cache';

afterEach(() => {
  vi.restoreAllMocks();
});

const SERP_PATH = '/v3/serp/google/organic/live/advanced';

const unique = () => crypto.randomUUID().slice(0, 8);

describe('POST /serp', () => {
  it.each(['/serp', '/v1/data/seo/serp'])('answers live results at %s: organic listings and SERP features in result[0].items', async (path) => {
    const account = await funded(100, 'payg');
    const response = await tool(account.key, path, { keyword: `best running shoes ${unique()}` });
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body.data).toEqual({ result: serp });
    const items = body.data.result[0].items;
    expect(items.find((item: { type: string }) => item.type === 'organic')).toMatchObject({ rank_group: 1, title: expect.any(String), url: expect.any(String), description: expect.any(String) });
    expect(items.map((item: { type: string }) => item.type)).toEqual(expect.arrayContaining(['featured_snippet', 'people_also_ask', 'local_pack']));
  });

  it('sends one task with the defaults to the organic live endpoint, with HTTP Basic credentials', async () => {
    const account = await funded(100, 'payg');
    const marker = unique();
    await tool(account.key, '/serp', { keyword: `running ${marker}` });
    const { count, last } = await receivedBy(SERP_PATH, marker);
    expect(count).toBe(1);
    expect(last?.task).toEqual({ keyword: `running ${marker}`, location_code: 2840, language_code: 'en', device: 'desktop', depth: 10 });
    expect(last?.authorization).toBe(`Basic ${btoa(`${FAKE_DATAFORSEO.login}:${FAKE_DATAFORSEO.password}`)}`);
  });

  it('passes location, language, device and depth through, and escapes % and + which the upstream would decode', async () => {
    const account = await funded(100, 'payg');
    const marker = unique();
    await tool(account.key, '/serp', { keyword: `c++ 100% ${marker}`, location_code: 2826, language_code: 'fr', device: 'mobile', depth: 30 });
    const { last } = await receivedBy(SERP_PATH, marker);
    expect(last?.task).toEqual({ keyword: `c%2B%2B 100%25 ${marker}`, location_code: 2826, language_code: 'fr', device: 'mobile', depth: 30 });
  });

  describe('billing: 0.45 cents per results page of 10, x5 with search operators', () => {
    it.each([
      [10, 'running shoes', 0.45],
      [20, 'running shoes', 0.9],
      [100, 'running shoes', 4.5],
      [700, 'running shoes', 31.5],
      [10, 'site:nike.com running shoes', 2.25],
      [10, 'running shoes inurl:review', 2.25],
      [10, 'running shoes filetype:pdf', 2.25],
      [30, '-site:pinterest.com running shoes', 6.75],
    ])('depth %i with "%s" costs %f cents', async (depth, keyword, cents) => {
      const account = await funded(100, 'payg');
      const body = await json(await tool(account.key, '/serp', { keyword: `${keyword} ${unique()}`, depth }));
      expect(body.meta.costCents).toBe(cents);
      expect(body.meta.purchasedBalanceCents).toBeCloseTo(100 - cents, 6);
      expect((await wallet(account.organizationId)).purchasedBalanceCents).toBeCloseTo(100 - cents, 6);
    });

    it('does not take a word that merely ends in "site" for an operator', async () => {
      const account = await funded(100, 'payg');
      const body = await json(await tool(account.key, '/serp', { keyword: `website: builders ${unique()}` }));
      expect(body.meta.costCents).toBe(0.45);
    });
  });

  it('answers an identical query within the hour from cache, without asking upstream again', async () => {
    const account = await funded(100, 'payg');
    const marker = unique();
    const stores = watchCacheStores();
    const first = await json(await tool(account.key, '/serp', { keyword: `cached ${marker}` }));
    await stores.stored(1);
    const second = await json(await tool(account.key, '/v1/data/seo/serp', { keyword: `cached ${marker}`, depth: 10, device: 'desktop' }));
    expect(first.meta.cached).toBe(false);
    expect(second.meta.cached).toBe(true);
    expect(second.data).toEqual(first.data);
    expect((await receivedBy(SERP_PATH, marker)).count).toBe(1);
  });
});
