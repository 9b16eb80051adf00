import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { success } from '../../core/envelope';
import { ApiError } from '../../core/errors';
import { IDEMPOTENCY_KEY_HEADER, idempotencyKeyFromHeader } from '../../services/idempotency';
import { type Call, execute, refusedBeforeExecute } from '../../services/pipeline';
import { unreadableJsonBody } from '../../core/request-body';
import { refuseQueryOfBodyOperation, refuseRepeatedQueryParameters } from '../../core/validation';
import { ensureServing } from '../../services/platform-switches';
import { OPERATIONS } from '../../operations';
import { CATALOG, SOURCES } from '../../operations/catalog';
import { JOBS_PATH } from '../../core/protocols/job';
import { mcpToolName, type Operation } from '../../core/operation';
import type { AppEnv } from '../../core/context';
import { exampleOf } from '../examples';
import { IdempotencyKeyParameter, jsonContent, Meta, meteredErrorResponses } from '../../core/schemas';

const DATA_PREFIX = '/v1/data/';
/** Sluice's own source: data jobs. */
export const AGNT_SLUG = 'agnt';

/** Every operation of the registry as a REST route: one handler, one pipeline, docs from the same schemas. */
export function registerOperations(app: OpenAPIHono<AppEnv>, authenticate: MiddlewareHandler<AppEnv>) {
  app.use(`${DATA_PREFIX}*`, knownSourceAndOperation(DATA_PREFIX));
  const headers = meteredHeaders(app);
  for (const operation of OPERATIONS) {
    app.openAPIRegistry.registerPath(routeOf(operation, headers));
    for (const path of operation.paths) {
      // Paths under /v1 are already behind the /v1 key check; root-path tool endpoints get their own.
      if (!path.startsWith('/v1/')) app.use(path, authenticate);
      app.on(operation.method, path, (c) => handle(c, operation));
    }
  }
}

const HEADERS_OF = new WeakMap<object, z.ZodObject>();

/** The optional Idempotency-Key header of a metered route, registered once per document. */
export function meteredHeaders(app: OpenAPIHono<AppEnv>): z.ZodObject {
  let headers = HEADERS_OF.get(app.openAPIRegistry);
  if (!headers) HEADERS_OF.set(app.openAPIRegistry, (headers = z.object({ 'Idempotency-Key': app.openAPIRegistry.registerParameter('IdempotencyKey', IdempotencyKeyParameter) })));
  return headers;
}

/**
 * Under <prefix><slug>/<operation> (/v1/data/, /runtime/data/): an unknown slug is 404 PROVIDER_NOT_FOUND
 * listing the valid ones, a known slug with an unknown operation 404 ENDPOINT_NOT_FOUND listing its
 * operations. A known path asked with the wrong method goes on to the not-found handler, which answers
 * ENDPOINT_NOT_FOUND with `Allow`.
 */
export function knownSourceAndOperation(prefix: string): MiddlewareHandler<AppEnv> {
  const paths = new Set(OPERATIONS.flatMap((operation) => dataPathsOf(operation, prefix)));
  // Sluice's own source (data jobs, routes/jobs.ts) is served under /v1/data only.
  const jobs = prefix === DATA_PREFIX;
  const slugs = (jobs ? SOURCES : CATALOG).map((platform) => platform.slug);
  return async (c, next) => {
    if (paths.has(c.req.path)) return next();
    // A known path with a trailing slash is no route: the app's not-found handler says which one was meant.
    if (c.req.path.endsWith('/') && paths.has(c.req.path.replace(/\/+$/, ''))) return next();
    const [slug = '', name = ''] = c.req.path.slice(prefix.length).split('/');
    if (jobs && slug === AGNT_SLUG) {
      if (JOB_ROUTE.test(c.req.path.replace(/\/+$/, ''))) return next();
      throw new ApiError('ENDPOINT_NOT_FOUND', `The source '${AGNT_SLUG}' has no route ${c.req.path}. Its routes: ${JOB_ROUTES}. See GET /v1/platforms/${AGNT_SLUG}.`);
    }
    const platform = CATALOG.find((entry) => entry.slug === slug);
    if (!platform) throw new ApiError('PROVIDER_NOT_FOUND', `No source '${slug}'. Valid slugs: ${slugs.join(', ')}.`);
    const names = platform.operations.map((operation) => operation.name).join(', ');
    throw new ApiError('ENDPOINT_NOT_FOUND', `The source '${slug}' has no operation '${name}'. Its operations: ${names}. See GET /v1/platforms/${slug}.`);
  };
}

/** The data jobs' routes (routes/jobs.ts), which the app's router serves under the agnt source. */
const JOB_ROUTE = new RegExp(`^${JOBS_PATH}(/[^/]+(/results|/cancel)?)?$`);
const JOB_ROUTES = `POST and GET ${JOBS_PATH}, GET ${JOBS_PATH}/{id}, GET ${JOBS_PATH}/{id}/results, POST ${JOBS_PATH}/{id}/cancel`;

/** An operation's paths under /v1/data/, as served under another prefix (/runtime/data/ for deployed agents). */
export function dataPathsOf(operation: Operation, prefix = DATA_PREFIX): string[] {
  return operation.paths.filter((path) => path.startsWith(DATA_PREFIX)).map((path) => `${prefix}${path.slice(DATA_PREFIX.length)}`);
}

/** One operation's REST handler, wherever it is mounted: `surface` is what the surface adds (its own rule, a sandbox answer, a connection: see Call). */
export async function handle(
  c: Context<AppEnv>,
  operation: Operation,
  headers: Record<string, string> = {},
  surface: Pick<Call, 'admit' | 'instead' | 'connection'> = {},
  read: unknown = undefined,
) {
  // Routed to GET by the app, a HEAD would run the call and be charged for an answer it never shows.
  if (c.req.method === 'HEAD') {
    throw new ApiError('ENDPOINT_NOT_FOUND', `HEAD is not served at ${c.req.path}: it would run the call, and charge it, without its answer. Send GET.`, { headers: { Allow: 'GET' } });
  }
  const waitUntil = (promise: Promise<unknown>) => c.executionCtx.waitUntil(promise);
  const call = { env: c.env, principal: c.get('principal'), requestId: c.get('requestId'), ...(surface.connection ? { connection: surface.connection } : {}) };
  let input = read;
  try {
    await ensureServing(c.env.DB, operation.platform, waitUntil);
    input ??= await inputOf(c, operation);
  } catch (error) {
    // The key was only remembered (a metered route's gate is asked by the pipeline): a revoked one is told so here too.
    if (error instanceof ApiError) await refusedBeforeExecute(operation, call, error);
    throw error;
  }
  const isQuery = operation.method === 'GET';
  const outcome = await execute(operation, input, isQuery ? 'query' : 'body', {
    ...call,
    waitUntil,
    signal: c.req.raw.signal,
    idempotencyKey: idempotencyKeyFromHeader(c.req.header(IDEMPOTENCY_KEY_HEADER)),
    ...surface,
  });
  if (outcome.meta) c.set('costCents', outcome.meta.costCents);
  return c.json(success(outcome.data, outcome.meta, outcome.message), 200, { ...outcome.headers, ...headers });
}

/** The call's input as sent: a GET's query, another method's JSON body (a body that is not JSON is refused here). */
export async function inputOf(c: Context<AppEnv>, operation: Operation): Promise<unknown> {
  if (operation.method !== 'GET') {
    await refuseQueryOfBodyOperation(c.req.url, operation.input, () => readJsonBody(c));
    return readJsonBody(c);
  }
  const query = c.req.query();
  refuseRepeatedQueryParameters(c.req.url, operation.input, query);
  return query;
}

/** An empty body reads as `{}`, so the answer names the missing fields rather than the body. */
async function readJsonBody(c: Context<AppEnv>): Promise<unknown> {
  // Decoded here rather than by text(), which warns on every body not declared as text (a form post).
  const text = new TextDecoder().decode(await c.req.arrayBuffer());
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw unreadableJsonBody(c.req.header('content-type'));
  }
}

/** Where else an operation is documented with its own entry: a root tool through a connection (routes/connections.ts). */
export interface DocumentedElsewhere {
  path: string;
  params: z.ZodObject;
  operationId: string;
  tags: string[];
  summary: string;
  description: string;
}

/**
 * One entry per operation, at its canonical path (the first). Its twins (`/v1/data/<group>/...` beside a
 * root path) take the same input at the same price and window, so they are named in the description and
 * in `x-aliases` rather than documented again under operation ids of their own. `elsewhere` documents the
 * same input and answer at another path (a connection's), which also answers 404.
 */
export function routeOf(operation: Operation, headers: z.ZodObject, elsewhere?: DocumentedElsewhere) {
  const price = operation.price.display;
  const [canonical, ...twins] = operation.paths;
  const path = elsewhere?.path ?? canonical!;
  const aliases = elsewhere ? [] : twins;
  const example = exampleOf(operation);
  const answer = z.object({
    success: z.literal(true),
    ...(operation.keepsMessage ? { message: z.string() } : {}),
    data: operation.output,
    meta: Meta,
  });
  const alsoAt = aliases.length > 0 ? ` Also served at ${aliases.map((alias) => `\`${alias}\``).join(', ')}: same input, price and rate window.` : '';
  return createRoute({
    method: operation.method === 'GET' ? 'get' : 'post',
    path,
    tags: elsewhere?.tags ?? ['Data'],
    summary: elsewhere?.summary ?? operation.summary,
    description:
      elsewhere?.description ??
      `${operation.description}\n\nCost: ${price.cents} cent${price.cents === 1 ? '' : 's'} per ${price.per}${price.note ? ` (${price.note})` : ''}; only successful calls are charged. MCP tool: \`${mcpToolName(operation)}\`.${alsoAt}`,
    operationId: elsewhere?.operationId ?? mcpToolName(operation),
    ...(aliases.length > 0 ? { 'x-aliases': aliases } : {}),
    request: {
      ...(elsewhere ? { params: elsewhere.params } : {}),
      headers,
      ...(operation.method === 'GET'
        ? { query: example ? withParameterExamples(operation.input, example.input) : operation.input }
        : { body: { content: { 'application/json': { schema: operation.input, ...(example ? { example: example.input } : {}) } }, required: true } }),
    },
    responses: {
      200: jsonContent(answer, 'The payload, with what the call cost and the balances after it.', {
        metered: true,
        ...(example?.data !== undefined ? { example: { success: true, ...(operation.keepsMessage ? { message: 'ok' } : {}), data: example.data, meta: Meta.parse(EXAMPLE_META) } } : {}),
      }),
      // 404 on every one: an upstream's own 4xx passes through with its status (the spec's rule 2), and a record the
      // vendor does not have is the common one. Generated clients type only the statuses a route declares.
      ...meteredErrorResponses(400, 401, 402, 403, 404, 409, 422, 429, 502, 503),
    },
  });
}

const EXAMPLE_META = { costCents: 1, purchasedBalanceCents: 499, subscriptionRemainingCents: 0, cached: false, latencyMs: 212 };

/** A GET operation's query parameters, each with the value of the example call. */
function withParameterExamples(input: z.ZodObject, values: Record<string, unknown>): z.ZodObject {
  const shape = Object.fromEntries(
    Object.entries(input.shape).map(([name, field]) => [name, name in values ? (field as z.ZodType).openapi({ example: values[name] }) : field]),
  );
  try {
    return input.extend(shape);
  } catch {
    // zod refuses to extend an object with cross-field checks; its fields then go undocumented by example.
    return input;
  }
}
