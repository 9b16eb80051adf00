import type { RenderedPage, Renderer, RenderOptions } from '../../core/render';
import type { OrgWalletProtocol } from '../../core/protocols/wallet';
import { ApiError } from '../../core/errors';
import { normalizeUpstream } from '../normalize';
import { waitUnlessAborted } from './deadline';
import { RENDERS_AT_ONCE } from './render-share';
import { RENDER_LIMITS } from './renderer';
import { SubrequestBudget } from '../../core/subrequests';

/**
 * How long a slot stays taken when its render never says it ended (its isolate died): the render's own bound
 * twice, for the wait in its isolate's queue and for the render, and a margin.
 */
export const RENDER_SLOT_TTL_MS = RENDER_LIMITS.wallClockMs * 2 + 10_000;

/** While the organization's slots are all taken, how long to wait before asking again. */
export const RENDER_SLOT_RETRY_MS = 500;

/**
 * The calls of an organization that may wait for a slot at once: four for each slot. Each asks its wallet every
 * RENDER_SLOT_RETRY_MS, the object every metered call of the organization also meets, so the waiters are bounded
 * rather than the plan's rate times a call's time (600 a minute for up to 300 s). A waiter counts for ten of its
 * intervals, so a slow one keeps its place and one whose isolate died gives it up within 5 s.
 */
export const RENDER_QUEUE = { limit: RENDERS_AT_ONCE * 4, forMs: RENDER_SLOT_RETRY_MS * 10 } as const;

/** What a call refused for a full queue is told to wait: a render takes a few seconds. */
const FULL_RETRY_AFTER_S = 5;

/**
 * `renderer` with each render first taking one of the organization's RENDERS_AT_ONCE slots in its wallet,
 * waiting for one within the call's time: a call that runs out of time waiting fails, uncharged, saying why. One
 * that finds RENDER_QUEUE.limit calls waiting already is refused at once with 409 and Retry-After, uncharged: a
 * conflict to retry, which a data job's item waits out without counting it as an attempt.
 */
export function sharedFairly(renderer: Renderer, wallets: DurableObjectNamespace<OrgWalletProtocol>, organizationId: string, budget = new SubrequestBudget()): Renderer {
  const wallet = wallets.get(wallets.idFromName(organizationId));
  return {
    async render(url: string, options: RenderOptions): Promise<RenderedPage> {
      const slot = crypto.randomUUID();
      const waitedTooLong = () => normalizeUpstream.failed(`Rendering ${url}`, `timed out waiting: an organization renders at most ${RENDERS_AT_ONCE} pages at once, and its others were still rendering`);
      for (;;) {
        // Each ask is a request to the wallet, taken from the call's share for waiting: a wait it cannot pay for ends as a timeout does.
        if (!budget.waiting.take()) {
          await wallet.freeRenderSlot(slot).catch(() => undefined);
          throw normalizeUpstream.failed(`Rendering ${url}`, `gave up waiting for one of the organization's ${RENDERS_AT_ONCE} renders: ${budget.waitEnded}`);
        }
        const answer = await wallet.takeRenderSlot(slot, RENDER_SLOT_TTL_MS, RENDERS_AT_ONCE, RENDER_QUEUE);
        if (answer === 'taken') break;
        if (answer === 'full') {
          throw new ApiError(
            'CONFLICT',
            `Rendering ${url} was not started: an organization renders at most ${RENDERS_AT_ONCE} pages at once, and ${RENDER_QUEUE.limit} of its calls were already waiting for them. Retry in ${FULL_RETRY_AFTER_S} s; this call was not charged.`,
            { retryAfter: FULL_RETRY_AFTER_S },
          );
        }
        // A call that gives up waiting gives its place up at once, not at its time.
        await waitUnlessAborted(RENDER_SLOT_RETRY_MS, options.signal, waitedTooLong).catch(async (error: unknown) => {
          await wallet.freeRenderSlot(slot).catch(() => undefined);
          throw error;
        });
      }
      try {
        return await renderer.render(url, options);
      } finally {
        // A slot that could not be freed frees itself at its TTL.
        await wallet.freeRenderSlot(slot).catch((error: unknown) => console.error(JSON.stringify({ level: 'warn', note: 'render slot not freed', organizationId, error: String(error) })));
      }
    },
  };
}
