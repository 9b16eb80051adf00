import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/core/errors';
import type { RenderedPage, Renderer, RenderOptions } from '../../src/core/render';
import { videoIdOf } from '../../src/operations/social/youtube-screenshot';
import { videoFrameWithBuiltin } from '../../src/providers/builtin-web/video-frame';
import { bearer, call, funded, json, wallet } from '../support/api';
import { signal, web, webEnv } from './support';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==';

/** A renderer that records what it was asked and answers a one-pixel frame. */
function recordingRenderer() {
  const asked: { url: string; options: RenderOptions }[] = [];
  const renderer: Renderer = {
    async render(url, options): Promise<RenderedPage> {
      asked.push({ url, options });
      return { html: '<html></html>', finalUrl: url, status: 200, contentType: 'text/html', screenshot: { mediaType: 'image/png', base64: PNG }, actionScreenshots: [], actionScrapes: [], refusedRequests: 0, blockedAds: 0 };
    },
  };
  return { asked, renderer };
}

describe('a video frame through the renderer', () => {
  it("opens the platform's public embed player at the second, pauses its video there and answers the frame as a data URL", async () => {
    const { asked, renderer } = recordingRenderer();
    const result = await videoFrameWithBuiltin({ videoId: 'dQw4w9WgXcQ', second: 42.5 }, { env: webEnv(), signal: signal(), fetch: web().fetch, renderer });
    expect(asked).toHaveLength(1);
    const { url, options } = asked[0]!;
    expect(url).toBe('https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ?start=42&autoplay=1&mute=1&controls=0&playsinline=1&rel=0&iv_load_policy=3');
    expect(options).toMatchObject({ video: { second: 42.5 }, screenshot: { fullPage: false }, actions: [] });
    await expect(options.assertAllowed(new URL('http://169.254.169.254/latest/meta-data/'))).rejects.toBeInstanceOf(ApiError);
    expect(result.data).toEqual({
      result: [{ videoId: 'dQw4w9WgXcQ', second: 42.5, url: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=42s', screenshot: `data:image/png;base64,${PNG}` }],
    });
  });

  it('asks for a JPEG of the quality given', async () => {
    const { asked, renderer } = recordingRenderer();
    await videoFrameWithBuiltin({ videoId: 'dQw4w9WgXcQ', second: 0, quality: 70 }, { env: webEnv(), signal: signal(), fetch: web().fetch, renderer });
    expect(asked[0]!.options.screenshot).toEqual({ fullPage: false, quality: 70 });
  });

  it.each([
    ['https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=10s', 'dQw4w9WgXcQ'],
    ['https://youtu.be/dQw4w9WgXcQ?si=abc', 'dQw4w9WgXcQ'],
    ['https://www.youtube.com/shorts/aqz-KE-bpKQ', 'aqz-KE-bpKQ'],
    ['https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ', 'dQw4w9WgXcQ'],
  ])('reads the video id of %s', (url, id) => {
    expect(videoIdOf({ url, second: 0 })).toBe(id);
  });
});

describe('GET /v1/data/youtube/screenshot', () => {
  const path = '/v1/data/youtube/screenshot';

  it('answers 503 PROVIDER_UNAVAILABLE naming the BROWSER binding where there is no browser, uncharged', async () => {
    const account = await funded(10, 'payg');
    const response = await call(`${path}?videoId=dQw4w9WgXcQ&second=3`, bearer(account.key));
    expect(response.status).toBe(503);
    const { error } = await json(response);
    expect(error.code).toBe('PROVIDER_UNAVAILABLE');
    expect(error.message).toContain('BROWSER');
    expect(await wallet(account.organizationId)).toMatchObject({ purchasedBalanceCents: 10, heldCents: 0 });
  });

  it.each([
    ['neither videoId nor url', '', 'videoId'],
    ['both', `?videoId=dQw4w9WgXcQ&url=${encodeURIComponent('https://youtu.be/dQw4w9WgXcQ')}`, 'videoId'],
    ['a channel URL', `?url=${encodeURIComponent('https://www.youtube.com/@mkbhd')}`, 'url'],
    ['a URL of another site', `?url=${encodeURIComponent('https://vimeo.com/123456')}`, 'url'],
    ['a negative second', '?videoId=dQw4w9WgXcQ&second=-1', 'second'],
    ['a quality above 100', '?videoId=dQw4w9WgXcQ&quality=101', 'quality'],
  ])('refuses %s with 400 naming the field, uncharged', async (_, query, field) => {
    const account = await funded(10, 'payg');
    const response = await call(`${path}${query}`, bearer(account.key));
    expect(response.status).toBe(400);
    expect((await json(response)).error.details).toEqual([expect.objectContaining({ field, location: 'query' })]);
    expect(await wallet(account.organizationId)).toMatchObject({ purchasedBalanceCents: 10, heldCents: 0 });
  });
});
