import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { success } from '../../core/envelope';
import type { AppEnv } from '../../core/context';
import type { Operation } from '../../core/operation';
import { errorResponses, jsonContent, NoParameters, successEnvelope } from '../../core/schemas';
import { OPERATIONS } from '../../operations';
import { CONNECTABLE_VENDORS, connectableVendor } from '../../services/connections-vendors';
import { connectionFailure, connectionUse, createConnection, credentialsFor, deleteConnection, getConnection, listConnections, MAX_CONNECTIONS_PER_WORKSPACE, recheckConnection } from '../../services/connections';
import { admitFreeCall } from '../../services/pipeline';
import { mcpToolName } from '../../core/operation';
import { dataPathsOf, handle, inputOf, meteredHeaders, routeOf } from './data';
import { requireManagingKey } from '../../services/managing-keys';

const TAGS = ['Connections'];
export const CONNECTION_DATA_PREFIX = '/v1/connections/:connectionId/data/';
/** Under it, the root web/SEO tool paths (`/scrape`, `/serp`, ...) through a connection: `/v1/connections/:connectionId/serp`. */
export const CONNECTION_PREFIX = '/v1/connections/:connectionId';
/** The words after a connection's id that are its own routes, which no root tool path may take. */
const CONNECTION_ROUTES = new Set(['check', 'data']);

/** An operation's root tool paths (the spec's `/scrape`, `/serp`, ...), as served through a connection. */
export function connectionRootPathsOf(operation: Operation): string[] {
  return operation.paths.filter((path) => !path.startsWith('/v1/')).map((path) => `${CONNECTION_PREFIX}${path}`);
}

for (const operation of OPERATIONS) {
  for (const path of operation.paths) {
    if (!path.startsWith('/v1/') && CONNECTION_ROUTES.has(path.split('/')[1]!)) throw new Error(`The root tool path ${path} would shadow a connection's own route /v1/connections/{id}${path}.`);
  }
}

const idParam = z.object({ id: z.string().openapi({ param: { name: 'id', in: 'path' }, example: 'con_5f1c2a9b7d3e4f6a8b0c1d2e' }) });

const Connection = z
  .object({
    id: z.string(),
    vendor: z.string().openapi({ description: 'A slug of GET /v1/connections/vendors.' }),
    name: z.string(),
    hint: z.string().openapi({ description: 'The last four characters of the secret, as "…4f2a"; the credentials are never answered.' }),
    status: z.enum(['ok', 'rejected', 'unreachable']).openapi({ description: "What the vendor said at the last check (or a call it refused the credentials of)." }),
    createdAt: z.string(),
    lastCheckedAt: z.string(),
  })
  .openapi('Connection');

const CheckedConnection = Connection.extend({ reason: z.string().optional().openapi({ description: 'Why the check was not ok, in the vendor’s words where it gave some.' }) }).openapi('CheckedConnection');

const ConnectableVendor = z
  .object({
    slug: z.string(),
    label: z.string(),
    fields: z.array(z.object({ name: z.string(), secret: z.boolean(), description: z.string() })),
    operations: z.array(z.string()).openapi({ description: '`<slug>/<operation>` of each operation a connection to this vendor serves at /v1/connections/{id}/data/<slug>/<operation>.' }),
  })
  .openapi('ConnectableVendor');

const CreateConnection = z
  .strictObject({
    vendor: z.enum(CONNECTABLE_VENDORS.map((vendor) => vendor.slug) as [string, ...string[]]),
    name: z.string().trim().min(1).max(100).optional(),
    credentials: z.record(z.string(), z.unknown()).openapi({ description: "The vendor's credential fields (GET /v1/connections/vendors), e.g. {\"apiKey\": \"...\"}." }),
  })
  .openapi('CreateConnection');

const EXAMPLE = { id: 'con_5f1c2a9b7d3e4f6a8b0c1d2e', vendor: 'hunter', name: 'Our Hunter account', hint: '…4f2a', status: 'ok' as const, createdAt: '2026-11-24T09:00:00.000Z', lastCheckedAt: '2026-11-24T09:00:00.000Z' };
const example = <T,>(value: T) => ({ example: success(value) });

const routes = {
  vendors: createRoute({
    method: 'get',
    path: '/v1/connections/vendors',
    tags: TAGS,
    summary: 'The vendors a workspace can connect its own account of, with the credential fields each needs and the operations each serves',
    operationId: 'listConnectableVendors',
    request: { query: NoParameters },
    responses: { 200: jsonContent(successEnvelope(z.object({ vendors: z.array(ConnectableVendor) })), 'Every connectable vendor.', example({ vendors: vendorList() })), ...errorResponses(400, 401, 403, 429) },
  }),
  list: createRoute({
    method: 'get',
    path: '/v1/connections',
    tags: TAGS,
    summary: "The workspace's connections, newest first; never a credential",
    operationId: 'listConnections',
    request: { query: NoParameters },
    responses: { 200: jsonContent(successEnvelope(z.object({ connections: z.array(Connection) })), 'Connections.', example({ connections: [EXAMPLE] })), ...errorResponses(400, 401, 403, 429) },
  }),
  create: createRoute({
    method: 'post',
    path: '/v1/connections',
    tags: TAGS,
    summary: "Connect the workspace's own account of a vendor",
    description:
      `The credentials are checked first with the vendor's cheapest authenticated call: refused → 400 VALIDATION_ERROR with the vendor's reason, vendor unreachable → 503 PROVIDER_UNAVAILABLE; nothing is stored either way. Stored encrypted, never answered again. A workspace has at most ${MAX_CONNECTIONS_PER_WORKSPACE} connections: one more is 409 CONFLICT, before the vendor is asked. Needs a key made by an owner or admin of the organization (403 otherwise).`,
    operationId: 'createConnection',
    request: { body: { content: { 'application/json': { schema: CreateConnection, example: { vendor: 'hunter', name: 'Our Hunter account', credentials: { apiKey: 'd3b07384d113edec49eaa6238ad5ff00c86f4f2a' } } } }, required: true } },
    responses: { 201: jsonContent(successEnvelope(Connection), 'The connection.', example(EXAMPLE)), ...errorResponses(400, 401, 403, 409, 429, 503) },
  }),
  get: createRoute({
    method: 'get',
    path: '/v1/connections/{id}',
    tags: TAGS,
    summary: 'One connection',
    operationId: 'getConnection',
    request: { params: idParam, query: NoParameters },
    responses: { 200: jsonContent(successEnvelope(Connection), 'The connection.', example(EXAMPLE)), ...errorResponses(400, 401, 403, 404, 429) },
  }),
  remove: createRoute({
    method: 'delete',
    path: '/v1/connections/{id}',
    tags: TAGS,
    summary: 'Remove a connection and its stored credentials',
    description: 'Needs a key made by an owner or admin of the organization (403 otherwise).',
    operationId: 'deleteConnection',
    request: { params: idParam },
    responses: { 200: jsonContent(successEnvelope(Connection), 'The connection removed.', example(EXAMPLE)), ...errorResponses(400, 401, 403, 404, 429) },
  }),
  check: createRoute({
    method: 'post',
    path: '/v1/connections/{id}/check',
    tags: TAGS,
    summary: 'Check the stored credentials with the vendor again',
    operationId: 'checkConnection',
    request: { params: idParam },
    responses: { 200: jsonContent(successEnvelope(CheckedConnection), 'The connection with what the vendor said now.', example(EXAMPLE)), ...errorResponses(400, 401, 403, 404, 429) },
  }),
};

/** Each connectable vendor with its credential fields (never a setting's name) and the operations it serves. */
function vendorList() {
  return CONNECTABLE_VENDORS.map((vendor) => ({
    slug: vendor.slug,
    label: vendor.label,
    fields: vendor.fields.map(({ name, secret, description }) => ({ name, secret, description })),
    operations: vendor.operations.map((operation) => `${operation.platform}/${operation.name}`),
  }));
}

/**
 * `/v1/connections/*` (issue 33): a workspace's own vendor accounts, and the operations of /v1/data through
 * them at `/v1/connections/{id}/data/<slug>/<operation>` — the same input, validation and answer, sent with
 * the workspace's credentials, charged the plan's platform fee instead of the price. Every route counts in
 * the workspace's window (spec "Request rate"); another workspace's connection is 404.
 */
export function registerConnections(app: OpenAPIHono<AppEnv>) {
  const admitted = async (c: Context<AppEnv>) => admitFreeCall(c.env, c.get('principal'));

  app.openapi(routes.vendors, async (c) => {
    const headers = await admitted(c);
    return c.json(success({ vendors: vendorList() }), 200, headers);
  });

  app.openapi(routes.list, async (c) => {
    const headers = await admitted(c);
    return c.json(success({ connections: await listConnections(c.env.DB, c.get('principal').workspaceId) }), 200, headers);
  });

  app.openapi(routes.create, async (c) => {
    const headers = await admitted(c);
    await requireManagingKey(c.env.DB, c.get('principal'), 'connect vendor accounts');
    const body = c.req.valid('json');
    const vendor = connectableVendor(body.vendor)!;
    const credentials = credentialsFor(vendor, body.credentials);
    const connection = await createConnection(c.env, c.get('principal').workspaceId, { vendor, name: body.name, credentials }, c.req.raw.signal);
    return c.json(success(connection), 201, headers);
  });

  app.openapi(routes.get, async (c) => {
    const headers = await admitted(c);
    return c.json(success(await getConnection(c.env.DB, c.get('principal').workspaceId, c.req.valid('param').id)), 200, headers);
  });

  app.openapi(routes.remove, async (c) => {
    const headers = await admitted(c);
    await requireManagingKey(c.env.DB, c.get('principal'), 'remove vendor accounts');
    return c.json(success(await deleteConnection(c.env.DB, c.get('principal').workspaceId, c.req.valid('param').id)), 200, headers);
  });

  app.openapi(routes.check, async (c) => {
    const headers = await admitted(c);
    return c.json(success(await recheckConnection(c.env, c.get('principal').workspaceId, c.req.valid('param').id, c.req.raw.signal)), 200, headers);
  });

  for (const operation of OPERATIONS) {
    for (const path of dataPathsOf(operation, CONNECTION_DATA_PREFIX)) app.on(operation.method, path, (c) => callThrough(c, operation));
    for (const path of connectionRootPathsOf(operation)) {
      app.openAPIRegistry.registerPath(routeOf(operation, meteredHeaders(app), rootToolThrough(operation, path)));
      app.on(operation.method, path, (c) => callThrough(c, operation));
    }
  }
}

const connectionIdParam = z.object({ connectionId: z.string().openapi({ param: { name: 'connectionId', in: 'path' }, example: EXAMPLE.id }) });

/** The document's entry of a root tool through a connection: the root path's input and answer, its own operation id. */
function rootToolThrough(operation: Operation, path: string) {
  const root = path.slice(CONNECTION_PREFIX.length);
  const vendors = CONNECTABLE_VENDORS.filter((vendor) => vendor.operations.includes(operation)).map((vendor) => vendor.slug);
  return {
    path: path.replace(':connectionId', '{connectionId}'),
    params: connectionIdParam,
    operationId: `${mcpToolName(operation)}_through_connection`,
    tags: TAGS,
    summary: `${operation.summary}, through a connection`,
    description:
      `${operation.method} ${root} sent with the workspace's own vendor account: the same input, validation and answer, the vendor reached with the connection's credentials. ` +
      `Served by connections to ${vendors.join(', ')}; another vendor's connection answers 404 ENDPOINT_NOT_FOUND naming these. ` +
      "Charged the plan's connection fee (GET /v1/plans, connectionFeeCents) instead of the operation's price, only on success; `meta.connectionId` names the connection. " +
      "The vendor's own throttle is a 429 PROVIDER_ERROR with its Retry-After (a plan change does not help); its refusing the credentials marks the connection rejected.",
  };
}

/** One operation through a connection: the pipeline with the workspace's credentials and the fee; the vendor's failures read as the account's. */
async function callThrough(c: Context<AppEnv>, operation: Operation) {
  const id = c.req.param('connectionId') ?? '';
  // The request's own form first, as on every JSON route: a body that is not JSON is a 400 before the connection is looked up.
  const input = await inputOf(c, operation);
  const { use, connection, vendor } = await connectionUse(c.env, c.get('principal').workspaceId, id, operation);
  try {
    return await handle(c, operation, {}, { connection: use }, input);
  } catch (error) {
    throw await connectionFailure(c.env.DB, connection, vendor, error);
  }
}
