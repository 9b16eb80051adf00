/**
 * The time every rule that depends on it reads: rate windows, hold expiry, billing periods, deprecation
 * dates. One object, so tests can move time without touching the platform's clock.
 */
export const clock = {
  now: (): number => Date.now(),
};
