import { beforeAll, describe, expect, it } from 'vitest';
import { funded, json, tool, wallet, type Provisioned } from '../support/api';

interface Detail {
  field: string;
  location: string;
  message: string;
}

// Refusals touch neither the rate window nor the wallet, so one account serves them all.
let account: Provisioned;
beforeAll(async () => {
  account = await funded(100, 'payg');
});

/** Sends a body that must be refused: 400 VALIDATION_ERROR, nothing held, nothing charged. */
async function refusal(path: string, body: unknown): Promise<Detail[]> {
  const response = await tool(account.key, path, body);
  expect(response.status).toBe(400);
  const { error } = await json(response);
  expect(error.code).toBe('VALIDATION_ERROR');
  const after = await wallet(account.organizationId);
  expect(after).toMatchObject({ purchasedBalanceCents: 100, heldCents: 0 });
  expect(after.ledger.filter((entry: { kind: string }) => entry.kind === 'hold')).toEqual([]);
  for (const detail of error.details) expect(detail.location).toBe('body');
  return error.details;
}

const fieldsOf = (details: Detail[]) => details.map((detail) => detail.field).sort();
const messageOf = (details: Detail[], field: string) => details.find((detail) => detail.field === field)?.message;

const words = (count: number) => Array.from({ length: count }, (_, index) => `keyword ${index}`);
const domains = (count: number) => Array.from({ length: count }, (_, index) => `site${index}.com`);

describe('every refusal is 400 VALIDATION_ERROR naming each offending field, uncharged', () => {
  it.each<[string, string, unknown, string[]]>([
    // serp
    ['serp needs a keyword', '/serp', {}, ['keyword']],
    ['serp keyword is at most 700 characters', '/serp', { keyword: 'k'.repeat(701) }, ['keyword']],
    ['serp depth is a multiple of 10', '/serp', { keyword: 'shoes', depth: 15 }, ['depth']],
    ['serp depth is at least 10', '/serp', { keyword: 'shoes', depth: 0 }, ['depth']],
    ['serp depth is at most 700', '/serp', { keyword: 'shoes', depth: 710 }, ['depth']],
    ['serp device is desktop or mobile', '/serp', { keyword: 'shoes', device: 'tablet' }, ['device']],
    ['serp location_code is an integer', '/serp', { keyword: 'shoes', location_code: 'US' }, ['location_code']],
    ['serp language_code has two letters', '/serp', { keyword: 'shoes', language_code: 'english' }, ['language_code']],
    ['serp refuses unknown fields, each named', '/serp', { keyword: 'shoes', engine: 'bing', page: 2 }, ['engine', 'page']],
    // keyword ideas
    ['keyword-ideas needs at least one seed', '/keyword-ideas', { keywords: [] }, ['keywords']],
    ['keyword-ideas takes at most 200 seeds', '/keyword-ideas', { keywords: words(201) }, ['keywords']],
    ['limit is 1-1000', '/keyword-ideas', { keywords: ['a'], limit: 0 }, ['limit']],
    ['limit is at most 1000', '/keyword-ideas', { keywords: ['a'], limit: 1001 }, ['limit']],
    ['offset is at least 0', '/keyword-ideas', { keywords: ['a'], offset: -1 }, ['offset']],
    ['filters use the ten operators', '/keyword-ideas', { keywords: ['a'], filters: [['keyword_info.search_volume', 'between', 5]] }, ['filters[0]']],
    ['in takes an array', '/keyword-ideas', { keywords: ['a'], filters: [['keyword', 'in', 'shoes']] }, ['filters[0][2]']],
    ['like takes a string', '/keyword-ideas', { keywords: ['a'], filters: [['keyword_info.search_volume', 'like', 5]] }, ['filters[0][2]']],
    ['triples are joined by and/or', '/keyword-ideas', { keywords: ['a'], filters: [['keyword', '=', 'a'], ['keyword', '=', 'b']] }, ['filters[1]']],
    ['order_by entries are <field>,<asc|desc>', '/keyword-ideas', { keywords: ['a'], order_by: ['keyword_info.search_volume'] }, ['order_by[0]']],
    ['several bad fields are each named', '/keyword-ideas', { keywords: [], limit: 5000, offset: -3, colour: 'red' }, ['colour', 'keywords', 'limit', 'offset']],
    // keyword overview
    ['keyword-overview takes 1-700 keywords', '/keyword-overview', { keywords: words(701) }, ['keywords']],
    ['keyword-overview takes no row query', '/keyword-overview', { keywords: ['a'], limit: 10, filters: [['keyword', '=', 'a']] }, ['filters', 'limit']],
    // keyword gap
    ['keyword-gap needs both targets', '/keyword-gap', { target1: 'example.com' }, ['target2']],
    ['keyword-gap targets are domains without protocol', '/keyword-gap', { target1: 'https://example.com', target2: 'rival.com/blog' }, ['target1', 'target2']],
    // ranked keywords
    ['ranked-keywords needs a target', '/ranked-keywords', {}, ['target']],
    ['a page target carries its protocol', '/ranked-keywords', { target: 'example.com/blog' }, ['target']],
    ['a target is a domain or an http(s) page', '/ranked-keywords', { target: 'ftp://example.com/file' }, ['target']],
    // competitors
    ['competitors has no offset', '/competitors', { target: 'example.com', offset: 10 }, ['offset']],
    ['competitors target has no protocol', '/competitors', { target: 'http://example.com' }, ['target']],
    // referring domains
    ['referring-domains takes no location or language', '/referring-domains', { target: 'example.com', location_code: 2840, language_code: 'en' }, ['language_code', 'location_code']],
    ['exclude_internal_backlinks is a boolean', '/referring-domains', { target: 'example.com', exclude_internal_backlinks: 'yes' }, ['exclude_internal_backlinks']],
    // backlink gap
    ['backlink-gap needs at least one target', '/backlink-gap', { targets: [] }, ['targets']],
    ['backlink-gap takes at most 20 targets', '/backlink-gap', { targets: domains(21) }, ['targets']],
    ['exclude_targets takes at most 10', '/backlink-gap', { targets: ['a.com'], exclude_targets: domains(11) }, ['exclude_targets']],
    ['backlink-gap targets are domains', '/backlink-gap', { targets: ['a.com', 'https://b.com'] }, ['targets[1]']],
    ['order_by names a target index first', '/backlink-gap', { targets: ['a.com'], order_by: ['rank,desc'] }, ['order_by[0]']],
    ['the order_by index is within targets', '/backlink-gap', { targets: ['a.com', 'b.com'], order_by: ['2.rank,desc', '3.backlinks,asc'] }, ['order_by[1]']],
    ['the order_by index starts at 1', '/backlink-gap', { targets: ['a.com'], order_by: ['0.rank,desc'] }, ['order_by[0]']],
    // backlinks summary, domain overview
    ['include_subdomains is a boolean', '/backlinks-summary', { target: 'example.com', include_subdomains: 1 }, ['include_subdomains']],
    ['domain-overview target has no protocol', '/domain-overview', { target: 'https://example.com' }, ['target']],
    ['domain-overview takes no limit', '/domain-overview', { target: 'example.com', limit: 5 }, ['limit']],
    // tech search
    ['tech-search needs a technology', '/tech-search', { technologies: [] }, ['technologies']],
    ['tech-search takes at most 10 technologies (the upstream limit)', '/tech-search', { technologies: words(11) }, ['technologies']],
    ['tech-search takes no location', '/tech-search', { technologies: ['WordPress'], location_code: 2840 }, ['location_code']],
    // ai visibility
    ['ai-visibility needs targets or keywords, naming both', '/ai-visibility', {}, ['keywords', 'targets']],
    ['ai-visibility needs a non-empty one', '/ai-visibility', { targets: [], keywords: [] }, ['keywords', 'targets']],
    ['ai-visibility takes at most 10 targets', '/ai-visibility', { targets: domains(11) }, ['targets']],
    ['ai-visibility takes at most 10 keywords', '/ai-visibility', { keywords: words(11) }, ['keywords']],
    ['ai-visibility targets have no protocol', '/ai-visibility', { targets: ['https://example.com'] }, ['targets[0]']],
    ['ai-visibility takes 10 entries in all (the upstream limit)', '/ai-visibility', { targets: domains(6), keywords: words(5) }, ['keywords', 'targets']],
    ['ai-visibility limit is 1-1000', '/ai-visibility', { keywords: ['crm'], limit: 1001 }, ['limit']],
    // model answers A
    ['A needs a prompt', '/chatgpt-api-answer', {}, ['user_prompt']],
    ['A prompt is at most 500 characters', '/chatgpt-api-answer', { user_prompt: 'q'.repeat(501) }, ['user_prompt']],
    ['A models are gpt-4o-mini, gpt-4o, gpt-5-mini', '/chatgpt-api-answer', { user_prompt: 'q', model_name: 'sonar' }, ['model_name']],
    ['max_output_tokens is at least 16', '/chatgpt-api-answer', { user_prompt: 'q', max_output_tokens: 15 }, ['max_output_tokens']],
    ['max_output_tokens is at most 2048', '/chatgpt-api-answer', { user_prompt: 'q', max_output_tokens: 2049 }, ['max_output_tokens']],
    ['gpt-5-mini needs at least 1024 tokens', '/chatgpt-api-answer', { user_prompt: 'q', model_name: 'gpt-5-mini', max_output_tokens: 1023 }, ['max_output_tokens']],
    ['force_web_search needs web_search', '/chatgpt-api-answer', { user_prompt: 'q', web_search: false, force_web_search: true }, ['force_web_search']],
    ['the search country has two letters', '/chatgpt-api-answer', { user_prompt: 'q', web_search_country_iso_code: 'USA' }, ['web_search_country_iso_code']],
    // B
    ['B refuses web_search and force_web_search', '/perplexity-api-answer', { user_prompt: 'q', web_search: true, force_web_search: false }, ['force_web_search', 'web_search']],
    ['B models are sonar and sonar-pro', '/perplexity-api-answer', { user_prompt: 'q', model_name: 'gpt-4o' }, ['model_name']],
    ['B max_output_tokens is 16-2048', '/perplexity-api-answer', { user_prompt: 'q', max_output_tokens: 4096 }, ['max_output_tokens']],
    // C
    ['C models are claude-haiku-4-5 and claude-sonnet-4-5', '/claude-api-answer', { user_prompt: 'q', model_name: 'claude-opus-4-1' }, ['model_name']],
    ['C force_web_search needs web_search', '/claude-api-answer', { user_prompt: 'q', web_search: false, force_web_search: true }, ['force_web_search']],
    // D
    ['D needs a keyword', '/chatgpt-app-answer', { location_code: 2840 }, ['keyword']],
    ['D keyword is at most 2000 characters', '/chatgpt-app-answer', { keyword: 'k'.repeat(2001) }, ['keyword']],
    ['D takes no model', '/chatgpt-app-answer', { keyword: 'crm', model_name: 'gpt-4o' }, ['model_name']],
  ])('%s', async (_, path, body, fields) => {
    expect(fieldsOf(await refusal(path, body))).toEqual(fields);
  });

  it('refuses the same way at the /v1/data/seo path', async () => {
    expect(fieldsOf(await refusal('/v1/data/seo/backlink-gap', { targets: ['a.com'], order_by: ['2.rank,desc'] }))).toEqual(['order_by[0]']);
  });

  it('says why a cross-field rule refused', async () => {
    expect(messageOf(await refusal('/chatgpt-api-answer', { user_prompt: 'q', model_name: 'gpt-5-mini', max_output_tokens: 512 }), 'max_output_tokens')).toMatch(
      /gpt-5-mini needs max_output_tokens of at least 1024/,
    );
    expect(messageOf(await refusal('/claude-api-answer', { user_prompt: 'q', web_search: false, force_web_search: true }), 'force_web_search')).toMatch(
      /needs web_search/,
    );
    expect(messageOf(await refusal('/backlink-gap', { targets: ['a.com', 'b.com'], order_by: ['3.rank,desc'] }), 'order_by[0]')).toMatch(/not within targets \(1-2\)/);
    expect(messageOf(await refusal('/ai-visibility', {}), 'targets')).toMatch(/at least one of targets or keywords/);
    expect(messageOf(await refusal('/keyword-gap', { target1: 'https://example.com', target2: 'rival.com' }), 'target1')).toMatch(/without protocol/);
  });

  it('accepts each boundary the spec allows', async () => {
    const payer = await funded(1000, 'payg');
    const accepted = [
      ['/serp', { keyword: 'k'.repeat(700), depth: 700 }],
      ['/keyword-ideas', { keywords: words(200), limit: 1000, offset: 0 }],
      ['/keyword-overview', { keywords: words(700) }],
      ['/backlink-gap', { targets: domains(20), exclude_targets: domains(10), order_by: ['20.rank,asc', '1.backlinks,desc'] }],
      ['/ai-visibility', { targets: domains(10), limit: 1 }],
      ['/ai-visibility', { keywords: words(10), limit: 1000 }],
      ['/chatgpt-api-answer', { user_prompt: 'q'.repeat(500), model_name: 'gpt-5-mini', max_output_tokens: 1024 }],
      ['/chatgpt-api-answer', { user_prompt: 'q', max_output_tokens: 16, web_search: false, force_web_search: false }],
      ['/chatgpt-app-answer', { keyword: 'k'.repeat(2000) }],
    ] as const;
    for (const [path, body] of accepted) {
      const response = await tool(payer.key, path, body);
      expect(response.status, `${path} ${JSON.stringify(body).slice(0, 80)}`).toBe(200);
    }
  });
});
