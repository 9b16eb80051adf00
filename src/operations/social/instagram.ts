import { z } from '@hono/zod-openapi';
import { rapidApiAnswers, rapidApiVendor } from '../../providers/rapidapi';
import { row, vendorOperations } from '../vendor-operations';
import { count, cursor, hashtag, HOUR, numericId, platformUrl, query } from './fields';
import { instagramAnswers } from './instagram.examples';

/**
 * Photo sharing: Instagram Looter on RapidAPI (IRROR Systems, instagram-looter2.p.rapidapi.com), whose
 * endpoint groups are the spec's own: global search, location, hashtag, user insight, identity utility,
 * media detail, explore feed. Answers are the payload itself; a failure says `status: false`. Paths, parameters
 * and answer fields follow the vendor's own API reference (IRROR Systems' "Instagram Looter API" document).
 */
const instagramVendor = rapidApiVendor({ id: 'instagram-looter2', label: 'The Instagram data provider', settingsPrefix: 'INSTAGRAM', read: rapidApiAnswers.whole });

const username = z.string().regex(/^@?[A-Za-z0-9._]{1,30}$/, 'An Instagram username: 1-30 letters, digits, . or _.').openapi({ example: 'nasa' });
const fifteenMinutes = 15 * 60 * 1000;

export const instagramOperations = vendorOperations({ platform: 'instagram', vendor: instagramVendor, timeoutMs: 30_000, freshnessMs: HOUR }, [
  row({
    name: 'search',
    summary: 'Global search: users, hashtags and places',
    description: 'What the app\'s search box finds for a query: matching users, hashtags and places.',
    input: z.strictObject({ query: query(100, 'nasa'), select: z.enum(['users', 'hashtags', 'places']).optional().openapi({ example: 'users' }) }),
    example: { query: 'nasa' },
    answerExample: instagramAnswers.search,
    output: z.looseObject({ users: z.array(z.unknown()).optional(), hashtags: z.array(z.unknown()).optional(), places: z.array(z.unknown()).optional() }),
    endpoint: { path: 'search' },
    price: 0.5,
  }),
  row({
    name: 'location',
    summary: 'A location',
    description: 'A place by its location id (see search with select=places): name, category, coordinates, address, post count, business hours.',
    input: z.strictObject({ id: numericId('219045149') }),
    example: { id: '219045149' },
    answerExample: instagramAnswers.location,
    output: z.looseObject({ location_info: z.looseObject({ location_id: z.string(), name: z.string() }) }),
    endpoint: { path: 'location-info' },
    price: 0.5,
  }),
  row({
    name: 'location-posts',
    summary: 'Posts at a location',
    description: 'Media tagged at a location, most recent or top-ranked; page on with `end_cursor` from `page_info.end_cursor`.',
    input: z.strictObject({
      id: numericId('219045149'),
      tab: z.enum(['recent', 'ranked']).default('recent').openapi({ description: 'recent: newest first; ranked: most popular.', example: 'ranked' }),
      end_cursor: cursor('a7b13800275848929a96cf3549813b25'),
    }),
    example: { id: '219045149' },
    answerExample: instagramAnswers['location-posts'],
    output: z.looseObject({ edges: z.array(z.looseObject({ node: z.unknown() })), page_info: z.looseObject({ has_next_page: z.boolean() }) }),
    endpoint: { path: 'location-feeds' },
    price: 0.5,
    freshnessMs: fifteenMinutes,
  }),
  row({
    name: 'hashtag',
    summary: 'Posts with a hashtag',
    description: "A hashtag's recent and top posts and its post count (give it without #); page on with `end_cursor` from `edge_hashtag_to_media.page_info.end_cursor`.",
    input: z.strictObject({
      tag: hashtag('space'),
      end_cursor: cursor('QVFDbnJ4'),
    }),
    example: { tag: 'space' },
    answerExample: instagramAnswers.hashtag,
    output: z.looseObject({
      data: z.looseObject({ hashtag: z.looseObject({ name: z.string(), edge_hashtag_to_media: z.looseObject({ count: z.number() }) }) }),
    }),
    endpoint: { path: 'tag-feeds', rename: { tag: 'query' } },
    price: 0.5,
    freshnessMs: fifteenMinutes,
  }),
  row({
    name: 'user-info',
    summary: 'User insight by username',
    description: 'A profile: name, biography, category, verification, follower, following and post counts, business contact where public.',
    input: z.strictObject({ username }),
    example: { username: 'nasa' },
    answerExample: instagramAnswers['user-info'],
    output: z.looseObject({ id: z.string(), username: z.string(), edge_followed_by: z.looseObject({ count: z.number() }) }),
    endpoint: { path: 'profile' },
    price: 0.5,
  }),
  row({
    name: 'user-posts',
    summary: "A user's media",
    description: 'Media posted by a user id (see user-id), newest first, up to 50 a page; page on with `max_id` from the answer\'s `next_max_id`.',
    input: z.strictObject({ id: numericId('528817151'), count: count(1, 50, 12), max_id: cursor('3363840123456789012_528817151') }),
    example: { id: '528817151' },
    answerExample: instagramAnswers['user-posts'],
    output: z.looseObject({ items: z.array(z.looseObject({ code: z.string() })), more_available: z.boolean(), next_max_id: z.string().optional() }),
    endpoint: { path: 'user-feeds' },
    price: 0.5,
    freshnessMs: fifteenMinutes,
  }),
  row({
    name: 'user-id',
    summary: 'Username to user id',
    description: 'The numeric user id of a username, which the media and insight lookups take.',
    input: z.strictObject({ username }),
    example: { username: 'nasa' },
    answerExample: instagramAnswers['user-id'],
    output: z.looseObject({ user_id: z.string() }),
    endpoint: { path: 'id' },
    price: 0.2,
    freshnessMs: 24 * HOUR,
  }),
  row({
    name: 'username',
    summary: 'User id to username',
    description: 'The current username of a numeric user id (usernames change; ids do not).',
    input: z.strictObject({ id: numericId('528817151') }),
    example: { id: '528817151' },
    answerExample: instagramAnswers.username,
    output: z.looseObject({ username: z.string() }),
    // The same `/id` path as user-id: the vendor answers id → username when given `id`.
    endpoint: { path: 'id' },
    price: 0.2,
  }),
  row({
    name: 'media',
    summary: 'Media detail by URL',
    description: 'A post or reel by its URL: caption, owner, media URLs, dimensions, like, comment and view counts.',
    input: z.strictObject({ url: platformUrl(['instagram.com'], 'https://www.instagram.com/p/C6q-XnGsTCz/') }),
    example: { url: 'https://www.instagram.com/p/C6q-XnGsTCz/' },
    answerExample: instagramAnswers.media,
    output: z.looseObject({ shortcode: z.string(), owner: z.looseObject({ username: z.string() }) }),
    endpoint: { path: 'post' },
    price: 0.5,
  }),
  row({
    name: 'explore',
    summary: 'Explore feed sections',
    description: 'The explore feed\'s topic sections (TV & Movies, Games, ...) with their subsections; give a `section_id` to explore-section for its media.',
    input: z.strictObject({}),
    example: {},
    answerExample: instagramAnswers.explore,
    output: z.looseObject({ sections: z.array(z.looseObject({ section_id: z.string(), name: z.string() })) }),
    endpoint: { path: 'sections' },
    price: 0.5,
    freshnessMs: fifteenMinutes,
  }),
  row({
    name: 'explore-section',
    summary: 'Media of an explore section',
    description: 'The media of one explore section, up to 50 a page; page on with `max_id` from the answer.',
    input: z.strictObject({
      id: z.string().regex(/^[A-Za-z0-9_:-]{1,100}$/, 'A section id from explore.').openapi({ description: 'A `section_id` from explore.', example: '10155994923880727' }),
      count: count(1, 50, 12),
      max_id: cursor('3022944298396964424'),
    }),
    example: { id: '10155994923880727' },
    answerExample: instagramAnswers['explore-section'],
    output: z.looseObject({ section_name: z.string(), items: z.array(z.unknown()), more_available: z.boolean() }),
    endpoint: { path: 'section' },
    price: 0.5,
    freshnessMs: fifteenMinutes,
  }),
]);
