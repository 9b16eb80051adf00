import type { Admission } from '../src/core/protocols/gate';

export const WINDOW_MS = 60_000;

/** Where the window is stored in the gate's storage, and what is stored there. */
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
 * - The count is decided in memory and stored by `save`, which the gate's alarm runs within its report
 *   interval of the call, not by each call (a storage write per call was 3 % of a metered call's CPU).
 *   Were the process killed before it, the window would forget at most that interval's requests: a
 *   limiter fails open, it does not stall calls.
 */
export class RateWindow {
  private window: StoredWindow = { start: 0, count: 0 };
  /** Calls were counted since the window was last stored. */
  private unsaved = false;

  constructor(private readonly storage: DurableObjectStorage) {}

  /** The window as stored before this object started; the gate reads it with its other keys, in one read. */
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
    this.unsaved = true;
    return { allowed: true, limit, remaining: limit - this.window.count, resetAt };
  }

  /** Stores the count, when calls were counted since it was last stored; the write needs no confirmation. */
  save(): void {
    if (!this.unsaved) return;
    this.unsaved = false;
    void this.storage.put(WINDOW_KEY, this.window, { allowUnconfirmed: true });
  }
}
