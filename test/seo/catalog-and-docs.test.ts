import { describe, expect, it } from 'vitest';
import { call, json } from '../support/api';
import { followed } from '../support/openapi';

const SEO_TOOLS = [
  ['serp', 'data_seo_google_search'],
  ['keyword-ideas', 'data_seo_keyword_ideas'],
  ['keyword-overview', 'data_seo_keyword_overview'],
  ['keyword-gap', 'data_seo_keyword_gap'],
  ['ranked-keywords', 'data_seo_ranked_keywords'],
  ['competitors', 'data_seo_competitors'],
  ['referring-domains', 'data_seo_referring_domains'],
  ['backlink-gap', 'data_seo_backlink_gap'],
  ['backlinks-summary', 'data_seo_backlinks_summary'],
  ['domain-overview', 'data_seo_domain_overview'],
  ['tech-search', 'data_seo_tech_search'],
  ['ai-visibility', 'data_seo_ai_visibility'],
  ['chatgpt-api-answer', 'data_seo_chatgpt_api_answer'],
  ['perplexity-api-answer', 'data_seo_perplexity_api_answer'],
  ['claude-api-answer', 'data_seo_claude_api_answer'],
  ['chatgpt-app-answer', 'data_seo_chatgpt_app_answer'],
] as const;

describe('GET /v1/platforms/seo', () => {
  it('lists every SEO and model-answer operation at its root path and /v1/data/seo path, with its MCP tool', async () => {
    const { data } = await json(await call('/v1/platforms/seo'));
    const listed = Object.fromEntries(data.operations.map((operation: { name: string }) => [operation.name, operation]));
    for (const [name, mcpTool] of SEO_TOOLS) {
      expect(listed[name], name).toMatchObject({ method: 'POST', path: `/${name}`, paths: [`/${name}`, `/v1/data/seo/${name}`], mcpTool });
    }
  });

  it('shows honest prices: what varies says how', async () => {
    const { data } = await json(await call('/v1/platforms/seo'));
    const price = (name: string) => data.operations.find((operation: { name: string }) => operation.name === name).price;
    expect(price('serp')).toMatchObject({ cents: 0.45, per: 'results page', note: expect.stringMatching(/10 of depth.*x5/) });
    expect(price('keyword-ideas')).toMatchObject({ cents: 0.02, per: 'row', note: expect.stringMatching(/1 cent per request.*rows returned/) });
    expect(price('referring-domains')).toMatchObject({ cents: 0.02, per: 'row', note: expect.stringMatching(/2 cents per request/) });
    expect(price('tech-search')).toMatchObject({ cents: 0.2, per: 'row' });
    expect(price('keyword-overview')).toMatchObject({ cents: 0.01, per: 'keyword', note: expect.stringMatching(/1 cent per request/) });
    expect(price('backlinks-summary')).toEqual({ cents: 2, per: 'request' });
    expect(price('domain-overview')).toEqual({ cents: 1, per: 'request' });
    expect(price('ai-visibility')).toMatchObject({ cents: 18, per: 'request' });
    expect(price('chatgpt-api-answer')).toEqual({ cents: 0.2, per: 'request', note: 'from 0.2 cents; by model: gpt-4o-mini 0.2, gpt-5-mini 0.5, gpt-4o 1' });
    expect(price('perplexity-api-answer')).toEqual({ cents: 0.2, per: 'request', note: 'from 0.2 cents; by model: sonar 0.2, sonar-pro 1' });
    expect(price('claude-api-answer')).toEqual({ cents: 0.3, per: 'request', note: 'from 0.3 cents; by model: claude-haiku-4-5 0.3, claude-sonnet-4-5 1' });
    expect(price('chatgpt-app-answer')).toEqual({ cents: 0.5, per: 'request' });
  });
});

describe('the OpenAPI document', () => {
  it('describes every SEO endpoint once, at its root path naming its /v1/data/seo twin, with its body, defaults and bounds', async () => {
    const document = await json(await call('/openapi.json'));
    for (const [name] of SEO_TOOLS) {
      const operation = document.paths[`/${name}`]?.post;
      expect(operation, name).toBeDefined();
      expect(operation['x-aliases'], name).toEqual([`/v1/data/seo/${name}`]);
      expect(followed(document, operation.requestBody).content['application/json'].schema.additionalProperties, name).toBe(false);
    }
    const serp = followed(document, document.paths['/serp'].post.requestBody).content['application/json'].schema.properties;
    expect(serp.depth).toMatchObject({ minimum: 10, maximum: 700, multipleOf: 10, default: 10 });
    expect(serp.keyword).toMatchObject({ maxLength: 700 });
    expect(serp.device).toMatchObject({ enum: ['desktop', 'mobile'], default: 'desktop' });
    const answer = followed(document, document.paths['/chatgpt-api-answer'].post.requestBody).content['application/json'].schema.properties;
    expect(answer.model_name).toMatchObject({ enum: ['gpt-4o-mini', 'gpt-4o', 'gpt-5-mini'], default: 'gpt-4o-mini' });
    expect(answer.max_output_tokens).toMatchObject({ minimum: 16, maximum: 2048, default: 1024 });
    const perplexity = followed(document, document.paths['/perplexity-api-answer'].post.requestBody).content['application/json'].schema.properties;
    expect(Object.keys(perplexity)).not.toContain('web_search');
  });

  it('names the payload paths the spec names in each success schema', async () => {
    const document = await json(await call('/openapi.json'));
    const payload = (name: string) => JSON.stringify(followed(document, document.paths[`/${name}`].post.responses['200']).content['application/json'].schema);
    expect(payload('keyword-ideas')).toContain('keyword_difficulty');
    expect(payload('ranked-keywords')).toContain('ranked_serp_element');
    expect(payload('keyword-gap')).toContain('second_domain_serp_element');
    expect(payload('backlink-gap')).toContain('domain_intersection');
    expect(payload('ai-visibility')).toContain('aggregated_metrics');
    expect(payload('chatgpt-api-answer')).toContain('annotations');
    expect(payload('chatgpt-app-answer')).toContain('markdown');
  });
});
