import type { RenderedPage, Renderer, RenderOptions } from '../../core/render';
import type { OrgWalletProtocol } from '../../core/protocols/wallet';
import { normalizeUpstream } from '../normalize';
import { waitUnlessAborted } from './deadline';
import { RENDERS_AT_ONCE } from './render-share';
import { RENDER_LIMITS } from './renderer';

/**
 * How long a slot stays taken when its render never says it ended (its isolate died): the render's own bound
 * twice, for the wait in its isolate's queue and for the render, and a margin.
 */
export const RENDER_SLOT_TTL_MS = RENDER_LIMITS.wallClockMs * 2 + 10_000;

/** While the organization's slots are all taken, how long to wait before asking again. */
export const RENDER_SLOT_RETRY_MS = 500;

/**
 * `renderer` with each render first taking one of the organization's RENDERS_AT_ONCE slots in its wallet,
 * waiting for one within the call's time: a call that runs out of time waiting fails, uncharged, saying why.
 */
export function sharedFairly(renderer: Renderer, wallets: DurableObjectNamespace<OrgWalletProtocol>, organizationId: string): Renderer {
  const wallet = wallets.get(wallets.idFromName(organizationId));
  return {
    async render(url: string, options: RenderOptions): Promise<RenderedPage> {
      const slot = crypto.randomUUID();
      const waitedTooLong = () => normalizeUpstream.failed(`Rendering ${url}`, `timed out waiting: an organization renders at most ${RENDERS_AT_ONCE} pages at once, and its others were still rendering`);
      while (!(await wallet.takeRenderSlot(slot, RENDER_SLOT_TTL_MS, RENDERS_AT_ONCE))) await waitUnlessAborted(RENDER_SLOT_RETRY_MS, options.signal, waitedTooLong);
      try {
        return await renderer.render(url, options);
      } finally {
        // A slot that could not be freed frees itself at its TTL.
        await wallet.freeRenderSlot(slot).catch((error: unknown) => console.error(JSON.stringify({ level: 'warn', note: 'render slot not freed', organizationId, error: String(error) })));
      }
    },
  };
}
