import { z } from '@hono/zod-openapi';
import { defineOperation, type Operation, type ProviderContext } from '../../core/operation';
import { videoFrameWithBuiltin } from '../../providers/builtin-web';
import { perRequest } from '../pricing';
import { platformUrl } from './fields';
import { videoId } from './youtube';

/**
 * Video platform, screenshot: a frame of a video at a given second, taken from the platform's public embed
 * player in the built-in web provider's browser (src/providers/builtin-web/video-frame.ts). Needs the
 * BROWSER binding; without it the call answers 503 PROVIDER_UNAVAILABLE.
 */

const ID_IN_URL = /(?:[?&]v=|youtu\.be\/|\/(?:shorts|embed|live)\/)([A-Za-z0-9_-]{11})(?:[?&#/]|$)/;

const VideoScreenshotInput = z
  .strictObject({
    videoId: videoId.optional(),
    url: platformUrl(['youtube.com', 'youtu.be', 'youtube-nocookie.com'], 'https://www.youtube.com/watch?v=dQw4w9WgXcQ')
      .optional()
      .openapi({ description: 'The video\'s URL (watch?v=, youtu.be/, /shorts/, /embed/ or /live/), instead of videoId.' }),
    second: z.coerce.number().min(0).max(43_200).default(0).openapi({ description: 'The moment of the video to capture, in seconds (fractions allowed).', example: 42 }),
    quality: z.coerce.number().int().min(1).max(100).optional().openapi({ description: 'JPEG quality 1-100; without it the frame is a PNG.', example: 80 }),
  })
  .refine((input) => (input.videoId === undefined) !== (input.url === undefined), { message: 'Give exactly one of videoId and url.', path: ['videoId'] })
  // Checked with the input, not by the call: a sandbox key's dry run, which calls nothing, refuses what the live call would.
  .refine((input) => input.url === undefined || videoIdInUrl(input.url) !== undefined, {
    message: 'A video URL naming its 11-character id (watch?v=<id>, youtu.be/<id>, /shorts/<id>), or pass videoId.',
    path: ['url'],
  });
type VideoScreenshotInput = z.infer<typeof VideoScreenshotInput>;

const VideoScreenshotPayload = z.object({
  result: z
    .array(
      z.object({
        videoId: z.string(),
        second: z.number(),
        url: z.string().openapi({ description: 'The video on the platform, at that second.' }),
        screenshot: z.string().openapi({ description: 'The frame as a data: URL (image/png, or image/jpeg with quality), as the scrape\'s screenshot format answers.' }),
        warning: z
          .string()
          .optional()
          .openapi({ description: "When some of the player page's requests were refused (private addresses, or past the requests one call may make): the frame is of the page as it loaded." }),
      }),
    )
    .openapi({ description: 'One element; result[0].screenshot is the frame.' }),
});

/** The video id an input names, in `videoId` or in its URL (the input's schema refuses a URL without one, on `url`). */
export function videoIdOf(input: VideoScreenshotInput): string {
  return input.videoId ?? videoIdInUrl(input.url!)!;
}

/** The 11-character id a video URL names, if it names one. */
function videoIdInUrl(url: string): string | undefined {
  return ID_IN_URL.exec(url)?.[1];
}

export const youtubeScreenshotOperations: Operation[] = [
  defineOperation({
    platform: 'youtube',
    name: 'screenshot',
    method: 'GET',
    paths: ['/v1/data/youtube/screenshot'],
    summary: 'Screenshot of a video at a given second',
    description:
      "A frame of a video (videoId or url) at `second`, from the platform's public embed player opened in a browser, paused there and captured: result[0].screenshot, a data: URL as the scrape's screenshot format answers. Needs a browser (the BROWSER binding).",
    input: VideoScreenshotInput,
    output: VideoScreenshotPayload,
    price: perRequest(0.5, 'one browser render of the player'),
    call: (input, context: ProviderContext) => videoFrameWithBuiltin({ videoId: videoIdOf(input), second: input.second, ...(input.quality ? { quality: input.quality } : {}) }, context),
    timeoutMs: 75_000,
    // A video's frame at a second does not change.
    freshnessMs: 24 * 60 * 60 * 1000,
    example: { videoId: 'dQw4w9WgXcQ', second: 42 },
    answerExample: {
      result: [
        {
          videoId: 'dQw4w9WgXcQ',
          second: 42,
          url: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=42s',
          screenshot: 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==',
        },
      ],
    },
  }),
];
