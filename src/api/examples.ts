import type { Operation } from '../core/operation';

/**
 * One example call of every operation for the OpenAPI document: the input as a caller sends it and the
 * `data` it answers (shortened: real answers carry more rows and fields). Keyed by `<platform>/<name>`;
 * an operation declared as a vendor row carries its own (`example` and `answerExample`, beside the row).
 * test/openapi.test.ts checks that every operation has one and that each input and answer passes the
 * operation's own schemas, so an example cannot drift from what the route accepts.
 */

const monthly = [
  { year: 2026, month: 10, search_volume: 201000 },
  { year: 2026, month: 9, search_volume: 165000 },
];
const keywordInfo = { search_volume: 201000, cpc: 1.42, competition: 1, competition_level: 'HIGH', monthly_searches: monthly };
const buckets = { pos_1: 1210, pos_2_3: 2140, pos_4_10: 6650, pos_11_20: 9880, count: 53120, etv: 412877.4, estimated_paid_traffic_cost: 955311.2 };
const answerItems = (text: string) => [
  {
    type: 'message',
    sections: [{ type: 'text', text, annotations: [{ url: 'https://www.runnersworld.com/gear/a20865766/best-running-shoes/', title: 'Best Running Shoes 2026' }] }],
  },
];

export interface OperationExample {
  /** The body of a POST, the query of a GET. */
  input: Record<string, unknown>;
  /** `data` of the success envelope. */
  data: unknown;
}

export const OPERATION_EXAMPLES: Record<string, OperationExample> = {
  'web/scrape': {
    input: { url: 'https://acme.example/', formats: ['markdown', 'links'] },
    data: {
      result: [
        {
          markdown: '# Acme Anvils\n\nThe sturdiest anvils since 1949.\n',
          links: ['https://acme.example/anvils/classic', 'https://acme.example/anvils/travel'],
          metadata: { title: 'Acme Anvils', description: 'The sturdiest anvils since 1949.', language: 'en', sourceURL: 'https://acme.example/', url: 'https://acme.example/', statusCode: 200 },
        },
      ],
    },
  },
  'web/search': {
    input: { query: 'anvil maintenance', limit: 2 },
    data: {
      result: [
        {
          web: [
            { url: 'https://acme.example/guides/anvil-care', title: 'Caring for your anvil', description: 'Oil the face, keep the horn clean.', position: 1 },
            { url: 'https://forge.example/anvils', title: 'Anvil maintenance basics', description: 'What a smith checks every week.', position: 2 },
          ],
        },
      ],
    },
  },
  'web/map': {
    input: { url: 'https://acme.example', limit: 3 },
    data: {
      result: [
        {
          links: [
            { url: 'https://acme.example/', title: 'Acme Anvils' },
            { url: 'https://acme.example/anvils/classic', title: 'Classic anvil' },
            { url: 'https://acme.example/anvils/travel' },
          ],
        },
      ],
    },
  },
  'seo/serp': {
    input: { keyword: 'running shoes', location_code: 2840, language_code: 'en', device: 'desktop', depth: 10 },
    data: {
      result: [
        {
          keyword: 'running shoes',
          check_url: 'https://www.google.com/search?q=running+shoes&num=10&hl=en&gl=US',
          se_results_count: 1240000000,
          item_types: ['organic', 'people_also_ask'],
          items_count: 2,
          items: [
            { type: 'organic', rank_group: 1, rank_absolute: 1, position: 'left', title: 'Running Shoes | Nike', url: 'https://www.nike.com/w/running-shoes', domain: 'www.nike.com', description: 'Find running shoes for road, trail and track.' },
            { type: 'people_also_ask', rank_group: 1, rank_absolute: 2, position: 'left', items: [{ type: 'people_also_ask_element', title: 'Which running shoes last longest?' }] },
          ],
        },
      ],
    },
  },
  'seo/keyword-ideas': {
    input: { keywords: ['running shoes'], location_code: 2840, language_code: 'en', limit: 2 },
    data: {
      result: [
        {
          total_count: 18230,
          items_count: 2,
          items: [
            { keyword: 'running shoes', keyword_info: keywordInfo, keyword_properties: { keyword_difficulty: 78 } },
            { keyword: 'trail running shoes', keyword_info: { ...keywordInfo, search_volume: 60500, cpc: 1.05 }, keyword_properties: { keyword_difficulty: 61 } },
          ],
        },
      ],
    },
  },
  'seo/keyword-overview': {
    input: { keywords: ['running shoes'], location_code: 2840, language_code: 'en' },
    data: {
      result: [
        {
          items_count: 1,
          items: [
            {
              keyword: 'running shoes',
              keyword_info: keywordInfo,
              keyword_properties: { keyword_difficulty: 78 },
              serp_info: { serp_item_types: ['organic', 'shopping'], se_results_count: 1240000000 },
              search_intent_info: { main_intent: 'commercial' },
            },
          ],
        },
      ],
    },
  },
  'seo/keyword-gap': {
    input: { target1: 'nike.com', target2: 'adidas.com', location_code: 2840, language_code: 'en', limit: 1 },
    data: {
      result: [
        {
          total_count: 48211,
          items_count: 1,
          items: [
            {
              keyword_data: { keyword: 'running shoes', keyword_info: keywordInfo, keyword_properties: { keyword_difficulty: 78 } },
              first_domain_serp_element: { type: 'organic', rank_group: 1, rank_absolute: 1, url: 'https://www.nike.com/w/running-shoes', domain: 'www.nike.com' },
              second_domain_serp_element: { type: 'organic', rank_group: 4, rank_absolute: 5, url: 'https://www.adidas.com/us/running-shoes', domain: 'www.adidas.com' },
            },
          ],
        },
      ],
    },
  },
  'seo/ranked-keywords': {
    input: { target: 'nike.com', location_code: 2840, language_code: 'en', limit: 1 },
    data: {
      result: [
        {
          total_count: 1532077,
          items_count: 1,
          items: [
            {
              keyword_data: { keyword: 'nike', keyword_info: { ...keywordInfo, search_volume: 2740000 }, keyword_properties: { keyword_difficulty: 91 } },
              ranked_serp_element: { serp_item: { type: 'organic', rank_group: 1, rank_absolute: 1, url: 'https://www.nike.com/', domain: 'www.nike.com', title: 'Nike. Just Do It', etv: 2137200 } },
            },
          ],
        },
      ],
    },
  },
  'seo/competitors': {
    input: { target: 'nike.com', location_code: 2840, language_code: 'en', limit: 2 },
    data: {
      result: [
        {
          total_count: 9403,
          items_count: 2,
          items: [
            { domain: 'nike.com', avg_position: 23.4, sum_position: 1243210, intersections: 53120, full_domain_metrics: { organic: buckets } },
            { domain: 'adidas.com', avg_position: 31.2, sum_position: 987320, intersections: 21877, full_domain_metrics: { organic: { ...buckets, count: 31650, etv: 201344.1 } } },
          ],
        },
      ],
    },
  },
  'seo/referring-domains': {
    input: { target: 'acme.example', limit: 1 },
    data: {
      result: [
        {
          total_count: 412,
          items_count: 1,
          items: [{ type: 'backlinks_referring_domain', domain: 'forge.example', rank: 312, backlinks: 27, first_seen: '2024-03-18 09:12:44 +00:00', lost_date: null, backlinks_spam_score: 3, broken_backlinks: 0, referring_domains: 1, referring_pages: 14 }],
        },
      ],
    },
  },
  'seo/backlink-gap': {
    input: { targets: ['competitor-a.com', 'competitor-b.com'], exclude_targets: ['acme.example'], limit: 1 },
    data: {
      result: [
        {
          total_count: 88,
          items_count: 1,
          items: [
            {
              domain_intersection: {
                '1': { type: 'backlinks_domain_intersection', target: 'competitor-a.com', rank: 402, backlinks: 12, first_seen: '2025-01-04 11:00:00 +00:00', lost_date: null, backlinks_spam_score: 1 },
                '2': { type: 'backlinks_domain_intersection', target: 'competitor-b.com', rank: 402, backlinks: 3, first_seen: '2025-06-21 17:30:00 +00:00', lost_date: null, backlinks_spam_score: 1 },
              },
            },
          ],
        },
      ],
    },
  },
  'seo/backlinks-summary': {
    input: { target: 'acme.example' },
    data: {
      result: [
        {
          target: 'acme.example',
          rank: 268,
          backlinks: 15342,
          backlinks_spam_score: 4,
          referring_domains: 412,
          referring_main_domains: 377,
          broken_backlinks: 21,
          broken_pages: 3,
          first_seen: '2019-08-02 00:00:00 +00:00',
          referring_links_tld: { com: 9120, org: 1204 },
          referring_links_types: { anchor: 14801, image: 541 },
          referring_links_attributes: { nofollow: 2210 },
        },
      ],
    },
  },
  'seo/domain-overview': {
    input: { target: 'nike.com', location_code: 2840, language_code: 'en' },
    data: { result: [{ target: 'nike.com', total_count: 1, items_count: 1, items: [{ se_type: 'google', location_code: 2840, language_code: 'en', metrics: { organic: buckets } }] }] },
  },
  'seo/tech-search': {
    input: { technologies: ['WordPress'], limit: 1 },
    data: {
      result: [
        {
          total_count: 1904223,
          items_count: 1,
          items: [
            { domain: 'acme.example', title: 'Acme Anvils', domain_rank: 268, last_visited: '2026-10-30 04:10:12 +00:00', country_iso_code: 'US', language_code: 'en', technologies: { content: { cms: ['WordPress'] } } },
          ],
        },
      ],
    },
  },
  'seo/ai-visibility': {
    input: { targets: ['acme.example'], keywords: ['anvil'], limit: 1 },
    data: {
      result: [
        {
          total_count: 1,
          items_count: 1,
          aggregated_metrics: { platform: [{ key: 'chat_gpt', mentions: 131, ai_search_volume: 4400 }], total: { mentions: 131, ai_search_volume: 4400 } },
          items: [{ domain: 'acme.example', platform: [{ key: 'chat_gpt', mentions: 42, ai_search_volume: 1300 }], total: { mentions: 42, ai_search_volume: 1300 } }],
        },
      ],
    },
  },
  'seo/chatgpt-api-answer': {
    input: { user_prompt: 'Which running shoes last longest?', model_name: 'gpt-4o-mini' },
    data: {
      result: [
        { model_name: 'gpt-4o-mini', input_tokens: 14, output_tokens: 212, reasoning_tokens: 0, web_search: false, datetime: '2026-11-22 10:00:00 +00:00', items: answerItems('Shoes with a thick rubber outsole and a durable foam such as...') },
      ],
    },
  },
  'seo/perplexity-api-answer': {
    input: { user_prompt: 'Which running shoes last longest?', model_name: 'sonar' },
    data: {
      result: [
        { model_name: 'sonar', input_tokens: 9, output_tokens: 187, reasoning_tokens: 0, web_search: true, datetime: '2026-11-22 10:00:00 +00:00', items: answerItems('Durable picks include trainers with carbon rubber outsoles...') },
      ],
    },
  },
  'seo/claude-api-answer': {
    input: { user_prompt: 'Which running shoes last longest?', model_name: 'claude-haiku-4-5' },
    data: {
      result: [
        { model_name: 'claude-haiku-4-5', input_tokens: 16, output_tokens: 240, reasoning_tokens: 0, web_search: false, datetime: '2026-11-22 10:00:00 +00:00', items: answerItems('Longevity depends mostly on the outsole rubber and the midsole foam...') },
      ],
    },
  },
  'seo/chatgpt-app-answer': {
    input: { keyword: 'best running shoes for flat feet', location_code: 2840, language_code: 'en' },
    data: {
      result: [
        {
          keyword: 'best running shoes for flat feet',
          location_code: 2840,
          language_code: 'en',
          model: 'gpt-5',
          datetime: '2026-11-22 10:00:00 +00:00',
          markdown: 'For flat feet, look for stability shoes with a firm medial post...',
          sources: [{ url: 'https://www.runnersworld.com/gear/flat-feet/', title: 'Best Shoes for Flat Feet', domain: 'www.runnersworld.com', snippet: 'Stability shoes...' }],
        },
      ],
    },
  },
};

/** The example of an operation: its entry above, else the example call and answer its vendor row declares. */
export function exampleOf(operation: Pick<Operation, 'platform' | 'name' | 'example' | 'answerExample'>): OperationExample | undefined {
  const written = OPERATION_EXAMPLES[`${operation.platform}/${operation.name}`];
  if (written) return written;
  if (operation.example === undefined) return undefined;
  return { input: operation.example as Record<string, unknown>, data: operation.answerExample };
}
