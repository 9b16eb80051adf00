import { z } from '@hono/zod-openapi';
import { ApiError } from '../../core/errors';
import { unitsFromCents } from '../../core/money';
import { defineOperation, type Operation, type Price, type ProviderContext, type ProviderResult } from '../../core/operation';
import { measureMedia, mediaFetcher, type MeasuredMedia } from '../../providers/builtin-web';
import { normalizeUpstream } from '../../providers/normalize';
import { vendorCall } from '../../providers/vendor';
import { facebookVendor } from './facebook';
import { numericId, platformUrl } from './fields';

/**
 * Social network, media download: the size (MB) and media type of a post's photos and videos, or of one
 * media file, with each file's direct URL. A post's media come from the vendor's post details (the `post`
 * row's call); each file is measured with a HEAD (or a first-byte GET) through the built-in web provider's
 * safe fetch, never downloaded (src/providers/builtin-web/media-size.ts).
 */

/** The platform's media CDN: a URL there is a file, measured as it is, without a post lookup. */
const MEDIA_HOST = /(^|\.)fbcdn\.net$/;
/** A post carries at most a handful of files; more are not measured. */
const MOST_FILES = 10;
/** Parts of a post that are not its media (who wrote it, what it is answered with, preview stills). */
const NOT_MEDIA = /author|profile|avatar|thumbnail|comment|reactor|actor/i;

const MediaDownloadInput = z
  .strictObject({
    url: platformUrl(['facebook.com', 'fb.com', 'fbcdn.net'], 'https://www.facebook.com/facebook/posts/1061938315314935')
      .optional()
      .openapi({ description: "A post's URL (its id is read from /posts/<id>, story_fbid, /videos/<id>, /reel/<id> or ?v=<id>), or a media file's URL on fbcdn.net." }),
    post_id: numericId('1061938315314935').optional(),
  })
  .refine((input) => (input.url === undefined) !== (input.post_id === undefined), { message: 'Give exactly one of url and post_id.', path: ['url'] })
  // Checked with the input, not by the call: a sandbox key's dry run, which calls nothing, refuses what the live call would.
  .refine((input) => input.url === undefined || isMediaFile(input.url) || postIdInUrl(input.url) !== undefined, {
    message: 'A post URL with a numeric post id (/posts/<id>, story_fbid=<id>, /videos/<id>, /reel/<id>), or pass post_id.',
    path: ['url'],
  });
type MediaDownloadInput = z.infer<typeof MediaDownloadInput>;

const MediaFile = z
  .object({
    url: z.string().openapi({ description: 'The file as the post (or the request) names it.' }),
    directUrl: z.string().openapi({ description: 'The file itself, after redirects: what to download. Signed; expires within hours.' }),
    mediaType: z.string().nullable().openapi({ description: 'video/mp4, image/jpeg, ...; null when the host names none.' }),
    sizeBytes: z.number().int().nullable(),
    sizeMb: z.number().nullable().openapi({ description: 'The size in MB (1,048,576 bytes), two decimals; null when the host does not tell it.' }),
  })
  .openapi('FacebookMediaFile');

const MediaDownloadPayload = z.object({
  result: z
    .array(z.object({ post_id: z.string().nullable(), items_count: z.number().int(), items: z.array(MediaFile) }))
    .openapi({ description: "One element; result[0].items lists the post's media files (or the one file asked about)." }),
});

const postDetails = vendorCall<{ post_id: string }>(facebookVendor, { path: 'post' });

// A post's media cost its details call (the post row's 1 cent); a file's URL costs only its measurement.
const POST_MEDIA = unitsFromCents(1);
const ONE_FILE = unitsFromCents(0.1);
const price: Price<MediaDownloadInput> = {
  display: { cents: 1, per: 'request', note: "a post's media (one post-details lookup); 0.1 cents for one media file's URL" },
  quote: (input) => (input.url !== undefined && isMediaFile(input.url) ? ONE_FILE : POST_MEDIA),
  settle: (input) => price.quote(input),
};

function isMediaFile(url: string): boolean {
  return MEDIA_HOST.test(new URL(url).hostname);
}

/** The numeric post id a post URL carries, if it carries one. */
export function postIdInUrl(url: string): string | undefined {
  const parsed = new URL(url);
  const fromPath = /\/(?:posts|videos|reel|permalink)\/(\d{1,25})(?:\/|$)/.exec(parsed.pathname)?.[1];
  const fromQuery = ['story_fbid', 'v', 'fbid'].map((name) => parsed.searchParams.get(name)).find((value) => value !== null && /^\d{1,25}$/.test(value));
  return fromPath ?? fromQuery ?? undefined;
}

/** The media files a post names: every fbcdn.net address in it outside its author, comments and thumbnails, each once. */
export function mediaUrlsOf(post: unknown): string[] {
  const found = new Set<string>();
  const visit = (value: unknown, depth: number) => {
    if (depth > 6 || found.size >= MOST_FILES) return;
    if (typeof value === 'string') {
      if (/^https:\/\//.test(value) && isMediaFile(value)) found.add(value);
      return;
    }
    if (Array.isArray(value)) for (const entry of value) visit(entry, depth + 1);
    else if (value && typeof value === 'object') for (const [key, entry] of Object.entries(value)) if (!NOT_MEDIA.test(key)) visit(entry, depth + 1);
  };
  visit(post, 0);
  return [...found];
}

async function mediaDownload(input: MediaDownloadInput, context: ProviderContext): Promise<ProviderResult> {
  const fetcher = mediaFetcher(context);
  if (input.url !== undefined && isMediaFile(input.url)) {
    const file = await measureMedia(input.url, fetcher).catch(asQueryRefusal);
    return answer(null, [file]);
  }
  // The input's schema refused a post URL without an id.
  const postId = input.post_id ?? postIdInUrl(input.url!)!;
  const details = await postDetails({ post_id: postId }, context);
  const urls = mediaUrlsOf((details.data as { results?: unknown } | null)?.results ?? details.data);
  if (urls.length === 0) throw normalizeUpstream.rejected(facebookVendor.label, `post ${postId} carries no photo or video`);
  // The vendor named these files: an address the safe fetch refuses is the vendor's answer at fault, not the request.
  const files = await Promise.all(
    urls.map((url) =>
      measureMedia(url, fetcher).catch((error: unknown) => {
        throw error instanceof ApiError && error.code === 'VALIDATION_ERROR' ? normalizeUpstream.rejected(facebookVendor.label, `post ${postId} names a media file at an address that is not public`) : error;
      }),
    ),
  );
  return answer(postId, files);
}

/** The safe fetch names a refused address as a body field; this operation's url is a query parameter. */
function asQueryRefusal(error: unknown): never {
  if (error instanceof ApiError && error.code === 'VALIDATION_ERROR') {
    throw ApiError.validation([{ field: 'url', location: 'query', message: error.message }], error.message);
  }
  throw error;
}

function answer(postId: string | null, files: MeasuredMedia[]): ProviderResult {
  return { data: { result: [{ post_id: postId, items_count: files.length, items: files }] } };
}

export const facebookMediaOperations: Operation[] = [
  defineOperation({
    platform: 'facebook',
    name: 'media-download',
    method: 'GET',
    paths: ['/v1/data/facebook/media-download'],
    summary: 'Media download: size and type of a post\'s media',
    description:
      "For a post (url or post_id) or one media file's URL: each photo and video file with its size in MB, its media type and its direct URL to download, at result[0].items. Files are measured without being downloaded.",
    input: MediaDownloadInput,
    output: MediaDownloadPayload,
    price,
    call: mediaDownload,
    timeoutMs: 30_000,
    // Media links are signed and expire within hours; a quarter of an hour keeps a retry cheap.
    freshnessMs: 15 * 60 * 1000,
    example: { post_id: '1061938315314935' },
    answerExample: {
      result: [
        {
          post_id: '1061938315314935',
          items_count: 1,
          items: [
            {
              url: 'https://video.xx.fbcdn.net/v/t42.1790-2/clip.mp4?oh=00_AfB9&oe=6745A3B1',
              directUrl: 'https://video.xx.fbcdn.net/v/t42.1790-2/clip.mp4?oh=00_AfB9&oe=6745A3B1',
              mediaType: 'video/mp4',
              sizeBytes: 5242880,
              sizeMb: 5,
            },
          ],
        },
      ],
    },
  }),
];
