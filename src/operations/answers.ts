import { z } from '@hono/zod-openapi';
import { unitsFromCents } from '../core/money';
import { dataforseoLive, escapeKeyword } from '../providers/dataforseo';
import { perRequest } from './pricing';
import { languageCode, locationCode } from './row-query';
import { defineOperation, type Operation, type Price } from '../core/operation';

/** Model-answer endpoints A-D: /chatgpt-api-answer, /perplexity-api-answer, /claude-api-answer, /chatgpt-app-answer. */

// A live answer can take up to 95 seconds (spec); repeated sampling is the point, so never cached.
const ANSWER_TIME_LIMIT_MS = 95_000;

const userPrompt = z.string().trim().min(1).max(500).openapi({ description: 'The question, up to 500 characters.', example: 'Which CRM is best for a 10-person sales team?' });
const maxOutputTokens = z
  .number()
  .int()
  .min(16)
  .max(2048)
  .default(1024)
  .openapi({ description: '16-2048. Web search can push the output slightly beyond it.' });
// No regex flags: they are lost in the OpenAPI document.
const countryCode = z
  .string()
  .regex(/^[A-Za-z]{2}$/, 'A two-letter country code such as US.')
  .optional()
  .openapi({ description: 'Two-letter country code the web search is made from.', example: 'US' });
const webSearch = z.boolean().default(true).openapi({ description: 'Let the model search the web and cite sources.' });
const forceWebSearch = z.boolean().default(false).openapi({ description: 'Make the model search the web; needs web_search.' });

type Refinement = (input: { web_search: boolean; force_web_search: boolean }, context: z.RefinementCtx) => void;
const forceNeedsWebSearch: Refinement = (input, context) => {
  if (input.force_web_search && !input.web_search) {
    context.addIssue({ code: 'custom', path: ['force_web_search'], message: 'force_web_search needs web_search to be true.' });
  }
};

const ChatGptApiInput = z
  .strictObject({
    user_prompt: userPrompt,
    model_name: z.enum(['gpt-4o-mini', 'gpt-4o', 'gpt-5-mini']).default('gpt-4o-mini'),
    max_output_tokens: maxOutputTokens.openapi({ description: '16-2048; gpt-5-mini (a reasoning model) needs at least 1024. Web search can push the output slightly beyond it.' }),
    web_search: webSearch,
    force_web_search: forceWebSearch,
    web_search_country_iso_code: countryCode,
  })
  .superRefine((input, context) => {
    forceNeedsWebSearch(input, context);
    if (input.model_name === 'gpt-5-mini' && input.max_output_tokens < 1024) {
      context.addIssue({ code: 'custom', path: ['max_output_tokens'], message: 'gpt-5-mini needs max_output_tokens of at least 1024.' });
    }
  });

// Sonar models always search the web, so web_search and force_web_search are refused as unknown fields.
const PerplexityApiInput = z.strictObject(
  {
    user_prompt: userPrompt,
    model_name: z.enum(['sonar', 'sonar-pro']).default('sonar'),
    max_output_tokens: maxOutputTokens,
    web_search_country_iso_code: countryCode,
  },
  {
    error: (issue) =>
      issue.code === 'unrecognized_keys' && issue.keys.some((key) => key === 'web_search' || key === 'force_web_search')
        ? 'Not accepted here: Perplexity sonar models always search the web.'
        : undefined,
  },
);

const ClaudeApiInput = z
  .strictObject({
    user_prompt: userPrompt,
    model_name: z.enum(['claude-haiku-4-5', 'claude-sonnet-4-5']).default('claude-haiku-4-5'),
    max_output_tokens: maxOutputTokens,
    web_search: webSearch,
    force_web_search: forceWebSearch,
    web_search_country_iso_code: countryCode,
  })
  .superRefine(forceNeedsWebSearch);

const ChatGptAppInput = z.strictObject({
  keyword: z
    .string()
    .trim()
    .min(1)
    .max(2000)
    .openapi({ description: 'The question as a user would type it, up to 2000 characters.', example: 'best crm for small business' }),
  location_code: locationCode.openapi({ description: 'Country the logged-out user asks from; common: 2840 US, 2826 UK, 2124 CA, 2036 AU, 2276 DE.' }),
  language_code: languageCode,
});

// ---------------------------------------------------------------- payloads (documentation only)

const int = () => z.number().int();

const ApiAnswerPayload = z
  .object({
    result: z
      .array(
        z
          .object({
            model_name: z.string(),
            input_tokens: int(),
            output_tokens: int(),
            reasoning_tokens: int(),
            web_search: z.boolean(),
            datetime: z.string(),
            fan_out_queries: z.array(z.string()).nullable(),
            items: z
              .array(
                z
                  .object({
                    type: z.string().openapi({ description: 'message holds the answer (reasoning elements may precede it).' }),
                    sections: z.array(
                      z
                        .object({
                          type: z.string(),
                          text: z.string().openapi({ description: 'The answer text.' }),
                          annotations: z
                            .array(z.object({ url: z.string(), title: z.string() }).partial())
                            .nullable()
                            .openapi({ description: 'Citations; not guaranteed. An answer without sources is valid.' }),
                        })
                        .partial(),
                    ),
                  })
                  .partial(),
              )
              .openapi({ description: 'The element with type message carries the answer in sections[].text and citations in sections[].annotations[].' }),
          })
          .partial(),
      )
      .openapi({ description: 'result[0]: the answer (items[] of type message) and its token counts.' }),
  });

const AppAnswerPayload = z
  .object({
    result: z
      .array(
        z
          .object({
            keyword: z.string(),
            location_code: int(),
            language_code: z.string(),
            model: z.string(),
            datetime: z.string(),
            markdown: z.string().openapi({ description: 'The answer as Markdown.' }),
            sources: z
              .array(z.object({ url: z.string(), title: z.string(), domain: z.string(), snippet: z.string() }).partial())
              .nullable()
              .openapi({ description: 'Sources the answer cited; may be empty.' }),
            search_results: z.array(z.object({ url: z.string(), title: z.string(), domain: z.string() }).partial()).nullable(),
            fan_out_queries: z.array(z.string()).nullable(),
          })
          .partial(),
      )
      .openapi({ description: 'result[0].markdown and result[0].sources[] (url, title, domain).' }),
  });

// ---------------------------------------------------------------- prices

/** A flat price per request that depends on the model asked. */
function byModel<Model extends string>(cents: Record<Model, number>): Price<{ model_name: Model }> {
  const values = Object.values<number>(cents);
  const listed = Object.entries<number>(cents)
    .map(([model, price]) => `${model} ${price}`)
    .join(', ');
  return {
    display: { cents: Math.min(...values), per: 'request', note: `from ${Math.min(...values)} cents; by model: ${listed}` },
    quote: (input) => unitsFromCents(cents[input.model_name]),
    settle: (input) => unitsFromCents(cents[input.model_name]),
  };
}

// ---------------------------------------------------------------- the registry

const llmResponses = (vendor: string) => `/v3/ai_optimization/${vendor}/llm_responses/live`;

/** The country code travels upper-case, as the upstream lists it. */
function country(code: string | undefined): string | undefined {
  return code?.toUpperCase();
}

export const answerOperations: Operation[] = [
  defineOperation({
    platform: 'seo',
    name: 'chatgpt-api-answer',
    method: 'POST',
    paths: ['/chatgpt-api-answer', '/v1/data/seo/chatgpt-api-answer'],
    summary: "ChatGPT's answer through OpenAI's API",
    description:
      "Asks an OpenAI model through its programmatic API (not the consumer app). The answer is result[0].items[] of type message: text in sections[].text, citations in sections[].annotations[] (url, title); token counts on result[0]. Citations are not guaranteed. Up to 95 s; a longer answer fails and is not charged. Never cached: asking again samples again.",
    input: ChatGptApiInput,
    output: ApiAnswerPayload,
    price: byModel({ 'gpt-4o-mini': 0.2, 'gpt-5-mini': 0.5, 'gpt-4o': 1 }),
    call: dataforseoLive(llmResponses('chat_gpt'), (input) => ({ ...input, web_search_country_iso_code: country(input.web_search_country_iso_code) })),
    timeoutMs: ANSWER_TIME_LIMIT_MS,
    freshnessMs: 0,
  }),
  defineOperation({
    platform: 'seo',
    name: 'perplexity-api-answer',
    method: 'POST',
    paths: ['/perplexity-api-answer', '/v1/data/seo/perplexity-api-answer'],
    summary: "Perplexity's answer through its API",
    description:
      "Asks a Perplexity sonar model through its programmatic API. Sonar models always search the web, so web_search and force_web_search are not accepted. The answer is result[0].items[] of type message: text in sections[].text, citations in sections[].annotations[] (url, title); token counts on result[0]. Up to 95 s; a longer answer fails and is not charged. Never cached.",
    input: PerplexityApiInput,
    output: ApiAnswerPayload,
    price: byModel({ sonar: 0.2, 'sonar-pro': 1 }),
    call: dataforseoLive(llmResponses('perplexity'), (input) => ({ ...input, web_search_country_iso_code: country(input.web_search_country_iso_code) })),
    timeoutMs: ANSWER_TIME_LIMIT_MS,
    freshnessMs: 0,
  }),
  defineOperation({
    platform: 'seo',
    name: 'claude-api-answer',
    method: 'POST',
    paths: ['/claude-api-answer', '/v1/data/seo/claude-api-answer'],
    summary: "Claude's answer through Anthropic's API",
    description:
      "Asks an Anthropic Claude model through its programmatic API. The answer is result[0].items[] of type message: text in sections[].text, citations in sections[].annotations[] (url, title); token counts on result[0]. Citations are not guaranteed. Up to 95 s; a longer answer fails and is not charged. Never cached.",
    input: ClaudeApiInput,
    output: ApiAnswerPayload,
    price: byModel({ 'claude-haiku-4-5': 0.3, 'claude-sonnet-4-5': 1 }),
    call: dataforseoLive(llmResponses('claude'), (input) => ({ ...input, web_search_country_iso_code: country(input.web_search_country_iso_code) })),
    timeoutMs: ANSWER_TIME_LIMIT_MS,
    freshnessMs: 0,
  }),
  defineOperation({
    platform: 'seo',
    name: 'chatgpt-app-answer',
    method: 'POST',
    paths: ['/chatgpt-app-answer', '/v1/data/seo/chatgpt-app-answer'],
    summary: 'What the ChatGPT app answers a logged-out user',
    description:
      'The answer the ChatGPT consumer app gives a logged-out user in the chosen country: result[0].markdown and the cited result[0].sources[] (url, title, domain). Up to 95 s; a longer answer fails and is not charged. Never cached.',
    input: ChatGptAppInput,
    output: AppAnswerPayload,
    price: perRequest(0.5),
    call: dataforseoLive('/v3/ai_optimization/chat_gpt/llm_scraper/live/advanced', (input) => ({ ...input, keyword: escapeKeyword(input.keyword) })),
    timeoutMs: ANSWER_TIME_LIMIT_MS,
    freshnessMs: 0,
  }),
];
