/**
 * When a failed delivery is tried again: the delay after the nth failed attempt, growing sixfold from
 * 5 seconds and capped at 12 hours. The first retry comes within 10 s, the second within a minute, and
 * the last about 25 hours after the event; then the delivery is marked failed.
 */
export const RETRY_DELAYS_MS: readonly number[] = Array.from({ length: 7 }, (_, n) => Math.min(5_000 * 6 ** n, 12 * 3_600_000));

/** The first attempt and every retry. */
export const MAX_ATTEMPTS = 1 + RETRY_DELAYS_MS.length;

/** Up to a tenth added at random, so endpoints that failed together are not all retried in the same instant. */
const JITTER = 0.1;

/** Milliseconds to wait after `failedAttempts` attempts have failed, or null when none is left. */
export function retryDelay(failedAttempts: number, random: () => number = Math.random): number | null {
  const base = RETRY_DELAYS_MS[failedAttempts - 1];
  return base === undefined ? null : Math.round(base * (1 + JITTER * random()));
}

/** How long one attempt may take before it counts as failed. */
export const ATTEMPT_TIME_LIMIT_MS = 10_000;
