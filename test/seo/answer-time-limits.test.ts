import { describe, expect, it } from 'vitest';
import { receivedBy } from '../fakes/dataforseo';
import { expectReleasedUncharged } from '../support/api';
import { answerAfter } from '../support/time-limits';

const unique = () => crypto.randomUUID().slice(0, 8);

const ANSWER_TIME_LIMIT_MS = 95_000;

/** Model answers B, C and D (A is in freshness-and-time-limits.test.ts): the field carrying the question, and the upstream path. */
const ANSWERS = [
  ['B', '/perplexity-api-answer', 'user_prompt', '/v3/ai_optimization/perplexity/llm_responses/live'],
  ['C', '/claude-api-answer', 'user_prompt', '/v3/ai_optimization/claude/llm_responses/live'],
  ['D', '/chatgpt-app-answer', 'keyword', '/v3/ai_optimization/chat_gpt/llm_scraper/live/advanced'],
] as const;

describe('the model-answer time limit of 95 s', () => {
  it.each(ANSWERS)('lets answer %s (%s) wait for its upstream 95 s and no longer: answered 1 ms before, 502 uncharged at the limit', async (_, path, field, upstream) => {
    const attempt = async (elapsedMs: number) => {
      const marker = `slow ${unique()}`;
      return answerAfter({ path, body: { [field]: marker }, upstreamHasIt: async () => (await receivedBy(upstream, marker)).count > 0, elapsedMs });
    };
    expect((await attempt(ANSWER_TIME_LIMIT_MS - 1)).status).toBe(200);
    const cut = await attempt(ANSWER_TIME_LIMIT_MS);
    expect(cut.status).toBe(502);
    expect(cut.body.error).toMatchObject({ code: 'PROVIDER_ERROR', message: expect.stringMatching(/timed out/) });
    await expectReleasedUncharged(cut.organizationId, 100);
  });
});
