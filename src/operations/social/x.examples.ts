/**
 * The `data` each X row answers, for the OpenAPI document: shortened from test/fixtures/twitter-api45
 * (twitter283 for the translation, xai for the assistant).
 * test/openapi.test.ts parses each against its row's `output` schema.
 */

const post = {
  tweet_id: '1789391226282107207',
  created_at: 'Sat Nov 21 15:04:12 +0000 2026',
  text: 'Workers now start in under 5 ms everywhere.',
  lang: 'en',
  favorites: 431,
  retweets: 96,
  replies: 27,
  views: '52000',
  author: { rest_id: '32373', name: 'Cloudflare', screen_name: 'Cloudflare', blue_verified: true },
};

export const xAnswers = {
  'user-info': {
    status: 'active',
    profile: 'Cloudflare',
    rest_id: '32373',
    name: 'Cloudflare',
    desc: 'The connectivity cloud.',
    blue_verified: true,
    followers: 240000,
    friends: 612,
    statuses_count: 17000,
    created_at: 'Tue Jan 30 03:23:05 +0000 2007',
  },
  'user-posts': { timeline: [post], next_cursor: 'DAABCgABGUyyLZe__-YKAAIZSw', user: { name: 'Cloudflare', screen_name: 'Cloudflare', rest_id: '32373' } },
  search: { timeline: [post], next_cursor: 'DAACCgACGUyyLZe__-YKAAMZ' },
  hashtag: { timeline: [post], next_cursor: 'DAACCgACGUyyLZe__-YKAAMZ' },
  post: {
    text: 'Workers now start in under 5 ms everywhere.',
    created_at: 'Sat Nov 21 15:04:12 +0000 2026',
    likes: 431,
    retweets: 96,
    quotes: 8,
    author: { screen_name: 'Cloudflare', rest_id: '32373', name: 'Cloudflare', followers_count: 240000, blue_verified: true },
  },
  'post-replies': {
    timeline: [{ ...post, tweet_id: '1789399000000000000', text: '@Cloudflare impressive', favorites: 3, retweets: 0, replies: 0, views: '410', author: { rest_id: '98765', name: 'Edge Fan', screen_name: 'edgefan', blue_verified: false } }],
    next_cursor: 'DAADDAABCgAB',
  },
  list: { timeline: [post], next_cursor: 'DAABCgABGUyyMw' },
  trends: {
    trends: [
      { name: '#BlackFriday', description: '128K posts', context: 'Trending in United States' },
      { name: 'Thanksgiving', description: '412K posts', context: 'Trending in United States' },
    ],
  },
  'post-translation': {
    data: {
      tweet_results: {
        rest_id: '1789391226282107207',
        result: {
          __typename: 'Tweet',
          rest_id: '1789391226282107207',
          translate_tweet: {
            destination_language: 'ja',
            entities: {},
            localized_source_language: 'English',
            source_language: 'en',
            translation: 'Workers はどこでも 5 ミリ秒未満で起動するようになりました。',
            translation_source: 'Google',
            translation_state: 'Success',
          },
        },
      },
    },
  },
  assistant: {
    id: 'f3c2a1d0-7e5b-4c8a-9d6e-2b1a0c9f8e7d',
    object: 'response',
    created_at: 1795791852,
    completed_at: 1795791897,
    model: 'grok-4.7',
    status: 'completed',
    output: [
      {
        id: 'msg_f3c2a1d0-7e5b-4c8a-9d6e-2b1a0c9f8e7d',
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [
          {
            type: 'output_text',
            text: 'Posts on X this week mostly discuss faster Worker start-up and the new limits; developers compare cold starts favourably.',
            logprobs: null,
            annotations: [],
          },
        ],
      },
    ],
    tools: [{ type: 'x_search' }],
    tool_choice: 'auto',
    parallel_tool_calls: true,
    store: false,
    usage: { input_tokens: 5120, input_tokens_details: { cached_tokens: 0 }, output_tokens: 96, output_tokens_details: { reasoning_tokens: 410 }, total_tokens: 5626, num_sources_used: 0, num_server_side_tools_used: 4 },
  },
};
