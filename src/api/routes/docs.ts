import type { OpenAPIHono } from '@hono/zod-openapi';
import referenceUi from '@scalar/api-reference/dist/browser/standalone.js';
import { html } from 'hono/html';
import { publicUrls, type PublicUrls } from '../../core/config';
import { sha256Hex } from '../../core/digest';
import { ApiError } from '../../core/errors';
import type { AppEnv } from '../../services/context';

/**
 * `/docs`: the Scalar API reference of `/openapi.json`, every byte of it served by this worker (the
 * pinned `@scalar/api-reference` browser bundle, imported as text through the `Text` rule of
 * wrangler.toml), under a Content-Security-Policy that lets the page reach nothing but this origin and
 * the API it documents. It renders with the network cut, and no third party learns who reads the docs.
 */

/** What Scalar is told: no web fonts, no telemetry, no AI agent or MCP panel (each would call scalar.com). */
const SCALAR_CONFIGURATION = {
  url: '/openapi.json',
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
  // The whole reference in the sidebar: some twenty operations, so one glance shows what exists.
  defaultOpenAllTags: true,
};

const INIT_SCRIPT = `Scalar.createApiReference('#reference', ${JSON.stringify(SCALAR_CONFIGURATION)});\n`;

/** The bundle's address carries its digest, so it can be cached for good and a new version is a new URL. */
let bundlePath: Promise<string> | undefined;
const bundlePathOf = () => (bundlePath ??= sha256Hex(referenceUi).then((digest) => `/docs/assets/scalar-${digest.slice(0, 16)}.js`));
const INIT_PATH = '/docs/assets/init.js';

export function registerDocs(app: OpenAPIHono<AppEnv>) {
  app.get('/docs', async (c) => {
    const page = html`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Sluice API reference</title>
  </head>
  <body>
    <div id="reference"></div>
    <script src="${await bundlePathOf()}"></script>
    <script src="${INIT_PATH}"></script>
  </body>
</html>`;
    return c.html(page, 200, { 'content-security-policy': contentSecurityPolicy(publicUrls(c.env)), 'referrer-policy': 'no-referrer' });
  });

  app.get('/docs/assets/:file', async (c) => {
    if (c.req.path === INIT_PATH) return c.body(INIT_SCRIPT, 200, script('no-cache'));
    if (c.req.path === (await bundlePathOf())) return c.body(referenceUi, 200, script('public, max-age=31536000, immutable'));
    throw ApiError.notFound(`No asset ${c.req.path}; the reference at /docs names the ones it loads.`);
  });
}

function script(cacheControl: string): Record<string, string> {
  return { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': cacheControl, 'x-content-type-options': 'nosniff' };
}

/**
 * Scripts only from this origin, never inline. Styles also inline: Scalar's components and the libraries
 * under them inject <style> elements without a nonce, and a style cannot run code. Requests only to this
 * origin and the public URLs the document lists as servers, so "Test request" works and nothing else is
 * reached.
 */
export function contentSecurityPolicy(urls: PublicUrls): string {
  const apis = [...new Set([urls.base, urls.tools].map((url) => new URL(url).origin))];
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    `connect-src 'self' ${apis.join(' ')}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}
