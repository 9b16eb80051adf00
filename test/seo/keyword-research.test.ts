import { describe, expect, it } from 'vitest';
import { receivedBy } from '../fakes/dataforseo';
import { funded, json, tool, wallet } from '../support/api';

const LABS = '/v3/dataforseo_labs/google';

const unique = () => crypto.randomUUID().slice(0, 8);

describe('POST /keyword-ideas', () => {
  it.each(['/keyword-ideas', '/v1/data/seo/keyword-ideas'])('answers ideas at %s with keyword_info and keyword_difficulty on each row', async (path) => {
    const account = await funded(100, 'payg');
    const body = await json(await tool(account.key, path, { keywords: [`running shoes ${unique()}`] }));
    const items = body.data.result[0].items;
    expect(items).toHaveLength(12);
    for (const item of items) {
      expect(item.keyword_info).toMatchObject({ search_volume: expect.any(Number), cpc: expect.any(Number), competition: expect.any(Number) });
      expect(item.keyword_properties.keyword_difficulty).toEqual(expect.any(Number));
    }
  });

  it('charges 1 cent plus 0.02 per row returned, not per row of limit', async () => {
    const account = await funded(100, 'payg');
    // limit 100 is quoted at 3 cents; the upstream returns the 12 rows it has.
    const body = await json(await tool(account.key, '/keyword-ideas', { keywords: [`shoes ${unique()}`] }));
    expect(body.data.result[0].items).toHaveLength(12);
    expect(body.meta.costCents).toBe(1.24);
    expect(body.meta.purchasedBalanceCents).toBe(98.76);
    expect(await wallet(account.organizationId)).toMatchObject({ purchasedBalanceCents: 98.76, heldCents: 0 });
  });

  it('charges for the rows of a smaller limit, and only the base when nothing comes back', async () => {
    const account = await funded(100, 'payg');
    expect((await json(await tool(account.key, '/keyword-ideas', { keywords: [`shoes ${unique()}`], limit: 5 }))).meta.costCents).toBe(1.1);
    expect((await json(await tool(account.key, '/keyword-ideas', { keywords: [`empty ${unique()}`] }))).meta.costCents).toBe(1);
  });

  it('sends the seeds with the whole row query: defaults, offset, filters and order_by', async () => {
    const account = await funded(100, 'payg');
    const marker = unique();
    const filters = [['keyword_info.search_volume', '>', 1000], 'and', ['keyword', 'like', '%trail%']];
    await tool(account.key, '/keyword-ideas', { keywords: [`trail ${marker}`, 'hiking boots'], offset: 20, filters, order_by: ['keyword_info.search_volume,desc'] });
    expect((await receivedBy(`${LABS}/keyword_ideas/live`, marker)).last?.task).toEqual({
      keywords: [`trail ${marker}`, 'hiking boots'],
      location_code: 2840,
      language_code: 'en',
      limit: 100,
      offset: 20,
      filters,
      order_by: ['keyword_info.search_volume,desc'],
    });
  });
});

describe('POST /keyword-overview', () => {
  it.each(['/keyword-overview', '/v1/data/seo/keyword-overview'])('answers one row of metrics per keyword at %s', async (path) => {
    const account = await funded(100, 'payg');
    const keywords = [`running shoes ${unique()}`, 'trail shoes', 'hiking boots'];
    const body = await json(await tool(account.key, path, { keywords }));
    const items = body.data.result[0].items;
    expect(items.map((item: { keyword: string }) => item.keyword)).toEqual(keywords);
    expect(items[0].keyword_info.monthly_searches.length).toBeGreaterThan(0);
    expect(items[0].keyword_properties.keyword_difficulty).toEqual(expect.any(Number));
    expect(items[0].serp_info.serp_item_types).toEqual(expect.any(Array));
  });

  it('costs 1 cent plus 0.01 per keyword: scales with the count', async () => {
    const account = await funded(100, 'payg');
    const costOf = async (count: number) => {
      const keywords = Array.from({ length: count }, (_, index) => `keyword ${index} ${unique()}`);
      return (await json(await tool(account.key, '/keyword-overview', { keywords }))).meta.costCents;
    };
    expect(await costOf(1)).toBe(1.01);
    expect(await costOf(10)).toBe(1.1);
    expect(await costOf(700)).toBe(8);
  });

  it('does not charge for keywords the upstream had no data on', async () => {
    const account = await funded(100, 'payg');
    const body = await json(await tool(account.key, '/keyword-overview', { keywords: [`empty ${unique()}`, 'unknown phrase'] }));
    expect(body.data.result[0].items).toEqual([]);
    expect(body.meta.costCents).toBe(1);
  });

  it('sends the keywords with location and language only', async () => {
    const account = await funded(100, 'payg');
    const marker = unique();
    await tool(account.key, '/keyword-overview', { keywords: [marker], location_code: 2276, language_code: 'de' });
    expect((await receivedBy(`${LABS}/keyword_overview/live`, marker)).last?.task).toEqual({ keywords: [marker], location_code: 2276, language_code: 'de' });
  });
});

describe('POST /keyword-gap', () => {
  it.each(['/keyword-gap', '/v1/data/seo/keyword-gap'])('answers both rankings side by side at %s; a missing element means no ranking', async (path) => {
    const account = await funded(100, 'payg');
    const body = await json(await tool(account.key, path, { target1: `${unique()}.example.com`, target2: 'competitor.com' }));
    const items = body.data.result[0].items;
    expect(items.length).toBeGreaterThan(0);
    for (const item of items) {
      expect(item.keyword_data.keyword_info.search_volume).toEqual(expect.any(Number));
      expect(item.second_domain_serp_element).toMatchObject({ rank_absolute: expect.any(Number), rank_group: expect.any(Number), url: expect.any(String) });
    }
    expect(items.some((item: { first_domain_serp_element: unknown }) => item.first_domain_serp_element === null)).toBe(true);
  });

  it('sends target1 and target2 with the gap filters, and charges by rows returned', async () => {
    const account = await funded(100, 'payg');
    const marker = unique();
    const filters = [['second_domain_serp_element.rank_absolute', '<=', 10], 'and', ['first_domain_serp_element.rank_absolute', '>', 20]];
    const body = await json(await tool(account.key, '/keyword-gap', { target1: `${marker}.com`, target2: 'competitor.com', limit: 4, filters }));
    expect((await receivedBy(`${LABS}/domain_intersection/live`, marker)).last?.task).toEqual({
      target1: `${marker}.com`,
      target2: 'competitor.com',
      location_code: 2840,
      language_code: 'en',
      limit: 4,
      filters,
    });
    expect(body.data.result[0].items).toHaveLength(4);
    expect(body.meta.costCents).toBe(1.08);
  });
});

describe('POST /ranked-keywords', () => {
  it.each(['/ranked-keywords', '/v1/data/seo/ranked-keywords'])('answers volume, difficulty and rank on each row at %s', async (path) => {
    const account = await funded(100, 'payg');
    const body = await json(await tool(account.key, path, { target: `${unique()}.example.com` }));
    for (const item of body.data.result[0].items) {
      expect(item.keyword_data.keyword_info.search_volume).toEqual(expect.any(Number));
      expect(item.keyword_data.keyword_properties.keyword_difficulty).toEqual(expect.any(Number));
      expect(item.ranked_serp_element.serp_item.rank_absolute).toEqual(expect.any(Number));
    }
  });

  it('takes a full page URL as target, and charges 1 cent plus 0.02 per row returned', async () => {
    const account = await funded(100, 'payg');
    const marker = unique();
    const target = `https://example.com/blog/${marker}?ref=1`;
    const body = await json(await tool(account.key, '/ranked-keywords', { target, order_by: ['keyword_data.keyword_info.search_volume,desc'] }));
    expect((await receivedBy(`${LABS}/ranked_keywords/live`, marker)).last?.task).toMatchObject({ target, order_by: ['keyword_data.keyword_info.search_volume,desc'] });
    expect(body.data.result[0].items).toHaveLength(10);
    expect(body.meta.costCents).toBe(1.2);
  });
});

describe('POST /competitors', () => {
  it.each(['/competitors', '/v1/data/seo/competitors'])('answers competitors at %s, the first row being the target itself', async (path) => {
    const account = await funded(100, 'payg');
    const target = `${unique()}.example.com`;
    const body = await json(await tool(account.key, path, { target }));
    const items = body.data.result[0].items;
    expect(items[0].domain).toBe(target);
    for (const item of items) {
      expect(item.intersections).toEqual(expect.any(Number));
      expect(item.metrics.organic).toMatchObject({ count: expect.any(Number), etv: expect.any(Number) });
    }
  });

  it('sends no offset, and charges per row returned', async () => {
    const account = await funded(100, 'payg');
    const marker = unique();
    const body = await json(await tool(account.key, '/competitors', { target: `${marker}.com`, limit: 3, order_by: ['intersections,desc'] }));
    expect((await receivedBy(`${LABS}/competitors_domain/live`, marker)).last?.task).toEqual({
      target: `${marker}.com`,
      location_code: 2840,
      language_code: 'en',
      limit: 3,
      order_by: ['intersections,desc'],
    });
    expect(body.meta.costCents).toBe(1.06);
  });
});
