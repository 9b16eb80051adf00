/**
 * How a job shares its workspace's request window with the calls people and agents make meanwhile.
 * The window is the gate's: fixed 60-second windows starting on multiples of 60 s (RateWindow), shared by
 * every key of the workspace. A job never takes the window's last RESERVE_SHARE (at least one request):
 * it calls only while the remaining requests, less its own calls in flight, exceed that reserve, so an
 * interactive call made while a job runs finds room, and the job's own calls are not refused 429. It
 * learns the remaining count from each of its calls' RateLimit-* headers (the gate's answer to that very
 * call), so it asks the gate nothing extra. A call of its own refused 429 all the same (others took the
 * reserve and more) is not an item's failure: the item stays pending and the job waits for the reset.
 */
export const WINDOW_MS = 60_000;
export const RESERVE_SHARE = 0.2;

export interface PacerWindow {
  /** Epoch ms at which the window the figures belong to ends (by the injectable clock). */
  resetAt: number;
  /** The workspace's requests per minute; 0 until a call has told it. */
  limit: number;
  remaining: number;
}

/** Requests of each window left to everyone but the job. */
export function reserveOf(limit: number): number {
  return Math.max(1, Math.ceil(limit * RESERVE_SHARE));
}

export class Pacer {
  private inFlight = 0;

  constructor(public window: PacerWindow) {}

  /** The job knows the workspace's limit (a call of its own has told it). */
  get knowsLimit(): boolean {
    return this.window.limit > 0;
  }

  /** Takes a slot for one call at `now`, or says there is none left for the job in this window. */
  take(now: number): boolean {
    if (now >= this.window.resetAt) {
      const start = now - (now % WINDOW_MS);
      this.window = { resetAt: start + WINDOW_MS, limit: this.window.limit, remaining: this.window.limit };
    }
    // Until a call has told the limit, one call at a time.
    const room = this.knowsLimit ? this.window.remaining - this.inFlight - reserveOf(this.window.limit) : this.inFlight === 0 ? 1 : 0;
    if (room <= 0) return false;
    this.inFlight += 1;
    return true;
  }

  /** The call that took a slot has answered (after `observe`). */
  done(): void {
    this.inFlight -= 1;
  }

  /** The gate's figures for one of the job's calls, from its RateLimit-* headers. */
  observe(headers: Record<string, string>, now: number): void {
    const limit = Number(headers['RateLimit-Limit']);
    const remaining = Number(headers['RateLimit-Remaining']);
    const resetSeconds = Number(headers['RateLimit-Reset']);
    if (!Number.isFinite(limit) || !Number.isFinite(remaining) || !Number.isFinite(resetSeconds) || limit <= 0) return;
    const start = now - (now % WINDOW_MS);
    const resetAt = start + WINDOW_MS;
    if (resetAt !== this.window.resetAt || this.window.limit !== limit) {
      this.window = { resetAt, limit, remaining };
      return;
    }
    // Answers arrive out of order; the smallest remaining is the latest count.
    this.window.remaining = Math.min(this.window.remaining, remaining);
  }

  /** The gate said the window is used up. */
  exhaust(now: number): void {
    const start = now - (now % WINDOW_MS);
    this.window = { resetAt: start + WINDOW_MS, limit: this.window.limit, remaining: 0 };
  }

  /** Milliseconds until the window resets, at least 1. */
  msToReset(now: number): number {
    return Math.max(1, this.window.resetAt - now);
  }
}
