import type { OpenAPIHono } from '@hono/zod-openapi';
import { deprecationHeaders, DEPRECATIONS, isSunset } from '../../core/deprecations';
import { ApiError } from '../../core/errors';
import { OPERATIONS } from '../../operations';
import type { Operation } from '../../core/operation';
import type { AppEnv } from '../../core/context';
import { handle } from './data';

/**
 * The curated source paths of before `/v1/data`: `/v1/<slug>/<operation>` for every operation of the
 * registry, each with its successor `/v1/data/<slug>/<operation>`. Until the sunset an old path serves
 * its successor, with `Deprecation`, `Sunset` and a `Link` to it; from the sunset on it answers 410
 * ENDPOINT_MIGRATED naming it. Generated from the registry, so only source slugs are taken: a slug can
 * never shadow `/v1/credits`, `/v1/db` or any other route (a test checks the reserved names).
 */
export const RETIRED_PATHS = OPERATIONS.flatMap((operation) => {
  const successor = operation.paths.find((path) => path.startsWith('/v1/data/'));
  return successor ? [{ path: successor.replace(/^\/v1\/data\//, '/v1/'), successor, operation }] : [];
});

export function registerRetiredPaths(app: OpenAPIHono<AppEnv>) {
  for (const { path, successor, operation } of RETIRED_PATHS) {
    app.all(path, (c) => {
      const link = `<${successor}>; rel="successor-version"`;
      if (isSunset(DEPRECATIONS.curatedPaths)) throw migrated(path, successor, link);
      const headers = deprecationHeaders(DEPRECATIONS.curatedPaths, [link]);
      // Refusals carry the deprecation too: a client that only ever sees errors still learns of the move.
      const withHeaders = (error: unknown) => {
        if (error instanceof ApiError) Object.assign(error.headers, headers);
        throw error;
      };
      if (c.req.method !== operation.method) return withHeaders(wrongMethod(path, operation));
      return handle(c, operation, headers).catch(withHeaders);
    });
  }
}

function migrated(path: string, successor: string, link: string): ApiError {
  const removed = new Date(DEPRECATIONS.curatedPaths.sunsetAt).toISOString().slice(0, 10);
  return new ApiError('ENDPOINT_MIGRATED', `${path} was retired on ${removed}. Call ${successor} instead: same parameters, same key.`, { headers: { Link: link } });
}

function wrongMethod(path: string, operation: Operation): ApiError {
  return new ApiError('ENDPOINT_NOT_FOUND', `${path} is served with ${operation.method} only.`, { headers: { Allow: operation.method } });
}
