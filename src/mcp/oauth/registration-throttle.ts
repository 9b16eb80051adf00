import { clock } from '../../core/clock';
import { OAuthError } from './errors';

/**
 * Dynamic client registration is open (RFC 7591: MCP clients register themselves), so it is counted per
 * client address: twenty registrations an hour, like sign-ups. A client registers once per install; a
 * script registering clients by the thousand (each a redirect URI of its choosing) waits out the hour.
 */
export const REGISTRATIONS_PER_ADDRESS = { limit: 20, windowMs: 60 * 60_000 } as const;

/**
 * The address a request comes from. cf-connecting-ip is trusted only when the request came through
 * Cloudflare's edge, which sets it and `request.cf` together; a request without `cf` could have written
 * the header itself, so all such requests share one bucket, `unattributed`. The same rule as the
 * dashboard's sign-in throttle (src/app/auth/throttle.ts), written again here because workers do not
 * import each other.
 */
export function clientAddress(request: Request): string {
  const reachedTheEdge = (request as Request & { cf?: unknown }).cf !== undefined;
  return (reachedTheEdge ? request.headers.get('cf-connecting-ip') : null) ?? 'unattributed';
}

/**
 * Counts one registration from the request's address in the fixed window the sign-in throttle keeps in
 * D1 (`auth_throttle`, one atomic upsert), and refuses it with 429 and Retry-After past the limit.
 */
export async function countRegistration(db: D1Database, request: Request): Promise<void> {
  const now = clock.now();
  const { limit, windowMs } = REGISTRATIONS_PER_ADDRESS;
  const row = await db
    .prepare(
      `INSERT INTO auth_throttle (bucket, window_start, attempts) VALUES (?1, ?2, 1)
       ON CONFLICT (bucket) DO UPDATE SET
         attempts = CASE WHEN window_start <= ?2 - ?3 THEN 1 ELSE attempts + 1 END,
         window_start = CASE WHEN window_start <= ?2 - ?3 THEN ?2 ELSE window_start END
       RETURNING window_start AS windowStart, attempts`,
    )
    .bind(`oauth-register:${clientAddress(request)}`, now, windowMs)
    .first<{ windowStart: number; attempts: number }>();
  if (!row || row.attempts <= limit) return;
  const retryAfter = Math.max(1, Math.ceil((row.windowStart + windowMs - now) / 1000));
  throw new OAuthError(
    'temporarily_unavailable',
    `Too many client registrations from this address (${limit} an hour). Try again in ${Math.ceil(retryAfter / 60)} min.`,
    429,
    retryAfter,
  );
}
