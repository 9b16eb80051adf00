import type { MiddlewareHandler } from 'hono';
import type { DashboardEnv } from './context';

/**
 * What the dashboard answers differently from the shared set (src/core/security-headers.ts, applied by
 * createApp: no MIME sniffing, never framed, same-origin opener, and the rest): the referrer kept within
 * this origin, a year of HSTS on https, and a Content-Security-Policy that allows only this origin's own
 * script and stylesheet: no inline script, no inline style, nothing from elsewhere.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function securityHeaders(): MiddlewareHandler<DashboardEnv> {
  return async (c, next) => {
    await next();
    const headers = c.res.headers;
    // A page may send less (the reset link's page sends none); never more.
    if (!headers.has('Referrer-Policy')) headers.set('Referrer-Policy', 'same-origin');
    headers.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    if (new URL(c.env.APP_URL).protocol === 'https:') headers.set('Strict-Transport-Security', 'max-age=31536000; includeSubDomains');
  };
}
