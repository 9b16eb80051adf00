/**
 * The time every rule that depends on it reads: rate windows, hold expiry, billing periods, deprecation
 * dates. One object, so tests can move time without touching the platform's clock.
 */
export const clock = {
  now: (): number => Date.now(),
};

/** The calendar month, UTC, that `now` falls in: its first instant and the first instant of the next (epoch ms). */
export function utcMonthOf(now: number): { start: number; end: number } {
  const date = new Date(now);
  return { start: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1), end: Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) };
}
