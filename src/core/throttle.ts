import ipaddr from 'ipaddr.js';
import { clock } from './clock';
import { ApiError } from './errors';

/**
 * Fixed windows of attempts per bucket, kept in D1 (`auth_throttle`), for what anyone may try without a
 * key: signing in and up (dashboard), registering an OAuth client (mcp), recording an intent (api).
 */
export interface ThrottleRule {
  /** Attempts allowed in one window. */
  limit: number;
  windowMs: number;
  /** What the person is told is being limited, e.g. "sign-in attempts for this email address". */
  what: string;
}

/**
 * How long an attempt count is kept once its window started: the longest window any rule may have (a day, the
 * free trial's per address). The daily run deletes older counts (services/record-retention.ts), so a longer
 * window would be cut short there; `overLimitBy` refuses one.
 */
export const ATTEMPTS_KEPT_MS = 24 * 60 * 60_000;

/**
 * Whom an attempt counts against. Cloudflare's edge sets `cf-connecting-ip` itself, replacing any the client
 * sent, and gives every request it forwards `request.cf`. A request without `cf` did not come through the
 * edge (workerd on a direct socket, as `npm start` serves each worker; a test), so its header is only the
 * client's word and is ignored: all such requests share one bucket, which no header moves them out of.
 */
export function clientAddress(request: Request): string {
  const address = request.cf ? request.headers.get('cf-connecting-ip') : null;
  return address ? networkOf(address) : UNATTRIBUTED;
}

/** The bucket of requests that did not come through the edge (workerd on a direct socket, a test). */
export const UNATTRIBUTED = 'unattributed';

/**
 * An IPv6 client counts as its /64, the block a single subscriber is given (RFC 6177): one home or phone can
 * use any of its 2^64 addresses, so counting each address would count nothing. IPv4 counts as itself.
 */
function networkOf(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `${parts.join(':')}::/64`;
}

/** Counts one attempt, in one upsert (atomic in SQLite, so concurrent attempts cannot both slip under the limit); answers the seconds to wait when it is one too many. */
export async function overLimitBy(db: D1Database, bucket: string, rule: Pick<ThrottleRule, 'limit' | 'windowMs'>): Promise<{ retryAfter: number } | null> {
  if (rule.windowMs > ATTEMPTS_KEPT_MS) throw new Error(`A throttle window of ${rule.windowMs} ms outlives the ${ATTEMPTS_KEPT_MS} ms its counts are kept (ATTEMPTS_KEPT_MS).`);
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
  return row && row.attempts > rule.limit ? { retryAfter: secondsUntil(row.windowStart + rule.windowMs - now) } : null;
}

/** Counts one attempt and refuses it with 429 RATE_LIMITED past the limit. */
export async function countAttempt(db: D1Database, bucket: string, rule: ThrottleRule): Promise<void> {
  const over = await overLimitBy(db, bucket, rule);
  if (over) throw throttled(rule, over.retryAfter);
}

export function clearAttempts(db: D1Database, bucket: string): Promise<unknown> {
  return db.prepare('DELETE FROM auth_throttle WHERE bucket = ?').bind(bucket).run();
}

function secondsUntil(waitMs: number): number {
  return Math.max(1, Math.ceil(waitMs / 1000));
}

function throttled(rule: ThrottleRule, retryAfter: number): ApiError {
  return new ApiError('RATE_LIMITED', `Too many ${rule.what}. Try again in ${Math.ceil(retryAfter / 60)} min.`, { retryAfter });
}
