import { clock } from '../../core/clock';
import { ApiError } from '../../core/errors';

export interface ThrottleRule {
  /** Attempts allowed in one window. */
  limit: number;
  windowMs: number;
  /** What the person is told is being limited, e.g. "sign-in attempts for this email address". */
  what: string;
}

/** Sign-in failures per address: five guesses, then wait out the quarter hour. */
export const SIGN_IN_PER_EMAIL: ThrottleRule = { limit: 5, windowMs: 15 * 60_000, what: 'failed sign-in attempts for this email address' };
/** Sign-in attempts per client address, whatever the account: slows down trying one password on many accounts. */
export const SIGN_IN_PER_IP: ThrottleRule = { limit: 30, windowMs: 15 * 60_000, what: 'sign-in attempts from this address' };
/** Accounts made per client address. */
export const SIGN_UP_PER_IP: ThrottleRule = { limit: 20, windowMs: 60 * 60_000, what: 'sign-ups from this address' };

/**
 * Whom an attempt counts against. Cloudflare's edge sets `cf-connecting-ip` itself, replacing any the client
 * sent, and gives every request it forwards `request.cf`. A request without `cf` did not come through the
 * edge (workerd on a direct socket, as `npm start` serves each worker; a test), so its header is only the
 * client's word and is ignored: all such requests share one bucket, which no header moves them out of.
 */
export function clientAddress(request: Request): string {
  return (request.cf ? request.headers.get('cf-connecting-ip') : null) ?? 'unattributed';
}

/**
 * A fixed window of attempts per bucket, counted in D1 by one upsert (atomic in SQLite, so concurrent
 * attempts cannot both slip under the limit).
 */
export async function countAttempt(db: D1Database, bucket: string, rule: ThrottleRule): Promise<void> {
  const now = clock.now();
  const row = await db
    .prepare(
      `INSERT INTO auth_throttle (bucket, window_start, attempts) VALUES (?1, ?2, 1)
       ON CONFLICT (bucket) DO UPDATE SET
         attempts = CASE WHEN window_start <= ?2 - ?3 THEN 1 ELSE attempts + 1 END,
         window_start = CASE WHEN window_start <= ?2 - ?3 THEN ?2 ELSE window_start END
       RETURNING window_start AS windowStart, attempts`,
    )
    .bind(bucket, now, rule.windowMs)
    .first<{ windowStart: number; attempts: number }>();
  if (row && row.attempts > rule.limit) throw throttled(rule, row.windowStart + rule.windowMs - now);
}

/** Refuses at once when the bucket is already full, without counting (a correct password after five wrong ones still waits). */
export async function assertNotThrottled(db: D1Database, bucket: string, rule: ThrottleRule): Promise<void> {
  const now = clock.now();
  const row = await db
    .prepare('SELECT window_start AS windowStart, attempts FROM auth_throttle WHERE bucket = ?')
    .bind(bucket)
    .first<{ windowStart: number; attempts: number }>();
  if (row && row.windowStart > now - rule.windowMs && row.attempts >= rule.limit) throw throttled(rule, row.windowStart + rule.windowMs - now);
}

export function clearAttempts(db: D1Database, bucket: string): Promise<unknown> {
  return db.prepare('DELETE FROM auth_throttle WHERE bucket = ?').bind(bucket).run();
}

function throttled(rule: ThrottleRule, waitMs: number): ApiError {
  const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
  return new ApiError('RATE_LIMITED', `Too many ${rule.what}. Try again in ${Math.ceil(retryAfter / 60)} min.`, { retryAfter });
}
