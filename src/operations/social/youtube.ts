import { z } from '@hono/zod-openapi';
import { googleApiVendor } from '../../providers/google-api';
import { rapidApiAnswers, rapidApiVendor } from '../../providers/rapidapi';
import { row, vendorOperations } from '../vendor-operations';
import { count, country, cursor, HOUR, query } from './fields';
import { youtubeAnswers } from './youtube.examples';

/**
 * Video platform: the official YouTube Data API v3 for what it serves (trending, channels, search, videos,
 * comments); YT-API on RapidAPI (ytjar, yt-api.p.rapidapi.com) for stream links, which the official API
 * does not give.
 */
const youtubeData = googleApiVendor({
  id: 'youtube-data-api',
  label: 'The YouTube Data API',
  keySetting: 'YOUTUBE_API_KEY',
  baseUrlSetting: 'YOUTUBE_BASE_URL',
  defaultBaseUrl: 'https://www.googleapis.com/youtube/v3',
});
const ytApi = rapidApiVendor({ id: 'yt-api', label: 'The YouTube media provider', settingsPrefix: 'YTAPI', read: rapidApiAnswers.whole });

export const videoId = z.string().regex(/^[A-Za-z0-9_-]{11}$/, 'An 11-character video id, as after watch?v= in the URL.').openapi({ example: 'dQw4w9WgXcQ' });
const channelId = z.string().regex(/^UC[A-Za-z0-9_-]{22}$/, 'A channel id: UC followed by 22 characters.').openapi({ example: 'UCuAXFkgsw1L7xaCfnd5JJOw' });
/** Google's list answer: `{kind, etag, nextPageToken?, pageInfo, items}`. */
const List = z.looseObject({ kind: z.string(), items: z.array(z.looseObject({ id: z.unknown() })), nextPageToken: z.string().optional() });
const SNIPPET_STATS = 'snippet,statistics,contentDetails';
/** Google's `nextPageToken` of the previous answer. */
const pageToken = cursor('CAoQAA');

const official = vendorOperations({ platform: 'youtube', vendor: youtubeData, timeoutMs: 30_000, freshnessMs: HOUR }, [
  row({
    name: 'trending',
    summary: 'Trending videos in a country',
    description: "The platform's most popular videos in a region, optionally in one category, with statistics.",
    input: z.strictObject({
      regionCode: country.default('US'),
      videoCategoryId: z.string().regex(/^[0-9]{1,4}$/, 'A numeric video category id.').optional().openapi({ example: '10' }),
      maxResults: count(1, 50, 10),
      pageToken,
    }),
    example: { regionCode: 'US' },
    answerExample: youtubeAnswers.trending,
    output: List,
    endpoint: { path: 'videos', fixed: { part: SNIPPET_STATS, chart: 'mostPopular' } },
    price: 0.2,
    freshnessMs: 15 * 60 * 1000,
  }),
  row({
    name: 'channel-details',
    summary: 'Channel details',
    description: 'A channel by id or by @handle: title, description, country, subscriber, view and video counts, uploads playlist.',
    input: z
      .strictObject({
        id: channelId.optional(),
        forHandle: z.string().regex(/^@?[A-Za-z0-9._-]{3,30}$/, 'A channel handle, such as @mkbhd.').optional().openapi({ example: '@mkbhd' }),
      })
      .refine((input) => (input.id === undefined) !== (input.forHandle === undefined), { message: 'Give exactly one of id and forHandle.', path: ['id'] }),
    example: { forHandle: '@mkbhd' },
    answerExample: youtubeAnswers['channel-details'],
    output: List,
    endpoint: { path: 'channels', fixed: { part: 'snippet,statistics,contentDetails,brandingSettings' } },
    price: 0.2,
  }),
  row({
    name: 'channel-videos',
    summary: "A channel's videos",
    description: 'Videos of a channel, newest first (or by view count or rating), 1-50 a page.',
    input: z.strictObject({
      channelId,
      order: z.enum(['date', 'viewCount', 'rating', 'relevance', 'title']).default('date').openapi({ example: 'viewCount' }),
      maxResults: count(1, 50, 10),
      pageToken,
    }),
    example: { channelId: 'UCuAXFkgsw1L7xaCfnd5JJOw' },
    answerExample: youtubeAnswers['channel-videos'],
    output: List,
    // A search call costs the vendor 100 quota units against 1 for a list call; the price says so.
    endpoint: { path: 'search', fixed: { part: 'snippet', type: 'video' } },
    price: 0.5,
  }),
  row({
    name: 'search',
    summary: 'Search videos, channels and playlists',
    description: 'Search results for free text, by relevance, date or view count, optionally within a region.',
    input: z.strictObject({
      q: query(500, 'cloudflare workers tutorial'),
      type: z.enum(['video', 'channel', 'playlist']).default('video').openapi({ example: 'video' }),
      order: z.enum(['relevance', 'date', 'viewCount', 'rating', 'title']).default('relevance').openapi({ example: 'date' }),
      regionCode: country.optional(),
      maxResults: count(1, 50, 10),
      pageToken,
    }),
    example: { q: 'cloudflare workers tutorial' },
    answerExample: youtubeAnswers.search,
    output: List,
    endpoint: { path: 'search', fixed: { part: 'snippet' } },
    price: 0.5,
    freshnessMs: 15 * 60 * 1000,
  }),
  row({
    name: 'video-details',
    summary: 'Video details',
    description: 'Title, description, channel, duration, tags and view, like and comment counts of a video.',
    input: z.strictObject({ id: videoId }),
    example: { id: 'dQw4w9WgXcQ' },
    answerExample: youtubeAnswers['video-details'],
    output: List,
    endpoint: { path: 'videos', fixed: { part: SNIPPET_STATS } },
    price: 0.2,
  }),
  row({
    name: 'video-comments',
    summary: "A video's comments",
    description: 'Top-level comments of a video with their first replies, by relevance or newest first, 1-100 a page.',
    input: z.strictObject({
      videoId,
      order: z.enum(['relevance', 'time']).default('relevance').openapi({ example: 'time' }),
      maxResults: count(1, 100, 20),
      pageToken,
    }),
    example: { videoId: 'dQw4w9WgXcQ' },
    answerExample: youtubeAnswers['video-comments'],
    output: List,
    endpoint: { path: 'commentThreads', fixed: { part: 'snippet,replies' } },
    price: 0.2,
    freshnessMs: 15 * 60 * 1000,
  }),
]);

const media = vendorOperations({ platform: 'youtube', vendor: ytApi, timeoutMs: 30_000, freshnessMs: 0 }, [
  row({
    name: 'audio',
    summary: 'Stream and download links of a video',
    description:
      'Direct stream links of a video: `adaptiveFormats` lists the audio-only streams (mimeType audio/...) with bitrate and size. Links expire within hours, so answers are never cached.',
    input: z.strictObject({ id: videoId, cgeo: country.optional().openapi({ description: 'Country the links are made for.' }) }),
    example: { id: 'dQw4w9WgXcQ' },
    answerExample: youtubeAnswers.audio,
    output: z.looseObject({ id: z.string(), adaptiveFormats: z.array(z.looseObject({ url: z.string(), mimeType: z.string() })) }),
    endpoint: { path: 'dl' },
    price: 0.5,
  }),
]);

export const youtubeOperations = [...official, ...media];
