import { z } from '@hono/zod-openapi';
import { rapidApiAnswers, rapidApiVendor } from '../../providers/rapidapi';
import { xai } from '../../providers/xai';
import { row, vendorOperations } from '../vendor-operations';
import { cursor, hashtag, HOUR, numericId, query } from './fields';
import { xAnswers } from './x.examples';

/**
 * Microblog: Twitter API45 on RapidAPI (alexanderxbx, twitter-api45.p.rapidapi.com). Answers are the payload
 * itself; pages carry `next_cursor`.
 */
const xVendor = rapidApiVendor({ id: 'twitter-api45', label: 'The X data provider', settingsPrefix: 'X', read: rapidApiAnswers.whole });

/**
 * The platform's own translation of a post: Twitter283 on RapidAPI (twitter283.p.rapidapi.com), whose
 * `TranslateTweet` answers `{data: {tweet_results: {rest_id, result: {translate_tweet}}}}`. Twitter API45 has
 * no translation. An answer without `translate_tweet` is a post the vendor could not translate.
 */
const xTranslationVendor = rapidApiVendor({
  id: 'twitter283',
  label: 'The X translation provider',
  settingsPrefix: 'TWITTER283',
  read(body) {
    const reading = rapidApiAnswers.whole(body);
    if (!reading.ok) return reading;
    const translated = (body as { data?: { tweet_results?: { result?: { translate_tweet?: unknown } } } }).data?.tweet_results?.result?.translate_tweet;
    return translated ? reading : { ok: false, message: 'No translation of this post.' };
  },
});

const screenname = z.string().regex(/^@?[A-Za-z0-9_]{1,15}$/, 'An X handle: 1-15 letters, digits or _, with or without @.').openapi({ example: 'cloudflare' });
const postId = numericId('1789391226282107207').openapi({ description: 'The numeric id of a post, as in /status/<id>.' });
const Timeline = z.looseObject({ timeline: z.array(z.looseObject({ tweet_id: z.string(), text: z.string() })), next_cursor: z.string().optional() });
const fiveMinutes = 5 * 60 * 1000;
/** The `next_cursor` of the previous answer. */
const nextCursor = cursor('DAABCgABGUyyLZe__-YKAAIZSw');

const xPostOperations = vendorOperations({ platform: 'x', vendor: xVendor, timeoutMs: 30_000, freshnessMs: fiveMinutes }, [
  row({
    name: 'user-info',
    summary: 'User profile',
    description: 'A user by handle: name, bio, verification, follower and following counts, id (`rest_id`).',
    input: z.strictObject({ screenname }),
    example: { screenname: 'cloudflare' },
    answerExample: xAnswers['user-info'],
    output: z.looseObject({ profile: z.string(), rest_id: z.string(), followers: z.number() }),
    endpoint: { path: 'screenname.php' },
    price: 0.3,
    freshnessMs: HOUR,
  }),
  row({
    name: 'user-posts',
    summary: "A user's posts",
    description: 'The user timeline, newest first, with the pinned post; page on with `cursor` from `next_cursor`.',
    input: z.strictObject({ screenname, cursor: nextCursor }),
    example: { screenname: 'cloudflare' },
    answerExample: xAnswers['user-posts'],
    output: Timeline,
    endpoint: { path: 'timeline.php' },
    price: 0.3,
  }),
  row({
    name: 'search',
    summary: 'Search posts or people',
    description: 'Posts (top or latest), people or media matching a query; search operators (from:, since:, lang:) work.',
    input: z.strictObject({
      query: query(500, 'cloudflare workers'),
      search_type: z.enum(['Top', 'Latest', 'People', 'Media']).default('Top').openapi({ example: 'Latest' }),
      cursor: nextCursor,
    }),
    example: { query: 'cloudflare workers' },
    answerExample: xAnswers.search,
    output: Timeline,
    endpoint: { path: 'search.php' },
    price: 0.3,
  }),
  row({
    name: 'hashtag',
    summary: 'Posts with a hashtag',
    description: 'Latest or top posts carrying a hashtag (give it without #).',
    input: z.strictObject({
      tag: hashtag('serverless'),
      search_type: z.enum(['Top', 'Latest']).default('Latest').openapi({ example: 'Top' }),
      cursor: nextCursor,
    }),
    example: { tag: 'serverless' },
    answerExample: xAnswers.hashtag,
    output: Timeline,
    endpoint: { path: 'search.php', rename: { tag: 'query' }, prefix: { tag: '#' } },
    price: 0.3,
  }),
  row({
    name: 'post',
    summary: 'One post',
    description: 'A post by id: text, author, media, and like, repost, reply, quote, bookmark and view counts.',
    input: z.strictObject({ id: postId }),
    example: { id: '1789391226282107207' },
    answerExample: xAnswers.post,
    output: z.looseObject({ text: z.string(), author: z.looseObject({ screen_name: z.string() }) }),
    endpoint: { path: 'tweet.php' },
    price: 0.3,
    freshnessMs: HOUR,
  }),
  row({
    name: 'post-replies',
    summary: "A post's replies",
    description: 'Replies to a post, newest first; page on with `cursor`.',
    input: z.strictObject({ id: postId, cursor: nextCursor }),
    example: { id: '1789391226282107207' },
    answerExample: xAnswers['post-replies'],
    output: Timeline,
    endpoint: { path: 'latest_replies.php' },
    price: 0.3,
  }),
  row({
    name: 'list',
    summary: "A list's timeline",
    description: 'Posts of the members of a list, newest first; page on with `cursor`.',
    input: z.strictObject({ list_id: numericId('1177128103228989440'), cursor: nextCursor }),
    example: { list_id: '1177128103228989440' },
    answerExample: xAnswers.list,
    output: Timeline,
    endpoint: { path: 'listtimeline.php' },
    price: 0.3,
  }),
  row({
    name: 'trends',
    summary: 'Trends in a country',
    description: 'What is trending now in a country, named as the vendor names it (UnitedStates, UnitedKingdom, Japan, ...).',
    input: z.strictObject({ country: z.string().regex(/^[A-Za-z]{2,40}$/, 'A country name without spaces, such as UnitedStates.').default('UnitedStates') }),
    example: { country: 'UnitedStates' },
    answerExample: xAnswers.trends,
    output: z.looseObject({ trends: z.array(z.looseObject({ name: z.string() })) }),
    endpoint: { path: 'trends.php' },
    price: 0.3,
  }),
]);

/** A language as X names it: an ISO 639 code, with a region where X distinguishes one (zh-cn, zh-tw). */
const language = z.string().regex(/^[A-Za-z]{2,3}(-[A-Za-z]{2,4})?$/, 'A language code such as en, ja or zh-tw.').openapi({ example: 'en' });

const xTranslationOperations = vendorOperations({ platform: 'x', vendor: xTranslationVendor, timeoutMs: 30_000, freshnessMs: 24 * HOUR }, [
  row({
    name: 'post-translation',
    summary: 'A post, translated',
    description: "The platform's own translation of a post into a language: the translated text, the detected source language and the translation engine.",
    input: z.strictObject({ id: postId, language }),
    example: { id: '1789391226282107207', language: 'ja' },
    answerExample: xAnswers['post-translation'],
    output: z.looseObject({
      data: z.looseObject({
        tweet_results: z.looseObject({
          result: z.looseObject({
            translate_tweet: z.looseObject({ translation: z.string(), source_language: z.string(), destination_language: z.string() }),
          }),
        }),
      }),
    }),
    endpoint: { path: 'TranslateTweet', rename: { id: 'tweet_id' } },
    price: 0.5,
  }),
]);

/**
 * The platform's assistant: Grok, through xAI's Responses API with its X Search tool, so the answer is drawn
 * from posts on X. The model is named in the row; when xAI retires it, the row changes.
 */
const xAssistantOperations = vendorOperations({ platform: 'x', vendor: xai, timeoutMs: 95_000, freshnessMs: 15 * 60 * 1000 }, [
  row({
    name: 'assistant',
    summary: "Grok's answer, from posts on X",
    description:
      "The platform's assistant (Grok) answers a question after searching X itself (keywords, people, threads). The answer is xAI's response object: the text is the `output_text` of the `message` item in `output`.",
    method: 'POST',
    input: z.strictObject({
      question: z.string().trim().min(1).max(500).openapi({ description: 'The question, up to 500 characters.', example: 'What are people on X saying about Cloudflare Workers this week?' }),
    }),
    example: { question: 'What are people on X saying about Cloudflare Workers this week?' },
    answerExample: xAnswers.assistant,
    output: z.looseObject({
      id: z.string(),
      status: z.literal('completed'),
      output: z.array(z.looseObject({ type: z.string() })),
    }),
    endpoint: { method: 'POST', path: 'v1/responses', rename: { question: 'input' }, fixed: { model: 'grok-4.7', tools: [{ type: 'x_search' }], store: false } },
    price: 30,
  }),
]);

export const xOperations = [...xPostOperations, ...xTranslationOperations, ...xAssistantOperations];
