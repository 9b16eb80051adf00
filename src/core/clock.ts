/**
 * The time every rule that depends on it reads: rate windows, hold expiry, billing periods, deprecation
 * dates. One object, so tests can move time without touching the platform's clock.
 */
export const clock = {
  now: (): number => Date.now(),
};

let lastMonth: Readonly<{ start: number; end: number }> | undefined;

/** The calendar month, UTC, that `now` falls in: its first instant and the first instant of the next (epoch ms). */
export function utcMonthOf(now: number): Readonly<{ start: number; end: number }> {
  // Every metered call asks this a few times, nearly always about the month it asked last.
  if (lastMonth && now >= lastMonth.start && now < lastMonth.end) return lastMonth;
  const date = new Date(now);
  lastMonth = { start: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1), end: Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) };
  return lastMonth;
}

/** The clock's now as ISO 8601, the form D1 rows keep. */
export function nowIso(): string {
  return new Date(clock.now()).toISOString();
}
