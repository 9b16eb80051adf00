import { describe, expect, it } from 'vitest';
import { receivedBy } from '../fakes/dataforseo';
import summary from '../fixtures/dataforseo/backlinks-summary.json';
import { funded, json, tool, wallet } from '../support/api';

const unique = () => crypto.randomUUID().slice(0, 8);

describe('POST /referring-domains', () => {
  it.each(['/referring-domains', '/v1/data/seo/referring-domains'])('answers rank, backlinks, dates and spam score per referring domain at %s', async (path) => {
    const account = await funded(100, 'payg');
    const body = await json(await tool(account.key, path, { target: `${unique()}.example.com` }));
    const items = body.data.result[0].items;
    expect(items.length).toBe(12);
    for (const item of items) {
      expect(item).toMatchObject({ domain: expect.any(String), rank: expect.any(Number), backlinks: expect.any(Number), first_seen: expect.any(String), backlinks_spam_score: expect.any(Number) });
      expect(item).toHaveProperty('lost_date');
    }
  });

  it('sends exclude_internal_backlinks (default true) and no location or language; 2 cents plus 0.02 per row', async () => {
    const account = await funded(100, 'payg');
    const marker = unique();
    const body = await json(await tool(account.key, '/referring-domains', { target: `https://${marker}.example.com/page`, limit: 5, offset: 2, order_by: ['rank,desc'] }));
    expect((await receivedBy('/v3/backlinks/referring_domains/live', marker)).last?.task).toEqual({
      target: `https://${marker}.example.com/page`,
      limit: 5,
      offset: 2,
      order_by: ['rank,desc'],
      exclude_internal_backlinks: true,
    });
    expect(body.data.result[0].items).toHaveLength(5);
    expect(body.meta.costCents).toBe(2.1);
    expect(await wallet(account.organizationId)).toMatchObject({ purchasedBalanceCents: 97.9, heldCents: 0 });
  });
});

describe('POST /backlink-gap', () => {
  it.each(['/backlink-gap', '/v1/data/seo/backlink-gap'])('keys domain_intersection by the 1-based index of targets at %s, with each rank', async (path) => {
    const account = await funded(100, 'payg');
    const body = await json(await tool(account.key, path, { targets: [`${unique()}.com`, 'competitor-b.com', 'competitor-c.com'] }));
    const items = body.data.result[0].items;
    expect(items.length).toBeGreaterThan(0);
    for (const item of items) {
      expect(Object.keys(item.domain_intersection)).toEqual(['1', '2', '3']);
      expect(item.domain_intersection['1'].rank).toEqual(expect.any(Number));
    }
  });

  it('turns the targets array into the upstream index-keyed object, and sorts by 1.rank,desc by default', async () => {
    const account = await funded(100, 'payg');
    const marker = unique();
    await tool(account.key, '/backlink-gap', { targets: [`${marker}-a.com`, `${marker}-b.com`], exclude_targets: ['mine.com'] });
    expect((await receivedBy('/v3/backlinks/domain_intersection/live', marker)).last?.task).toEqual({
      targets: { '1': `${marker}-a.com`, '2': `${marker}-b.com` },
      exclude_targets: ['mine.com'],
      order_by: ['1.rank,desc'],
      limit: 100,
    });
  });

  it('passes an order_by on another target, offset and filters through, and charges 2 cents plus 0.02 per row', async () => {
    const account = await funded(100, 'payg');
    const marker = unique();
    const filters = [['1.rank', '>', 100]];
    const body = await json(
      await tool(account.key, '/backlink-gap', { targets: [`${marker}-a.com`, `${marker}-b.com`], order_by: ['2.backlinks,desc'], offset: 1, limit: 3, filters }),
    );
    expect((await receivedBy('/v3/backlinks/domain_intersection/live', marker)).last?.task).toMatchObject({ order_by: ['2.backlinks,desc'], offset: 1, limit: 3, filters });
    expect(body.data.result[0].items).toHaveLength(3);
    expect(body.meta.costCents).toBe(2.06);
  });
});

describe('POST /backlinks-summary', () => {
  it.each(['/backlinks-summary', '/v1/data/seo/backlinks-summary'])('answers a flat object at result[0], without items, at %s', async (path) => {
    const account = await funded(100, 'payg');
    const target = `${unique()}.example.com`;
    const body = await json(await tool(account.key, path, { target }));
    expect(body.data).toEqual({ result: [{ ...summary[0], target }] });
    const first = body.data.result[0];
    expect(first).not.toHaveProperty('items');
    expect(first).toMatchObject({
      backlinks: expect.any(Number),
      referring_domains: expect.any(Number),
      rank: expect.any(Number),
      backlinks_spam_score: expect.any(Number),
      broken_backlinks: expect.any(Number),
    });
    expect(Object.keys(first.referring_links_tld).length).toBeGreaterThan(0);
  });

  it('sends include_subdomains and exclude_internal_backlinks, true by default, and costs 2 cents flat', async () => {
    const account = await funded(100, 'payg');
    const marker = unique();
    const first = await json(await tool(account.key, '/backlinks-summary', { target: `${marker}.com` }));
    expect((await receivedBy('/v3/backlinks/summary/live', marker)).last?.task).toEqual({ target: `${marker}.com`, include_subdomains: true, exclude_internal_backlinks: true });
    await tool(account.key, '/backlinks-summary', { target: `${marker}.org`, include_subdomains: false, exclude_internal_backlinks: false });
    expect((await receivedBy('/v3/backlinks/summary/live', `${marker}.org`)).last?.task).toEqual({ target: `${marker}.org`, include_subdomains: false, exclude_internal_backlinks: false });
    expect(first.meta.costCents).toBe(2);
  });
});
