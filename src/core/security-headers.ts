import type { MiddlewareHandler } from 'hono';
import { newId } from './ids';

/**
 * On every response: no MIME sniffing, no referrer sent on, never framed, HSTS and the cross-origin
 * isolation headers (the set hono's secureHeaders gives with `overwrite: false`, `referrerPolicy:
 * 'no-referrer'`, `xFrameOptions: 'DENY'` and no Cross-Origin-Resource-Policy). A header a route set
 * itself is kept (the docs page brings its own Content-Security-Policy). Cross-Origin-Resource-Policy is
 * left out: the API and its OpenAPI document are meant to be read from other origins. Both workers use
 * this one set. Written out as data and set in one loop, by the same middleware that stamps the request
 * id, because it runs on every request (issue 14): hono's middleware did the same work through two
 * extra dispatch steps and a closure per header.
 */
export const SECURITY_HEADERS: readonly (readonly [name: string, value: string])[] = [
  ['Cross-Origin-Opener-Policy', 'same-origin'],
  ['Origin-Agent-Cluster', '?1'],
  ['Referrer-Policy', 'no-referrer'],
  ['Strict-Transport-Security', 'max-age=15552000; includeSubDomains'],
  ['X-Content-Type-Options', 'nosniff'],
  ['X-DNS-Prefetch-Control', 'off'],
  ['X-Download-Options', 'noopen'],
  ['X-Frame-Options', 'DENY'],
  ['X-Permitted-Cross-Domain-Policies', 'none'],
  ['X-XSS-Protection', '0'],
];

/** A request id for every request (in the context and the `x-request-id` header) and the security headers on every answer. */
export function requestIdAndSecurityHeaders(): MiddlewareHandler<{ Variables: { requestId: string } }> {
  return async (c, next) => {
    const requestId = newId('req');
    c.set('requestId', requestId);
    await next();
    const headers = c.res.headers;
    for (const [name, value] of SECURITY_HEADERS) if (!headers.has(name)) headers.set(name, value);
    headers.delete('X-Powered-By');
    headers.set('x-request-id', requestId);
  };
}
