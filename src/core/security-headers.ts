import type { MiddlewareHandler } from 'hono';
import { newId } from './ids';
import { levelOfStatus, logEvent } from './log';

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

/** What later middleware may have put on the context that the request's log line names. */
interface Logged {
  principal?: { keyId: string; workspaceId: string };
  costCents?: number;
}

/**
 * A request id for every request (in the context and the `x-request-id` header), the security headers on every
 * answer, and one log line per request: its id, method, route (the pattern, not the path: no ids or queries),
 * status, milliseconds, and when a key was read its id and workspace, and what the call cost. Never the key.
 * (On Cloudflare the clock moves only across I/O, so the milliseconds are the request's waiting, not its CPU.)
 */
export function requestIdAndSecurityHeaders(): MiddlewareHandler<{ Variables: { requestId: string } }> {
  return async (c, next) => {
    const requestId = newId('req');
    const started = Date.now();
    c.set('requestId', requestId);
    await next();
    const { principal, costCents } = c.var as Logged;
    const status = c.res.status;
    logEvent(levelOfStatus(status), 'request', {
      requestId,
      method: c.req.method,
      route: c.req.routePath,
      status,
      ms: Date.now() - started,
      ...(principal ? { keyId: principal.keyId, workspaceId: principal.workspaceId } : {}),
      ...(costCents !== undefined ? { costCents } : {}),
    });
    const headers = c.res.headers;
    for (const [name, value] of SECURITY_HEADERS) if (!headers.has(name)) headers.set(name, value);
    headers.delete('X-Powered-By');
    headers.set('x-request-id', requestId);
  };
}
