import type { Admission } from '../src/core/protocols/gate';
import type { StoredPart } from './lease-book';

export const WINDOW_MS = 60_000;

/** Where the window was stored before it went into the gate's state row, and what is stored. */
export const WINDOW_KEY = 'window';
export interface StoredWindow {
  start: number;
  count: number;
}

/**
 * A workspace's request window: fixed windows of WINDOW_MS that start on multiples of it (so every
 * instance agrees when one ends), shared by all the workspace's keys and by metered and free calls alike.
 * - A call is checked and counted in one synchronous step, with no `await` in between, so concurrent
 *   calls cannot take the same slot; a refused call is not counted, and a new window starts at zero.
 * - The count is decided in memory and stored with the gate's state (a StoredPart of its LeaseBook) when
 *   the gate reports, within its report interval of the call, not by each call (a storage write per call
 *   was 3 % of a metered call's CPU). Were the process killed before it, the window would forget at most
 *   that interval's requests: a limiter fails open, it does not stall calls.
 */
export class RateWindow implements StoredPart {
  readonly name = 'window';
  private window: StoredWindow = { start: 0, count: 0 };
  /** Calls were counted since the window was last stored. */
  private counted = false;

  /** The window as stored before this object started. */
  restore(stored: StoredWindow | undefined): void {
    if (stored) this.window = stored;
  }

  /** Counts a call in the window at `now` when fewer than `limit` were counted in it. */
  admit(limit: number, now: number): Admission {
    const start = now - (now % WINDOW_MS);
    if (start !== this.window.start) this.window = { start, count: 0 };
    const resetAt = start + WINDOW_MS;
    if (this.window.count >= limit) return { allowed: false, limit, remaining: 0, resetAt };
    this.window.count += 1;
    this.counted = true;
    return { allowed: true, limit, remaining: limit - this.window.count, resetAt };
  }

  get unsaved(): boolean {
    return this.counted;
  }

  snapshot(): StoredWindow {
    this.counted = false;
    return { ...this.window };
  }
}
