import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { findPrincipal } from '../../src/services/accounts';
import { ApiError } from '../../src/core/errors';
import { hashKey } from '../../src/core/keys';
import { execute } from '../../src/services/pipeline';
import { OPERATIONS } from '../../src/operations';
import { freshnessOf, mcpToolName, timeLimitOf } from '../../src/core/operation';
import { receivedBy } from '../fakes/dataforseo';
import scraper from '../fixtures/dataforseo/llm-scraper-chat-gpt.json';
import { funded, json, tool, wallet } from '../support/api';

const unique = () => crypto.randomUUID().slice(0, 8);

const API_ANSWERS = [
  { name: 'chatgpt-api-answer', upstream: '/v3/ai_optimization/chat_gpt/llm_responses/live', model: 'gpt-4o-mini' },
  { name: 'perplexity-api-answer', upstream: '/v3/ai_optimization/perplexity/llm_responses/live', model: 'sonar' },
  { name: 'claude-api-answer', upstream: '/v3/ai_optimization/claude/llm_responses/live', model: 'claude-haiku-4-5' },
] as const;

const APP_ANSWER = '/v3/ai_optimization/chat_gpt/llm_scraper/live/advanced';

describe.each(API_ANSWERS)('POST /$name', ({ name, upstream, model }) => {
  it.each([`/${name}`, `/v1/data/seo/${name}`])('answers at %s: a message item with sections[].text and annotations, token counts on result[0]', async (path) => {
    const account = await funded(100, 'payg');
    const body = await json(await tool(account.key, path, { user_prompt: `Which CRM suits ten sellers? ${unique()}` }));
    const first = body.data.result[0];
    expect(first).toMatchObject({ model_name: model, input_tokens: expect.any(Number), output_tokens: expect.any(Number) });
    const message = first.items.find((item: { type: string }) => item.type === 'message');
    expect(message.sections[0].text).toEqual(expect.any(String));
    expect(message.sections[0].annotations[0]).toMatchObject({ url: expect.stringMatching(/^https:\/\//), title: expect.any(String) });
  });

  it('treats an answer without sources as a valid, charged answer', async () => {
    const account = await funded(100, 'payg');
    const body = await json(await tool(account.key, `/${name}`, { user_prompt: `empty ${unique()}` }));
    expect(body.success).toBe(true);
    expect(body.data.result[0].items.at(-1).sections[0].annotations).toBeNull();
    expect(body.meta.costCents).toBeGreaterThan(0);
  });

  it('is never cached: asking again samples again and is charged again', async () => {
    const account = await funded(100, 'payg');
    const marker = unique();
    const first = await json(await tool(account.key, `/${name}`, { user_prompt: `same question ${marker}` }));
    const second = await json(await tool(account.key, `/${name}`, { user_prompt: `same question ${marker}` }));
    expect([first.meta.cached, second.meta.cached]).toEqual([false, false]);
    expect((await receivedBy(upstream, marker)).count).toBe(2);
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBeCloseTo(100 - first.meta.costCents - second.meta.costCents, 6);
  });
});

describe('the vendor task of each model answer', () => {
  it('A sends the prompt, the default model and tokens, web_search true, force_web_search false', async () => {
    const account = await funded(100, 'payg');
    const marker = unique();
    await tool(account.key, '/chatgpt-api-answer', { user_prompt: `q ${marker}` });
    expect((await receivedBy(API_ANSWERS[0].upstream, marker)).last?.task).toEqual({
      user_prompt: `q ${marker}`,
      model_name: 'gpt-4o-mini',
      max_output_tokens: 1024,
      web_search: true,
      force_web_search: false,
    });
  });

  it('A passes every field through, the country code upper-cased', async () => {
    const account = await funded(100, 'payg');
    const marker = unique();
    const input = { user_prompt: `q ${marker}`, model_name: 'gpt-5-mini', max_output_tokens: 2048, web_search: true, force_web_search: true, web_search_country_iso_code: 'gb' };
    await tool(account.key, '/v1/data/seo/chatgpt-api-answer', input);
    expect((await receivedBy(API_ANSWERS[0].upstream, marker)).last?.task).toEqual({ ...input, web_search_country_iso_code: 'GB' });
  });

  it('B sends no web_search fields: sonar models always search', async () => {
    const account = await funded(100, 'payg');
    const marker = unique();
    await tool(account.key, '/perplexity-api-answer', { user_prompt: `q ${marker}`, model_name: 'sonar-pro', max_output_tokens: 16, web_search_country_iso_code: 'DE' });
    expect((await receivedBy(API_ANSWERS[1].upstream, marker)).last?.task).toEqual({
      user_prompt: `q ${marker}`,
      model_name: 'sonar-pro',
      max_output_tokens: 16,
      web_search_country_iso_code: 'DE',
    });
  });

  it('C sends the Claude model with web search on by default, or off when asked', async () => {
    const account = await funded(100, 'payg');
    const marker = unique();
    await tool(account.key, '/claude-api-answer', { user_prompt: `q ${marker}`, model_name: 'claude-sonnet-4-5', web_search: false });
    expect((await receivedBy(API_ANSWERS[2].upstream, marker)).last?.task).toEqual({
      user_prompt: `q ${marker}`,
      model_name: 'claude-sonnet-4-5',
      max_output_tokens: 1024,
      web_search: false,
      force_web_search: false,
    });
  });
});

describe('POST /chatgpt-app-answer', () => {
  it.each(['/chatgpt-app-answer', '/v1/data/seo/chatgpt-app-answer'])('answers result[0].markdown and sources[] with url, title and domain at %s', async (path) => {
    const account = await funded(100, 'payg');
    const body = await json(await tool(account.key, path, { keyword: `best crm for small business ${unique()}` }));
    const first = body.data.result[0];
    expect(first.markdown).toBe(scraper[0]!.markdown);
    expect(first.sources.length).toBeGreaterThan(0);
    for (const source of first.sources) expect(source).toMatchObject({ url: expect.any(String), title: expect.any(String), domain: expect.any(String) });
    expect(body.meta.costCents).toBe(0.5);
  });

  it('asks as a logged-out user of the chosen country, the keyword escaped for the upstream', async () => {
    const account = await funded(100, 'payg');
    const marker = unique();
    await tool(account.key, '/chatgpt-app-answer', { keyword: `c++ or 100% rust? ${marker}`, location_code: 2826, language_code: 'en' });
    expect((await receivedBy(APP_ANSWER, marker)).last?.task).toEqual({ keyword: `c%2B%2B or 100%25 rust? ${marker}`, location_code: 2826, language_code: 'en' });
    await tool(account.key, '/chatgpt-app-answer', { keyword: `defaults ${marker}` });
    expect((await receivedBy(APP_ANSWER, `defaults ${marker}`)).last?.task).toEqual({ keyword: `defaults ${marker}`, location_code: 2840, language_code: 'en' });
  });

  it('is never cached', async () => {
    const account = await funded(100, 'payg');
    const marker = unique();
    await tool(account.key, '/chatgpt-app-answer', { keyword: `again ${marker}` });
    expect((await json(await tool(account.key, '/chatgpt-app-answer', { keyword: `again ${marker}` }))).meta.cached).toBe(false);
    expect((await receivedBy(APP_ANSWER, marker)).count).toBe(2);
  });
});

describe('model-answer prices: per request, by model', () => {
  it.each([
    ['/chatgpt-api-answer', 'gpt-4o-mini', 0.2],
    ['/chatgpt-api-answer', 'gpt-5-mini', 0.5],
    ['/chatgpt-api-answer', 'gpt-4o', 1],
    ['/perplexity-api-answer', 'sonar', 0.2],
    ['/perplexity-api-answer', 'sonar-pro', 1],
    ['/claude-api-answer', 'claude-haiku-4-5', 0.3],
    ['/claude-api-answer', 'claude-sonnet-4-5', 1],
  ])('%s with %s costs %f cents', async (path, model_name, cents) => {
    const account = await funded(100, 'payg');
    const body = await json(await tool(account.key, path, { user_prompt: `price ${unique()}`, model_name }));
    expect(body.meta.costCents).toBe(cents);
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBeCloseTo(100 - cents, 6);
  });
});

describe('the model-answer time limit', () => {
  const answers = OPERATIONS.filter((operation) => /-(api|app)-answer$/.test(operation.name));
  const inputOf = (name: string) => (name === 'chatgpt-app-answer' ? { keyword: 'slow question' } : { user_prompt: 'slow question' });

  it('is 95 seconds for all four, and none is ever cached', () => {
    expect(answers.map(mcpToolName).sort()).toEqual([
      'data_seo_chatgpt_api_answer',
      'data_seo_chatgpt_app_answer',
      'data_seo_claude_api_answer',
      'data_seo_perplexity_api_answer',
    ]);
    for (const operation of answers) {
      const input = operation.input.parse(inputOf(operation.name));
      expect(timeLimitOf(operation, input)).toBe(95_000);
      expect(freshnessOf(operation, input)).toBe(0);
    }
  });

  it('lets a slow answer finish well inside it', async () => {
    const account = await funded(100, 'payg');
    const response = await tool(account.key, '/claude-api-answer', { user_prompt: `slow ${unique()}` });
    expect(response.status).toBe(200);
  });

  it('gives up when it passes: 502, not charged, nothing held', async () => {
    const account = await funded(100, 'payg');
    const principal = await findPrincipal(env.DB, await hashKey(account.key));
    const context = createExecutionContext();
    const call = { env, principal: principal!, requestId: 'req_test', waitUntil: (promise: Promise<unknown>) => context.waitUntil(promise) };
    for (const operation of answers) {
      const error = await execute({ ...operation, timeoutMs: 100 }, inputOf(operation.name), 'body', call).then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(error, operation.name).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ code: 'PROVIDER_ERROR', status: 502, message: expect.stringMatching(/timed out/) });
    }
    await waitOnExecutionContext(context);
    expect(await wallet(account.organizationId)).toMatchObject({ purchasedBalanceCents: 100, heldCents: 0 });
  });
});
