import type { ProviderResult } from '../../core/operation';
import { normalizeUpstream } from '../normalize';
import { withDeadline } from './deadline';
import type { BuiltinWebContext } from './inputs';
import { SafeFetcher } from './safe-fetch';
import { dataUrlOf, refusedRequestsWarning, rendererOf } from './scrape';
import { builtinWebSettings } from './settings';
import { SubrequestBudget } from '../../core/subrequests';

/**
 * A frame of a video-platform video at a given second: the platform's public embed player opened in the
 * renderer, its video paused at that second and the video element screenshotted. Answered as the scrape's
 * screenshot format is (a data: URL). Every request the player makes passes the safe fetch's address rules.
 */
export interface VideoFrameInput {
  videoId: string;
  second: number;
  /** JPEG quality 1-100; without it the frame is a PNG. */
  quality?: number;
}

/** The privacy-enhanced embed player (no cookies until playback): what the frame is taken from. */
export const EMBED_PLAYER = 'https://www.youtube-nocookie.com/embed/';

const TIME_LIMIT_MS = 60_000;

/** The player's address for a video at a second: muted autoplay from there, without controls or suggestions over the picture. */
export function embedUrlOf(videoId: string, second: number): string {
  const query = new URLSearchParams({ start: String(Math.floor(second)), autoplay: '1', mute: '1', controls: '0', playsinline: '1', rel: '0', iv_load_policy: '3' });
  return `${EMBED_PLAYER}${encodeURIComponent(videoId)}?${query}`;
}

export async function videoFrameWithBuiltin(input: VideoFrameInput, context: BuiltinWebContext & { playerUrlOf?: (videoId: string, second: number) => string }): Promise<ProviderResult> {
  const budget = context.subrequests ?? new SubrequestBudget();
  const renderer = rendererOf(context, budget);
  if (!renderer) throw normalizeUpstream.unavailable('A browser for video screenshots', ['the BROWSER binding ([browser] in wrangler.toml)']);
  const settings = builtinWebSettings(context.env);
  // Tests hand in a loopback page standing in for the player; the product always opens the platform's own.
  const url = (context.playerUrlOf ?? embedUrlOf)(input.videoId, input.second);
  return withDeadline(context.signal, TIME_LIMIT_MS, async (signal) => {
    const fetcher = new SafeFetcher({ settings, signal, budget, ...(context.fetch ? { fetch: context.fetch } : {}) });
    const rendered = await renderer.render(url, {
      mobile: false,
      userAgent: settings.userAgent,
      headers: {},
      waitForMs: 0,
      actions: [],
      screenshot: { fullPage: false, ...(input.quality ? { quality: input.quality } : {}) },
      video: { second: input.second },
      blockAds: true,
      assertAllowed: (target) => fetcher.assertPublic(target),
      signal,
    });
    if (!rendered.screenshot) throw normalizeUpstream.failed(`Rendering ${url}`, 'the browser answered without a screenshot');
    const warning = refusedRequestsWarning(rendered, budget);
    return {
      data: {
        result: [{ videoId: input.videoId, second: input.second, url: `https://www.youtube.com/watch?v=${input.videoId}&t=${Math.floor(input.second)}s`, screenshot: dataUrlOf(rendered.screenshot), ...(warning ? { warning } : {}) }],
      },
    };
  });
}
