import { afterEach, beforeEach, type MockInstance, vi } from 'vitest';
import { clock, utcMonthOf } from '../../src/core/clock';

/** The minute the rate-window tests hold the injectable clock in, far from the real time other files use. */
export const HELD_MINUTE = Date.UTC(2030, 0, 1, 12, 0, 0);

/**
 * Holds the injectable clock `intoMinuteMs` into HELD_MINUTE for every test of the file, so a test's calls
 * cannot straddle two rate windows on a slow machine, and silences the log line a request writes (a minute's
 * worth of calls would only slow the runner). `moveTo` sets the clock elsewhere, from the minute's start.
 */
export function holdClockInOneMinute(intoMinuteMs: number): { moveTo(msFromMinuteStart: number): void } {
  let now: MockInstance<() => number>;
  beforeEach(() => {
    now = vi.spyOn(clock, 'now').mockReturnValue(HELD_MINUTE + intoMinuteMs);
    for (const level of ['log', 'info', 'warn'] as const) vi.spyOn(console, level).mockImplementation(() => undefined);
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });
  return { moveTo: (msFromMinuteStart) => void now.mockReturnValue(HELD_MINUTE + msFromMinuteStart) };
}

/**
 * Puts the injectable clock a second into the next minute and lets it run from there, for one test whose calls
 * must fall in one rate window (a fixed minute) however slow the machine, while timers and waits keep real time.
 * On the real clock such a test failed now and then, when its calls straddled a minute's end (the takeover test
 * of idempotency.test.ts, in a clean-clone run on 2026-11-30).
 * Undone by `vi.restoreAllMocks()`.
 */
export function startAMinute(): void {
  const offset = 60_000 - (Date.now() % 60_000) + 1_000;
  vi.spyOn(clock, 'now').mockImplementation(() => Date.now() + offset);
}

/**
 * How far to move a test's clock on from `now` so that its next `spanMs` fall in one calendar month (UTC): 0,
 * or to the next month's first instant when this one ends sooner. For tests whose clock runs hours ahead of the
 * real one (expired holds, a job's waits for money) and that count a key's spend, which is a month's: near a
 * month's end their spend was counted in one month and read in the next (a CI run at 23:14 UTC on 30 November).
 */
export function intoOneMonth(now: number, spanMs: number): number {
  const { end } = utcMonthOf(now);
  return end - now < spanMs ? end - now : 0;
}
