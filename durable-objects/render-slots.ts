import { clock } from '../src/core/clock';
import type { RenderQueue, RenderSlotAnswer } from '../src/core/protocols/wallet';

/**
 * The renders an organization has in flight, across its workspaces and every isolate that serves them, kept
 * by its wallet. Browser Rendering's browsers are the account's, shared by every organization, and an isolate
 * bounds only its own renders: without this, one organization's burst of script-built pages, or of hostile
 * ones that each hold a browser for their whole bound, could take every browser there is. Kept in memory: a
 * wallet that restarts forgets its slots, and renders then in flight end within their own bound anyway.
 */
export class RenderSlots {
  /** Slot id → when (injectable clock) it is free again if its render never says it ended. */
  private readonly taken = new Map<string, number>();
  /** The calls waiting for a slot, each until it asks again (a waiter whose isolate died leaves at that time). */
  private readonly waiting = new Map<string, number>();

  /**
   * Takes a slot for `ttlMs` when fewer than `limit` are taken: one step, so concurrent asks cannot share one.
   * Otherwise the call waits, counted until `queue.forMs` from now (it asks again before then), unless
   * `queue.limit` calls wait already: then it is `full`, and asks nothing more.
   */
  take(id: string, ttlMs: number, limit: number, queue: RenderQueue): RenderSlotAnswer {
    const now = clock.now();
    for (const [slot, until] of this.taken) if (until <= now) this.taken.delete(slot);
    for (const [waiter, until] of this.waiting) if (until <= now) this.waiting.delete(waiter);
    if (this.taken.has(id) || this.taken.size < limit) {
      this.waiting.delete(id);
      this.taken.set(id, now + ttlMs);
      return 'taken';
    }
    if (!this.waiting.has(id) && this.waiting.size >= queue.limit) return 'full';
    this.waiting.set(id, now + queue.forMs);
    return 'wait';
  }

  free(id: string): void {
    this.taken.delete(id);
    this.waiting.delete(id);
  }
}
