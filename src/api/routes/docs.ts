import type { OpenAPIHono } from '@hono/zod-openapi';
import { html } from 'hono/html';
import { publicUrls, type PublicUrls } from '../../core/config';
import { ApiError } from '../../core/errors';
import type { AppEnv } from '../../core/context';

/**
 * `/docs`: the Scalar API reference of `/openapi.json`, every byte of it served by this worker (the
 * pinned `@scalar/api-reference` browser bundle from the worker's static assets, the ASSETS binding of
 * wrangler.toml, so its 3.5 MB are not loaded with the code that answers metered calls), under a
 * Content-Security-Policy that lets the page reach nothing but this origin and the API it documents. It
 * renders with the network cut, and no third party learns who reads the docs.
 */

/** What Scalar is told: no web fonts, no telemetry, no AI agent or MCP panel (each would call scalar.com). */
const SCALAR_CONFIGURATION = {
  url: '/openapi.json',
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
  // The whole reference in the sidebar, so one glance shows what exists. Its 148 operations (0.48 MB of document)
  // make the page heavy: first text after 4-6 s in this project's 2-core chromium, the rest rendered behind it
  // (86k elements, ~40 CPU-s). With tags closed the first text came no sooner (parsing the document is most of
  // it), so they stay open (measured 2026-12-02).
  defaultOpenAllTags: true,
};

const INIT_SCRIPT = `Scalar.createApiReference('#reference', ${JSON.stringify(SCALAR_CONFIGURATION)});\n`;

/** Where scripts/reference-ui.mjs puts the bundle among the assets. */
const BUNDLE_ASSET = '/scalar-api-reference.js';
const INIT_PATH = '/docs/assets/init.js';

/**
 * The bundle's address carries the ETag the asset store gives it (a hash of the file), so it can be cached
 * for good and a new version is a new URL. Asked once per isolate; a failed lookup is asked again.
 */
let bundlePath: Promise<string> | undefined;
function bundlePathOf(assets: Fetcher): Promise<string> {
  return (bundlePath ??= bundleAsset(assets, 'HEAD')
    .then((response) => {
      const tag = response.headers.get('etag')?.replace(/[^0-9a-f]/gi, '');
      if (!tag) throw new Error(`The asset store gave ${BUNDLE_ASSET} no ETag.`);
      return `/docs/assets/scalar-${tag.slice(0, 16)}.js`;
    })
    .catch((error: unknown) => {
      bundlePath = undefined;
      throw error;
    }));
}

/** The bundle from the assets (the binding reads only the path). Missing, it is the deployment's fault: a 500. */
async function bundleAsset(assets: Fetcher, method: 'GET' | 'HEAD'): Promise<Response> {
  const response = await assets.fetch(`https://assets.invalid${BUNDLE_ASSET}`, { method });
  if (!response.ok) throw new Error(`The reference UI is not among the api worker's assets (${BUNDLE_ASSET}: ${response.status}); scripts/reference-ui.mjs puts it there.`);
  return response;
}

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
    <script src="${await bundlePathOf(c.env.ASSETS)}"></script>
    <script src="${INIT_PATH}"></script>
  </body>
</html>`;
    return c.html(page, 200, { 'content-security-policy': contentSecurityPolicy(publicUrls(c.env)), 'referrer-policy': 'no-referrer' });
  });

  app.get('/docs/assets/:file', async (c) => {
    if (c.req.path === INIT_PATH) return c.body(INIT_SCRIPT, 200, script('no-cache'));
    if (c.req.path === (await bundlePathOf(c.env.ASSETS))) {
      // A successful GET has a body.
      return c.body((await bundleAsset(c.env.ASSETS, 'GET')).body!, 200, script('public, max-age=31536000, immutable'));
    }
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
