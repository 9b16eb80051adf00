import { z } from '@hono/zod-openapi';
import { rapidApiAnswers, rapidApiVendor } from '../../providers/rapidapi';
import { row, vendorOperations } from '../vendor-operations';
import { country, cursor, HOUR, numericId, platformUrl, query } from './fields';
import { facebookAnswers } from './facebook.examples';

/**
 * Social network: Facebook Scraper3 on RapidAPI (facebook-scraper3.p.rapidapi.com). Answers are the payload
 * itself (`{results, cursor}` for lists); a failure carries an `error` text.
 */
export const facebookVendor = rapidApiVendor({ id: 'facebook-scraper3', label: 'The Facebook data provider', settingsPrefix: 'FACEBOOK', read: rapidApiAnswers.whole });

const Results = z.looseObject({ results: z.array(z.looseObject({})), cursor: z.string().nullable().optional() });
const pageUrl = platformUrl(['facebook.com', 'fb.com'], 'https://www.facebook.com/facebook');
const date = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'A date as YYYY-MM-DD.');
const fifteenMinutes = 15 * 60 * 1000;
/** The `cursor` of the previous answer. */
const nextCursor = cursor('AQHRZxk');

export const facebookOperations = vendorOperations({ platform: 'facebook', vendor: facebookVendor, timeoutMs: 30_000, freshnessMs: HOUR }, [
  row({
    name: 'marketplace',
    summary: 'Marketplace listings',
    description: 'Marketplace listings matching a query near a place (latitude and longitude), with price, location and photos.',
    input: z.strictObject({
      query: query(200, 'road bike'),
      location_latitude: z.coerce.number().min(-90).max(90).openapi({ example: 52.52, param: { required: true } }),
      location_longitude: z.coerce.number().min(-180).max(180).openapi({ example: 13.405, param: { required: true } }),
      min_price: z.coerce.number().int().min(0).optional().openapi({ example: 100 }),
      max_price: z.coerce.number().int().min(0).optional().openapi({ example: 500 }),
      cursor: nextCursor,
    }),
    example: { query: 'road bike', location_latitude: 52.52, location_longitude: 13.405 },
    answerExample: facebookAnswers.marketplace,
    output: Results,
    endpoint: { path: 'marketplace/search' },
    price: 1,
    freshnessMs: fifteenMinutes,
  }),
  row({
    name: 'post',
    summary: 'Post details',
    description: 'A post by id: text, author, media, reactions, comments and shares counts.',
    input: z.strictObject({ post_id: numericId('1061938315314935') }),
    example: { post_id: '1061938315314935' },
    answerExample: facebookAnswers.post,
    output: z.looseObject({ results: z.looseObject({ post_id: z.string() }) }),
    endpoint: { path: 'post' },
    price: 1,
  }),
  row({
    name: 'search-posts',
    summary: 'Search posts',
    description: 'Public posts matching a query, optionally only recent ones or between two dates.',
    input: z.strictObject({
      query: query(200, 'heat pump'),
      recent_posts: z.stringbool().optional().openapi({ example: 'true' }),
      start_date: date.optional().openapi({ example: '2026-11-01' }),
      end_date: date.optional().openapi({ example: '2026-11-21' }),
      cursor: nextCursor,
    }),
    example: { query: 'heat pump' },
    answerExample: facebookAnswers['search-posts'],
    output: Results,
    endpoint: { path: 'search/posts' },
    price: 1,
    freshnessMs: fifteenMinutes,
  }),
  row({
    name: 'search-pages',
    summary: 'Search pages',
    description: 'Pages matching a query, with their ids, categories and profile URLs.',
    input: z.strictObject({ query: query(200, 'bakery berlin'), cursor: nextCursor }),
    example: { query: 'bakery berlin' },
    answerExample: facebookAnswers['search-pages'],
    output: Results,
    endpoint: { path: 'search/pages' },
    price: 1,
  }),
  row({
    name: 'ads-library',
    summary: 'Ads library search',
    description: 'Ads in the public ads library matching a query in a country, active or all, with creatives and run dates.',
    input: z.strictObject({
      query: query(200, 'running shoes'),
      country: country.default('US'),
      active_status: z.enum(['ALL', 'ACTIVE', 'INACTIVE']).default('ALL').openapi({ example: 'ACTIVE' }),
      cursor: nextCursor,
    }),
    example: { query: 'running shoes' },
    answerExample: facebookAnswers['ads-library'],
    output: Results,
    endpoint: { path: 'ads/search' },
    price: 1,
    freshnessMs: fifteenMinutes,
  }),
  row({
    name: 'page-details',
    summary: 'Page details',
    description: 'A page by URL: name, id, category, intro, likes, followers, contact details and rating.',
    input: z.strictObject({ url: pageUrl }),
    example: { url: 'https://www.facebook.com/facebook' },
    answerExample: facebookAnswers['page-details'],
    output: z.looseObject({ results: z.looseObject({ name: z.string(), page_id: z.string() }) }),
    endpoint: { path: 'page/details' },
    price: 1,
  }),
  row({
    name: 'page-posts',
    summary: "A page's posts",
    description: 'Posts of a page by its id (from page-details), newest first; page on with `cursor`.',
    input: z.strictObject({ page_id: numericId('100064860875397'), cursor: nextCursor }),
    example: { page_id: '100064860875397' },
    answerExample: facebookAnswers['page-posts'],
    output: Results,
    endpoint: { path: 'page/posts' },
    price: 1,
    freshnessMs: fifteenMinutes,
  }),
  row({
    name: 'group-details',
    summary: 'Group details',
    description: 'A public group by URL: name, id, description, privacy and member count.',
    input: z.strictObject({ url: platformUrl(['facebook.com'], 'https://www.facebook.com/groups/cloudflare') }),
    example: { url: 'https://www.facebook.com/groups/cloudflare' },
    answerExample: facebookAnswers['group-details'],
    output: z.looseObject({ results: z.looseObject({ name: z.string(), group_id: z.string() }) }),
    endpoint: { path: 'group/details' },
    price: 1,
  }),
  row({
    name: 'group-posts',
    summary: "A group's posts",
    description: 'Posts of a public group by id, newest or most relevant first; page on with `cursor`.',
    input: z.strictObject({
      group_id: numericId('142026696530246'),
      sorting_order: z.enum(['CHRONOLOGICAL', 'TOP_POSTS', 'RECENT_ACTIVITY']).default('CHRONOLOGICAL').openapi({ example: 'TOP_POSTS' }),
      cursor: nextCursor,
    }),
    example: { group_id: '142026696530246' },
    answerExample: facebookAnswers['group-posts'],
    output: Results,
    endpoint: { path: 'group/posts' },
    price: 1,
    freshnessMs: fifteenMinutes,
  }),
]);
