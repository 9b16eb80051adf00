import { describe, expect, it } from 'vitest';
import { receivedBy } from '../fakes/dataforseo';
import { funded, json, tool } from '../support/api';

const unique = () => crypto.randomUUID().slice(0, 8);

describe('POST /domain-overview', () => {
  it.each(['/domain-overview', '/v1/data/seo/domain-overview'])('answers ranking keywords, traffic and its value by position bucket at %s', async (path) => {
    const account = await funded(100, 'payg');
    const body = await json(await tool(account.key, path, { target: `${unique()}.example.com` }));
    const organic = body.data.result[0].items[0].metrics.organic;
    expect(organic).toMatchObject({ count: expect.any(Number), etv: expect.any(Number), estimated_paid_traffic_cost: expect.any(Number), pos_1: expect.any(Number), pos_4_10: expect.any(Number) });
  });

  it('sends target, location and language, and costs 1 cent flat', async () => {
    const account = await funded(100, 'payg');
    const marker = unique();
    const body = await json(await tool(account.key, '/domain-overview', { target: `${marker}.com`, location_code: 2250, language_code: 'fr' }));
    expect((await receivedBy('/v3/dataforseo_labs/google/domain_rank_overview/live', marker)).last?.task).toEqual({ target: `${marker}.com`, location_code: 2250, language_code: 'fr' });
    expect(body.meta.costCents).toBe(1);
  });
});

describe('POST /tech-search', () => {
  it.each(['/tech-search', '/v1/data/seo/tech-search'])('answers domain, domain rank, country and last visit per row at %s', async (path) => {
    const account = await funded(100, 'payg');
    const body = await json(await tool(account.key, path, { technologies: ['WordPress', unique()] }));
    for (const item of body.data.result[0].items) {
      expect(item).toMatchObject({ domain: expect.any(String), domain_rank: expect.any(Number), country_iso_code: expect.stringMatching(/^[A-Z]{2}$/), last_visited: expect.any(String) });
    }
  });

  it('sends the technologies by name, and costs 1 cent plus 0.2 per row returned: ten times a keyword row', async () => {
    const account = await funded(100, 'payg');
    const marker = unique();
    const body = await json(
      await tool(account.key, '/tech-search', { technologies: ['WordPress', marker], limit: 4, filters: [['country_iso_code', '=', 'US']], order_by: ['domain_rank,desc'] }),
    );
    expect((await receivedBy('/v3/domain_analytics/technologies/domains_by_technology/live', marker)).last?.task).toEqual({
      technologies: ['WordPress', marker],
      limit: 4,
      filters: [['country_iso_code', '=', 'US']],
      order_by: ['domain_rank,desc'],
    });
    expect(body.data.result[0].items).toHaveLength(4);
    expect(body.meta.costCents).toBe(1.8);
  });
});

describe('POST /ai-visibility', () => {
  it.each(['/ai-visibility', '/v1/data/seo/ai-visibility'])('answers aggregated_metrics by platform, location and language at %s', async (path) => {
    const account = await funded(100, 'payg');
    const body = await json(await tool(account.key, path, { targets: [`${unique()}.com`] }));
    const { aggregated_metrics } = body.data.result[0];
    for (const dimension of ['platform', 'location', 'language']) {
      expect(aggregated_metrics[dimension][0]).toMatchObject({ key: expect.any(String), mentions: expect.any(Number), ai_search_volume: expect.any(Number) });
    }
    expect(body.data.result[0].items.length).toBeGreaterThan(0);
  });

  it('sends domains and keywords as one target list to the LLM mentions endpoint', async () => {
    const account = await funded(100, 'payg');
    const marker = unique();
    await tool(account.key, '/ai-visibility', { targets: [`${marker}.com`, 'rival.com'], keywords: ['crm software', '100% free crm'], limit: 20 });
    expect((await receivedBy('/v3/ai_optimization/llm_mentions/top_mentioned_domains/live', marker)).last?.task).toEqual({
      target: [{ domain: `${marker}.com` }, { domain: 'rival.com' }, { keyword: 'crm software' }, { keyword: '100%25 free crm' }],
      limit: 20,
    });
  });

  it('costs 18 cents flat, even when items is legitimately empty', async () => {
    const account = await funded(100, 'payg');
    const full = await json(await tool(account.key, '/ai-visibility', { keywords: [`crm ${unique()}`], limit: 1000 }));
    const empty = await json(await tool(account.key, '/ai-visibility', { keywords: [`empty ${unique()}`] }));
    expect(empty.success).toBe(true);
    expect(empty.data.result[0].items).toEqual([]);
    expect(empty.data.result[0].aggregated_metrics.total.mentions).toEqual(expect.any(Number));
    expect([full.meta.costCents, empty.meta.costCents]).toEqual([18, 18]);
  });
});
