import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { PatternRouter } from 'hono/router/pattern-router';
import { requestIdAndSecurityHeaders } from './security-headers';
import { failure } from './envelope';
import { ApiError } from './errors';
import { readRequestBody, unreadableJsonBody } from './request-body';
import { locationOfTarget, queryValidationError, validationErrorFromZod } from './validation';
import type { Env } from './config';
import type { AppEnv } from './context';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** Each request's body refused for its size, kept for the answer: Hono's JSON validator says any failed read is malformed JSON. */
const refusedBodies = new WeakMap<Request, ApiError>();

/** What every app made here has: the installation's bindings and a request id. */
export interface BaseEnv {
  Bindings: Env;
  Variables: { requestId: string };
}

export interface AppOptions<E extends BaseEnv> {
  /** A page for a missing route that a person rather than a program asked for; undefined keeps the JSON 404. */
  notFoundPage?: (c: Context<E>) => Response | undefined | Promise<Response | undefined>;
  /** The most a route reads of a body, when one route needs more than MAX_REQUEST_BODY_BYTES (a data job's inputs). */
  maxBodyBytes?: (method: string, path: string) => number | undefined;
}

/**
 * The one app factory, for the api worker and the dashboard's JSON API: request ids, the validation hook,
 * the error handler and the not-found handler are set here once, so every route answers in the same envelope.
 */
export function createApp<E extends BaseEnv = AppEnv>(options: AppOptions<E> = {}): OpenAPIHono<E> {
  const app = new OpenAPIHono<E>({
    defaultHook: (result, c) => {
      if (result.success) return;
      throw result.target === 'query' ? queryValidationError(result.error, c.req.url) : validationErrorFromZod(result.error, locationOfTarget(result.target));
    },
  });

  app.use(requestIdAndSecurityHeaders() as unknown as MiddlewareHandler<E>);

  // Every body is read here, through a capped reader, before any route or validator sees it; they read the copy.
  // A body over the cap is refused when a route reads it, not here: the credential is checked first, so a request
  // without a key is the spec's 401 whatever it carries, and a route that reads no body answers as it would. It is
  // read (or drained) now all the same: a client still writing it must not meet a reset connection.
  app.use(async (c, next) => {
    // Hono keeps body promises in bodyCache (its type says values); text() and json() read from this one.
    const cache = c.req.bodyCache as { arrayBuffer?: Promise<ArrayBuffer> };
    try {
      const body = await readRequestBody(c.req.raw, options.maxBodyBytes?.(c.req.method, c.req.path));
      if (body) cache.arrayBuffer = Promise.resolve(body.buffer as ArrayBuffer);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      refusedBodies.set(c.req.raw, error);
      cache.arrayBuffer = Promise.reject(error);
      cache.arrayBuffer.catch(() => {}); // refused where a route reads it; unread, it is no error
    }
    await next();
  });

  app.onError((error, c) => failure(c, toApiError(error, c as unknown as Context<BaseEnv>)));

  let routeTable: PatternRouter<string> | undefined;
  app.notFound(async (c) => {
    const page = await options.notFoundPage?.(c);
    if (page) return page;
    routeTable ??= buildRouteTable(app);
    const path = c.req.path;
    // Hono's pattern router reads a trailing slash as optional, the app's router does not: `/v1/credits/` is no
    // route, and the answer says which one was meant rather than that GET is not served where GET is.
    if (path.length > 1 && path.endsWith('/')) {
      const meant = path.replace(/\/+$/, '') || '/';
      const answers = METHODS.filter((method) => routeTable!.match(method, meant)[0].length > 0);
      if (answers.length > 0) return failure(c, ApiError.notFound(`No route ${c.req.method} ${path}: paths take no trailing slash. ${meant} answers ${answers.join(', ')}.`));
    }
    const allowed = METHODS.filter((method) => routeTable!.match(method, path)[0].length > 0);
    if (allowed.length > 0) {
      return failure(
        c,
        new ApiError('ENDPOINT_NOT_FOUND', `${c.req.method} is not served at ${path}; it answers ${allowed.join(', ')}.`, {
          headers: { Allow: allowed.join(', ') },
        }),
      );
    }
    return failure(c, ApiError.notFound(`No route ${c.req.method} ${path}. See /openapi.json for the API reference.`));
  });

  return app;
}

/** Routes with a concrete method (not middleware), so a wrong method can be told apart from a wrong path. */
function buildRouteTable<E extends BaseEnv>(app: OpenAPIHono<E>): PatternRouter<string> {
  const table = new PatternRouter<string>();
  for (const route of app.routes) {
    if (route.method !== 'ALL') table.add(route.method, route.path, route.method);
  }
  return table;
}

function toApiError(error: unknown, c: Context<BaseEnv>): ApiError {
  if (error instanceof ApiError) return error;
  // Hono's validators throw 400 for a body that is not the JSON it claims to be, 415 for a body that is not declared JSON.
  if (error instanceof HTTPException && (error.status === 400 || error.status === 415)) return refusedBodies.get(c.req.raw) ?? unreadableJsonBody(c.req.header('content-type'));
  console.error(JSON.stringify({ level: 'error', requestId: c.get('requestId'), path: c.req.path, error: String(error), stack: error instanceof Error ? error.stack : undefined }));
  return ApiError.internal();
}
