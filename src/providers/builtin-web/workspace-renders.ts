import type { RenderedPage, Renderer, RenderOptions } from '../../core/render';
import type { WorkspaceGateProtocol } from '../../core/protocols/gate';
import { normalizeUpstream } from '../normalize';
import { waitUnlessAborted } from './deadline';
import { RENDERS_AT_ONCE } from './render-share';
import { RENDER_LIMITS } from './renderer';

/**
 * How long a slot stays taken when its render never says it ended (its isolate died): the render's own bound
 * twice, for the wait in its isolate's queue and for the render, and a margin.
 */
export const RENDER_SLOT_TTL_MS = RENDER_LIMITS.wallClockMs * 2 + 10_000;

/** While the workspace's slots are all taken, how long to wait before asking again. */
export const RENDER_SLOT_RETRY_MS = 500;

/**
 * `renderer` with each render first taking one of the workspace's RENDERS_AT_ONCE slots in its gate, waiting
 * for one within the call's time: a call that runs out of time waiting fails, uncharged, saying why.
 */
export function sharedFairly(renderer: Renderer, gates: DurableObjectNamespace<WorkspaceGateProtocol>, workspaceId: string): Renderer {
  const gate = gates.get(gates.idFromName(workspaceId));
  return {
    async render(url: string, options: RenderOptions): Promise<RenderedPage> {
      const slot = crypto.randomUUID();
      const waitedTooLong = () => normalizeUpstream.failed(`Rendering ${url}`, `timed out waiting: a workspace renders at most ${RENDERS_AT_ONCE} pages at once, and its others were still rendering`);
      while (!(await gate.takeRenderSlot(slot, RENDER_SLOT_TTL_MS, RENDERS_AT_ONCE))) await waitUnlessAborted(RENDER_SLOT_RETRY_MS, options.signal, waitedTooLong);
      try {
        return await renderer.render(url, options);
      } finally {
        // A slot that could not be freed frees itself at its TTL.
        await gate.freeRenderSlot(slot).catch((error: unknown) => console.error(JSON.stringify({ level: 'warn', note: 'render slot not freed', workspaceId, error: String(error) })));
      }
    },
  };
}
