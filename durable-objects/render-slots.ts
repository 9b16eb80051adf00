import { clock } from '../src/core/clock';

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

  /** Takes a slot for `ttlMs` when fewer than `limit` are taken: one step, so concurrent asks cannot share one. */
  take(id: string, ttlMs: number, limit: number): boolean {
    const now = clock.now();
    for (const [slot, until] of this.taken) if (until <= now) this.taken.delete(slot);
    if (!this.taken.has(id) && this.taken.size >= limit) return false;
    this.taken.set(id, now + ttlMs);
    return true;
  }

  free(id: string): void {
    this.taken.delete(id);
  }
}
