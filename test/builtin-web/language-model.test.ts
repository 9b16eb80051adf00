import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { buildApiApp } from '../../src/api';
import type { Env } from '../../src/core/config';
import type { ScrapeInput } from '../../src/providers/builtin-web/inputs';
import { DEFAULT_MODEL, MAX_PAGE_CHARS, type AiBinding } from '../../src/providers/builtin-web/language-model';
import { scrapeWithBuiltin } from '../../src/providers/builtin-web/scrape';
import { FAKE_DNS_URL } from '../fakes/web-sites';
import { funded, json as read } from '../support/api';
import { signal, web, webEnv } from './support';

const ARTICLE = 'https://news.example.com/2026/harbour-dredging';

/** A Workers AI binding that records each run and answers what `answer` makes of it, as the binding does: `{response}`. */
function fakeAi(answer: (inputs: Record<string, any>) => unknown) {
  const runs: { model: string; inputs: Record<string, any> }[] = [];
  const binding: AiBinding = {
    async run(model, inputs) {
      runs.push({ model, inputs });
      const response = answer(inputs);
      if (response instanceof Error) throw response;
      return { response };
    },
  };
  return { runs, binding };
}

async function scrapeWith(ai: AiBinding, input: Omit<ScrapeInput, 'url'>, settings: Record<string, string> = {}) {
  const result = await scrapeWithBuiltin({ url: ARTICLE, ...input }, { env: { ...webEnv(settings), AI: ai } as unknown as Env, signal: signal(), fetch: web().fetch });
  return (result.data as { result: Record<string, any>[] }).result[0]!;
}

describe('summary and json through Workers AI, when the worker has the AI binding', () => {
  it("summarizes the page's Markdown with the default model and answers it as summary", async () => {
    const ai = fakeAi(() => 'The east channel was dredged three weeks early.');
    const page = await scrapeWith(ai.binding, { formats: ['summary'] });
    expect(page.summary).toBe('The east channel was dredged three weeks early.');
    expect(page.markdown).toBeUndefined();
    expect(ai.runs).toHaveLength(1);
    expect(ai.runs[0]!.model).toBe(DEFAULT_MODEL);
    const user = ai.runs[0]!.inputs.messages.at(-1).content as string;
    expect(user).toContain('# East Channel Dredging Finishes Early');
  });

  it('extracts json with the schema in JSON mode and the prompt in the message; SCRAPE_AI_MODEL chooses the model', async () => {
    const schema = { type: 'object', properties: { depth: { type: 'number' } }, required: ['depth'] };
    const ai = fakeAi(() => ({ depth: 13.8 }));
    const page = await scrapeWith(ai.binding, { formats: ['markdown', { type: 'json', schema, prompt: 'the new draught limit' }] }, { SCRAPE_AI_MODEL: '@cf/meta/llama-3.1-8b-instruct-fast' });
    expect(page.json).toEqual({ depth: 13.8 });
    expect(page.markdown).toMatch(/^# East Channel/m);
    expect(ai.runs[0]!.model).toBe('@cf/meta/llama-3.1-8b-instruct-fast');
    expect(ai.runs[0]!.inputs.response_format).toEqual({ type: 'json_schema', json_schema: schema });
    expect(ai.runs[0]!.inputs.messages.at(-1).content).toContain('the new draught limit');
  });

  it('reads JSON a model answers as text, fenced or not; asks for a JSON object without a schema', async () => {
    const ai = fakeAi(() => '```json\n{"berths": [7, 8, 9]}\n```');
    const page = await scrapeWith(ai.binding, { formats: [{ type: 'json', prompt: 'which berths' }] });
    expect(page.json).toEqual({ berths: [7, 8, 9] });
    expect(ai.runs[0]!.inputs.response_format).toEqual({ type: 'json_object' });
  });

  it('cuts a long page before the model', async () => {
    const ai = fakeAi(() => 'Short.');
    const site = web();
    site.setPage('https://news.example.com/long', `<html><body><main><h1>Long</h1><p>${'word '.repeat(20_000)}</p></main></body></html>`);
    await scrapeWithBuiltin({ url: 'https://news.example.com/long', formats: ['summary'] }, { env: { ...webEnv(), AI: ai.binding } as unknown as Env, signal: signal(), fetch: site.fetch });
    expect((ai.runs[0]!.inputs.messages.at(-1).content as string).length).toBeLessThan(MAX_PAGE_CHARS + 200);
  });

  it('answers 422 for a model that does not answer JSON, and 502 when the binding fails', async () => {
    await expect(scrapeWith(fakeAi(() => 'Sorry, I cannot.').binding, { formats: [{ type: 'json', prompt: 'x' }] })).rejects.toMatchObject({ code: 'PROVIDER_ERROR', status: 422 });
    await expect(scrapeWith(fakeAi(() => new Error('3040: Capacity temporarily exceeded')).binding, { formats: ['summary'] })).rejects.toMatchObject({ code: 'PROVIDER_ERROR', status: 502 });
  });

  it('charges the json format as an extraction (0.5 cents) and summary as a page (0.1) through /scrape', async () => {
    const account = await funded(10, 'payg');
    const ai = fakeAi((inputs) => (inputs.response_format ? { name: 'Harbour' } : 'A summary.'));
    const post = (body: unknown) =>
      buildApiApp().fetch(
        new Request('http://sluice.test/scrape', { method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }),
        { ...env, FIRECRAWL_API_KEY: undefined, SCRAPE_DNS_URL: FAKE_DNS_URL, AI: ai.binding },
        createExecutionContext(),
      );
    const extracted = await read(await post({ url: ARTICLE, formats: [{ type: 'json', prompt: 'the name' }] }));
    expect(extracted.data.result[0].json).toEqual({ name: 'Harbour' });
    expect(extracted.meta.costCents).toBe(0.5);
    const summarized = await read(await post({ url: `${ARTICLE}?s`, formats: ['summary'] }));
    expect(summarized.data.result[0].summary).toBe('A summary.');
    expect(summarized.meta.costCents).toBe(0.1);
  });
});
