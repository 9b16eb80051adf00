import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/core/errors';
import { measureMedia, mediaFetcher } from '../../src/providers/builtin-web/media-size';
import { mediaUrlsOf, postIdInUrl } from '../../src/operations/social/facebook-media';
import post from '../fixtures/facebook-scraper3/post.json';
import { bearer, call, funded, json, wallet } from '../support/api';
import { signal, web, webEnv } from './support';

const CDN = 'https://video.xx.fbcdn.net';

function measure(url: string, fetch: typeof globalThis.fetch = web().fetch) {
  return measureMedia(url, mediaFetcher({ env: webEnv(), signal: signal(), fetch }));
}

/** The fake web, with the CDN's host answered by `file`. */
function servingFile(file: { respond(request: Request): Response }): typeof globalThis.fetch {
  const site = web();
  return (input, init) => {
    const request = new Request(input, init);
    return new URL(request.url).hostname === new URL(CDN).hostname ? Promise.resolve(file.respond(request)) : site.fetch(request);
  };
}

/** A file of `size` bytes whose body counts what was pulled from it, answering HEAD as `head` says. */
function countedFile(size: number, head: 'answers' | 'refused') {
  const served = { bytes: 0, methods: [] as string[] };
  const respond = (request: Request) => {
    served.methods.push(`${request.method} ${request.headers.get('range') ?? ''}`.trim());
    if (request.method === 'HEAD') return head === 'answers' ? new Response(null, { headers: { 'content-type': 'video/mp4', 'content-length': String(size) } }) : new Response(null, { status: 405 });
    const ranged = request.headers.get('range') === 'bytes=0-0';
    const length = ranged ? 1 : size;
    return new Response(
      new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            if (served.bytes >= length) return controller.close();
            served.bytes += 1024;
            controller.enqueue(new Uint8Array(Math.min(1024, length)));
          },
        },
        { highWaterMark: 0 },
      ),
      { status: ranged ? 206 : 200, headers: { 'content-type': 'video/mp4', ...(ranged ? { 'content-range': `bytes 0-0/${size}` } : { 'content-length': String(size) }) } },
    );
  };
  return { served, respond };
}

describe('measuring a media file without downloading it', () => {
  it('answers size in MB and media type from a HEAD, reading no body', async () => {
    const file = countedFile(7_340_032, 'answers');
    const measured = await measure(`${CDN}/v/clip.mp4`, servingFile(file));
    expect(measured).toEqual({ url: `${CDN}/v/clip.mp4`, directUrl: `${CDN}/v/clip.mp4`, mediaType: 'video/mp4', sizeBytes: 7_340_032, sizeMb: 7 });
    expect(file.served).toEqual({ bytes: 0, methods: ['HEAD'] });
  });

  it('asks for the first byte where HEAD is refused, reads the size from Content-Range, and pulls no more', async () => {
    const file = countedFile(3_145_728, 'refused');
    const measured = await measure(`${CDN}/v/clip.mp4`, servingFile(file));
    expect(measured).toMatchObject({ mediaType: 'video/mp4', sizeBytes: 3_145_728, sizeMb: 3 });
    expect(file.served.methods).toEqual(['HEAD', 'GET bytes=0-0']);
    expect(file.served.bytes).toBe(0);
  });

  it('follows a redirect to the file and answers where it led', async () => {
    expect(await measure(`${CDN}/redirect/v/photo-245760.jpg`)).toMatchObject({ directUrl: `${CDN}/v/photo-245760.jpg`, mediaType: 'image/jpeg', sizeMb: 0.23 });
  });

  it('refuses a file on a private address with the safe fetch\'s 400, and an expired link with 422', async () => {
    const refused = await measure('https://private.fbcdn.net/v/clip-100.mp4').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).code).toBe('VALIDATION_ERROR');
    const expired = await measure(`${CDN}/expired/v/clip-100.mp4`).catch((error: unknown) => error);
    expect((expired as ApiError).status).toBe(422);
  });
});

describe('a post\'s media', () => {
  it('are the fbcdn.net files it names, not its author\'s picture nor its thumbnail', () => {
    expect(mediaUrlsOf(post.results)).toEqual([post.results.image.uri, post.results.video_files.video_sd_file, post.results.video_files.video_hd_file]);
  });

  it.each([
    ['https://www.facebook.com/facebook/posts/1061938315314935', '1061938315314935'],
    ['https://www.facebook.com/permalink.php?story_fbid=123456&id=4', '123456'],
    ['https://www.facebook.com/watch/?v=98765', '98765'],
    ['https://www.facebook.com/reel/55555/', '55555'],
  ])('reads the post id of %s', (url, id) => {
    expect(postIdInUrl(url)).toBe(id);
  });
});

describe('GET /v1/data/facebook/media-download', () => {
  const path = '/v1/data/facebook/media-download';

  it("answers each file of a post with its size in MB, media type and direct URL, through the vendor's post details; 1 cent", async () => {
    const account = await funded(100, 'payg');
    const response = await call(`${path}?post_id=1061938315314935`, bearer(account.key));
    const body = await json(response);
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(body.data.result[0]).toMatchObject({ post_id: '1061938315314935', items_count: 3 });
    expect(body.data.result[0].items).toEqual([
      { url: post.results.image.uri, directUrl: post.results.image.uri, mediaType: 'image/jpeg', sizeBytes: 245_760, sizeMb: 0.23 },
      { url: post.results.video_files.video_sd_file, directUrl: post.results.video_files.video_sd_file, mediaType: 'video/mp4', sizeBytes: 1_048_576, sizeMb: 1 },
      { url: post.results.video_files.video_hd_file, directUrl: post.results.video_files.video_hd_file, mediaType: 'video/mp4', sizeBytes: 5_242_880, sizeMb: 5 },
    ]);
    expect(body.meta.costCents).toBe(1);
  });

  it("measures one file's URL alone, with no post lookup; 0.1 cents", async () => {
    const account = await funded(100, 'payg');
    const url = `${CDN}/v/t42/reel-2097152.mp4?oe=6745A3B1`;
    const body = await json(await call(`${path}?url=${encodeURIComponent(url)}`, bearer(account.key)));
    expect(body.data.result[0]).toEqual({ post_id: null, items_count: 1, items: [{ url, directUrl: url, mediaType: 'video/mp4', sizeBytes: 2_097_152, sizeMb: 2 }] });
    expect(body.meta.costCents).toBe(0.1);
  });

  it.each([
    ['no url nor post_id', '', 'url'],
    ['both', '?post_id=1&url=https%3A%2F%2Fwww.facebook.com%2Fx%2Fposts%2F1', 'url'],
    ['a URL of another site', `?url=${encodeURIComponent('https://example.com/x')}`, 'url'],
    ['a post URL without an id', `?url=${encodeURIComponent('https://www.facebook.com/facebook')}`, 'url'],
    ['a file on a private address', `?url=${encodeURIComponent('https://private.fbcdn.net/v/clip-100.mp4')}`, 'url'],
    ['a post URL whose name no URL parser takes (not punycode)', `?url=${encodeURIComponent('https://xn--a.facebook.com/posts/1')}`, 'url'],
    ["a file URL whose name no URL parser takes", `?url=${encodeURIComponent('https://xn--.fbcdn.net/v/clip-100.mp4')}`, 'url'],
  ])('refuses %s with 400 naming the field, uncharged', async (_, query, field) => {
    const account = await funded(10, 'payg');
    const response = await call(`${path}${query}`, bearer(account.key));
    expect(response.status).toBe(400);
    const { error } = await json(response);
    expect(error.details).toEqual([expect.objectContaining({ field, location: 'query' })]);
    // One thing said at a time: a URL of another site is not also told it lacks a post id.
    if (query.includes('example.com')) expect(error.details[0].message).toBe('An http(s) URL on facebook.com or fb.com or fbcdn.net.');
    expect(await wallet(account.organizationId)).toMatchObject({ purchasedBalanceCents: 10, heldCents: 0 });
  });
});
