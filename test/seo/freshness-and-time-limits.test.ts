import { afterEach, describe, expect, it, vi } from 'vitest';
import { clock } from '../../src/core/clock';
import { FAKE_DATAFORSEO } from '../fakes/dataforseo';
import { expectReleasedUncharged, funded, json, tool } from '../support/api';
import { watchCacheStores } from '../support/cache';
import { answerAfter } from '../support/time-limits';

const unique = () => crypto.randomUUID().slice(0, 8);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
  vi.restoreAllMocks();
});

function later(ms: number) {
  const at = realNow() + ms;
  clock.now = () => at;
}

async function receivedCount(path: string, marker: string): Promise<number> {
  return (await json(await fetch(`${FAKE_DATAFORSEO.baseUrl}/__received?path=${encodeURIComponent(path)}&marker=${encodeURIComponent(marker)}`))).count;
}

/** The day-fresh operations, each with a body carrying `marker` and the upstream path it reaches. */
const DAY_FRESH: [string, (marker: string) => unknown, string][] = [
  ['/keyword-ideas', (marker) => ({ keywords: [marker] }), '/v3/dataforseo_labs/google/keyword_ideas/live'],
  ['/keyword-overview', (marker) => ({ keywords: [marker] }), '/v3/dataforseo_labs/google/keyword_overview/live'],
  ['/keyword-gap', (marker) => ({ target1: `${marker}.com`, target2: 'rival.com' }), '/v3/dataforseo_labs/google/domain_intersection/live'],
  ['/ranked-keywords', (marker) => ({ target: `${marker}.com` }), '/v3/dataforseo_labs/google/ranked_keywords/live'],
  ['/competitors', (marker) => ({ target: `${marker}.com` }), '/v3/dataforseo_labs/google/competitors_domain/live'],
  ['/referring-domains', (marker) => ({ target: `${marker}.com` }), '/v3/backlinks/referring_domains/live'],
  ['/backlink-gap', (marker) => ({ targets: [`${marker}.com`] }), '/v3/backlinks/domain_intersection/live'],
  ['/backlinks-summary', (marker) => ({ target: `${marker}.com` }), '/v3/backlinks/summary/live'],
  ['/domain-overview', (marker) => ({ target: `${marker}.com` }), '/v3/dataforseo_labs/google/domain_rank_overview/live'],
  ['/tech-search', (marker) => ({ technologies: [marker] }), '/v3/domain_analytics/technologies/domains_by_technology/live'],
  ['/ai-visibility', (marker) => ({ keywords: [marker] }), '/v3/ai_optimization/llm_mentions/top_mentioned_domains/live'],
];

describe('freshness of SEO answers', () => {
  it('serp answers from cache for an hour, then asks again', async () => {
    const account = await funded(100, 'payg');
    const marker = unique();
    const body = { keyword: marker };
    const stores = watchCacheStores();
    await tool(account.key, '/serp', body);
    await stores.stored(1);
    later(59 * MINUTE);
    expect((await json(await tool(account.key, '/serp', body))).meta.cached).toBe(true);
    later(61 * MINUTE);
    expect((await json(await tool(account.key, '/serp', body))).meta.cached).toBe(false);
    expect(await receivedCount('/v3/serp/google/organic/live/advanced', marker)).toBe(2);
  });

  it.each(DAY_FRESH)('%s answers from cache for a day, at the same price, then asks again', async (path, bodyOf, upstream) => {
    const account = await funded(100, 'payg');
    const marker = unique();
    const stores = watchCacheStores();
    const fresh = await json(await tool(account.key, path, bodyOf(marker)));
    await stores.stored(1);
    later(23 * HOUR);
    const cached = await json(await tool(account.key, path, bodyOf(marker)));
    expect([cached.meta.cached, cached.meta.costCents]).toEqual([true, fresh.meta.costCents]);
    expect(cached.data).toEqual(fresh.data);
    later(25 * HOUR);
    expect((await json(await tool(account.key, path, bodyOf(marker)))).meta.cached).toBe(false);
    expect(await receivedCount(upstream, marker)).toBe(2);
  });
});

describe('time limits', () => {
  it.each([
    ['a model answer', '/chatgpt-api-answer', 95_000, 'user_prompt', '/v3/ai_optimization/chat_gpt/llm_responses/live'],
    ['an SEO tool', '/serp', 60_000, 'keyword', '/v3/serp/google/organic/live/advanced'],
  ])('lets %s (%s) wait %i ms for its upstream and no longer: answered 1 ms before, 502 uncharged at the limit', async (_, path, limitMs, field, upstream) => {
    const attempt = async (elapsedMs: number) => {
      const marker = `slow ${unique()}`;
      return answerAfter({ path, body: { [field]: marker }, upstreamHasIt: async () => (await receivedCount(upstream, marker)) > 0, elapsedMs });
    };
    expect((await attempt(limitMs - 1)).status).toBe(200);
    const cut = await attempt(limitMs);
    expect(cut.status).toBe(502);
    expect(cut.body.error).toMatchObject({ code: 'PROVIDER_ERROR', message: expect.stringMatching(/timed out/) });
    await expectReleasedUncharged(cut.organizationId, 100);
  });
});
