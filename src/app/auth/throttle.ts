import type { ThrottleRule } from '../../core/throttle';

/** Sign-in failures per address: five guesses, then wait out the quarter hour. */
export const SIGN_IN_PER_EMAIL: ThrottleRule = { limit: 5, windowMs: 15 * 60_000, what: 'failed sign-in attempts for this email address' };
/** Sign-in attempts per client address, whatever the account: slows down trying one password on many accounts. */
export const SIGN_IN_PER_IP: ThrottleRule = { limit: 30, windowMs: 15 * 60_000, what: 'sign-in attempts from this address' };
/** Accounts made per client address. */
export const SIGN_UP_PER_IP: ThrottleRule = { limit: 20, windowMs: 60 * 60_000, what: 'sign-ups from this address' };
/** Free trials started per client address: the trial's money is real vendor calls, and an account costs only an address to make. */
export const TRIALS_PER_IP: ThrottleRule = { limit: 3, windowMs: 24 * 60 * 60_000, what: 'free trials started from this address' };
