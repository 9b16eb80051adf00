import { DurableObject } from 'cloudflare:workers';
import { clock } from '../src/core/clock';
import type { Env } from '../src/core/config';

export const WINDOW_MS = 60_000;

export interface Admission {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch milliseconds at which the current window ends. */
  resetAt: number;
}

interface Window {
  start: number;
  count: number;
}

/**
 * One per workspace: the fixed 60-second request window shared by all the workspace's keys. The window
 * is computed here, from this object's clock, and checked and counted with no `await` in between, so
 * concurrent requests cannot both take the last slot.
 */
export class WorkspaceGate extends DurableObject<Env> {
  private window: Window;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // Persisted so an evicted object does not forget the requests already counted in this window.
    this.window = ctx.storage.kv.get<Window>('window') ?? { start: 0, count: 0 };
  }

  admit(limit: number): Admission {
    const now = clock.now();
    const start = now - (now % WINDOW_MS);
    if (start !== this.window.start) this.window = { start, count: 0 };
    const resetAt = start + WINDOW_MS;
    if (this.window.count >= limit) return { allowed: false, limit, remaining: 0, resetAt };
    this.window.count += 1;
    this.ctx.storage.kv.put('window', this.window);
    return { allowed: true, limit, remaining: limit - this.window.count, resetAt };
  }
}
