import { describe, expect, it } from 'vitest';
import { receivedBy } from '../fakes/dataforseo';
import { listTools } from '../mcp-oauth/support';
import { call, funded, json, ops, provision, tool } from '../support/api';
import { followed } from '../support/openapi';

const unique = () => crypto.randomUUID().slice(0, 8);

const LABS = '/v3/dataforseo_labs/google';

/** The last task the fake upstream received at `path` carrying `marker`; fails when there is none. */
async function sentUpstream(path: string, marker: string): Promise<Record<string, unknown>> {
  const received = await receivedBy(path, marker);
  expect(received.count, `${path} received ${marker}`).toBe(1);
  return received.last!.task;
}

describe('POST /ai-visibility: no parameter is schema-required', () => {
  it('its OpenAPI request schema lists no required field', async () => {
    const document = await json(await call('/openapi.json'));
    const schema = followed(document, document.paths['/ai-visibility'].post.requestBody).content['application/json'].schema;
    expect(Object.keys(schema.properties).sort()).toEqual(['keywords', 'limit', 'targets']);
    expect(schema.required ?? []).toEqual([]);
  });

  it('its MCP tool data_seo_ai_visibility lists no required argument', async () => {
    const account = await provision({ plan: 'payg' });
    const token = (await ops('POST', '/keys', { workspaceId: account.workspaceId, scope: 'workspace_mcp', name: 'mcp' })).body.data.key;
    const { result } = await json(await listTools('/mcp', token));
    const listed = result.tools.find((candidate: { name: string }) => candidate.name === 'data_seo_ai_visibility');
    expect(listed, 'data_seo_ai_visibility is listed').toBeDefined();
    expect(Object.keys(listed.inputSchema.properties)).toEqual(expect.arrayContaining(['keywords', 'limit', 'targets']));
    expect(listed.inputSchema.required ?? []).toEqual([]);
  });
});

describe('defaults sent upstream when the caller leaves them out', () => {
  it.each([
    ['/ai-visibility', (marker: string) => ({ keywords: [`crm ${marker}`] }), '/v3/ai_optimization/llm_mentions/top_mentioned_domains/live'],
    ['/tech-search', (marker: string) => ({ technologies: [marker] }), '/v3/domain_analytics/technologies/domains_by_technology/live'],
    ['/competitors', (marker: string) => ({ target: `${marker}.com` }), `${LABS}/competitors_domain/live`],
  ])('%s asks the upstream for limit 100', async (path, bodyOf, upstream) => {
    const account = await funded(100, 'payg');
    const marker = unique();
    expect((await tool(account.key, path, bodyOf(marker))).status).toBe(200);
    expect((await sentUpstream(upstream, marker)).limit).toBe(100);
  });

  it('/keyword-ideas sends no order_by, so the upstream keeps its relevance order', async () => {
    const account = await funded(100, 'payg');
    const marker = unique();
    expect((await tool(account.key, '/keyword-ideas', { keywords: [`shoes ${marker}`] })).status).toBe(200);
    expect(await sentUpstream(`${LABS}/keyword_ideas/live`, marker)).not.toHaveProperty('order_by');
  });
});

/** `count` filter conditions joined by "and": 2 * count - 1 elements. */
function conditions(count: number): unknown[] {
  return Array.from({ length: count }, (_, index) => [['keyword_info.search_volume', '>', index], 'and']).flat().slice(0, -1);
}

const sortRules = (count: number) => ['rank,desc', 'backlinks,desc', 'first_seen,asc', 'spam_score,asc'].slice(0, count);
const targetSortRules = (count: number) => ['1.rank,desc', '1.backlinks,desc', '1.first_seen,asc', '1.spam_score,asc'].slice(0, count);

/** Every endpoint that takes the row query's filters and order_by, with a body carrying `marker` and the upstream path it reaches. */
const ROW_ENDPOINTS: [string, (marker: string) => Record<string, unknown>, string, (count: number) => string[]][] = [
  ['/keyword-ideas', (marker) => ({ keywords: [marker] }), `${LABS}/keyword_ideas/live`, sortRules],
  ['/keyword-gap', (marker) => ({ target1: `${marker}.com`, target2: 'rival.com' }), `${LABS}/domain_intersection/live`, sortRules],
  ['/ranked-keywords', (marker) => ({ target: `${marker}.com` }), `${LABS}/ranked_keywords/live`, sortRules],
  ['/competitors', (marker) => ({ target: `${marker}.com` }), `${LABS}/competitors_domain/live`, sortRules],
  ['/referring-domains', (marker) => ({ target: `${marker}.com` }), '/v3/backlinks/referring_domains/live', sortRules],
  ['/backlink-gap', (marker) => ({ targets: [`${marker}.com`] }), '/v3/backlinks/domain_intersection/live', targetSortRules],
  ['/tech-search', (marker) => ({ technologies: [marker] }), '/v3/domain_analytics/technologies/domains_by_technology/live', sortRules],
];

describe('row queries take at most 8 filter conditions and 3 sort rules (the upstream limits)', () => {
  it.each(ROW_ENDPOINTS)('%s refuses 9 conditions and 4 sort rules with 400 VALIDATION_ERROR naming the field', async (path, bodyOf, _, rules) => {
    const account = await funded(100, 'payg');
    for (const [field, over, says] of [
      ['filters', { filters: conditions(9) }, 'At most 8 conditions'],
      ['order_by', { order_by: rules(4) }, 'At most 3 sort rules'],
    ] as const) {
      const response = await tool(account.key, path, { ...bodyOf(unique()), ...over });
      expect(response.status, field).toBe(400);
      const { error } = await json(response);
      expect(error.code).toBe('VALIDATION_ERROR');
      expect(error.details).toEqual([{ field, location: 'body', message: expect.stringContaining(says) }]);
    }
  });

  it.each(ROW_ENDPOINTS)('%s accepts exactly 8 conditions and 3 sort rules, and sends them upstream', async (path, bodyOf, upstream, rules) => {
    const account = await funded(100, 'payg');
    const marker = unique();
    const response = await tool(account.key, path, { ...bodyOf(marker), filters: conditions(8), order_by: rules(3) });
    expect(response.status).toBe(200);
    expect(await sentUpstream(upstream, marker)).toMatchObject({ filters: conditions(8), order_by: rules(3) });
  });
});

describe('an empty filters or order_by is none, as its absence is', () => {
  it.each(ROW_ENDPOINTS)('%s answers 200 and sends neither upstream', async (path, bodyOf, upstream) => {
    const account = await funded(100, 'payg');
    const marker = unique();
    const response = await tool(account.key, path, { ...bodyOf(marker), filters: [], order_by: [] });
    expect(response.status, JSON.stringify(await response.clone().json())).toBe(200);
    const sent = await sentUpstream(upstream, marker);
    expect(sent).not.toHaveProperty('filters');
    // backlink-gap's own default order stands in for none.
    if (path === '/backlink-gap') expect(sent.order_by).toEqual(['1.rank,desc']);
    else expect(sent).not.toHaveProperty('order_by');
  });

  it('a filter that ends with "and" is refused naming its last entry, and only that', async () => {
    const account = await funded(100, 'payg');
    const response = await tool(account.key, '/keyword-ideas', { keywords: [unique()], filters: [['keyword', '=', 'a'], 'and'] });
    expect(response.status).toBe(400);
    expect((await json(response)).error.details).toEqual([{ field: 'filters[1]', location: 'body', message: 'filters must end with a triple.' }]);
  });
});

describe('language_code takes either case, as the country codes do', () => {
  it.each([
    ['/serp', (marker: string) => ({ keyword: marker }), '/v3/serp/google/organic/live/advanced'],
    ['/keyword-ideas', (marker: string) => ({ keywords: [marker] }), `${LABS}/keyword_ideas/live`],
  ])('%s sends EN upstream as en', async (path, bodyOf, upstream) => {
    const account = await funded(100, 'payg');
    const marker = unique();
    const response = await tool(account.key, path, { ...bodyOf(marker), language_code: 'EN' });
    expect(response.status).toBe(200);
    expect((await sentUpstream(upstream, marker)).language_code).toBe('en');
  });
});
