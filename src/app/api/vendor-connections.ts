import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { errorResponses, jsonContent, successEnvelope } from '../../core/schemas';
import { success } from '../../core/envelope';
import { ApiError } from '../../core/errors';
import { CONNECTABLE_VENDORS, connectableVendor } from '../../services/connections-vendors';
import { createConnection, credentialsFor, deleteConnection, listConnections, recheckConnection } from '../../services/connections';
import type { DashboardEnv } from '../context';
import { requireManager, workspaceAccess } from '../members';
import { jsonBody, workspaceIdParam } from './schemas';

const Connection = z
  .object({
    id: z.string(),
    vendor: z.string(),
    name: z.string(),
    hint: z.string().openapi({ description: 'The last four characters of the secret; the credentials are never answered.' }),
    status: z.enum(['ok', 'rejected', 'unreachable']),
    createdAt: z.string(),
    lastCheckedAt: z.string(),
    reason: z.string().optional(),
  })
  .openapi('VendorConnection');

/** The page's form: the vendor, a name, and its credentials as two fields (a login where the vendor has one, and the secret). */
const NewConnection = z.strictObject({
  vendor: z.enum(CONNECTABLE_VENDORS.map((vendor) => vendor.slug) as [string, ...string[]]),
  name: z.string().trim().max(100).optional(),
  login: z.string().optional(),
  secret: z.string().optional(),
});

const connectionParam = workspaceIdParam.extend({
  connectionId: z.string().regex(/^con_[0-9a-f]{24}$/, 'Expected a connection id (con_ and 24 hex characters).').openapi({ param: { name: 'connectionId', in: 'path' } }),
});

const TAGS = ['Vendor accounts'];
const routes = {
  list: createRoute({
    method: 'get',
    path: '/api/workspaces/{workspaceId}/vendor-connections',
    tags: TAGS,
    summary: "The workspace's vendor accounts (connections); never a credential",
    operationId: 'listVendorConnections',
    request: { params: workspaceIdParam },
    responses: { 200: jsonContent(successEnvelope(z.object({ connections: z.array(Connection) })), 'Connections.'), ...errorResponses(400, 401, 404) },
  }),
  create: createRoute({
    method: 'post',
    path: '/api/workspaces/{workspaceId}/vendor-connections',
    tags: TAGS,
    summary: "Connect a vendor account (owners and admins): checked with the vendor first, nothing stored if it refuses",
    operationId: 'createVendorConnection',
    request: { params: workspaceIdParam, body: jsonBody(NewConnection) },
    responses: { 201: jsonContent(successEnvelope(Connection), 'The connection.'), ...errorResponses(400, 401, 403, 404, 409, 503) },
  }),
  check: createRoute({
    method: 'post',
    path: '/api/workspaces/{workspaceId}/vendor-connections/{connectionId}/check',
    tags: TAGS,
    summary: 'Check a connection with the vendor again',
    operationId: 'checkVendorConnection',
    request: { params: connectionParam },
    responses: { 200: jsonContent(successEnvelope(Connection), 'The connection and what the vendor said.'), ...errorResponses(400, 401, 404) },
  }),
  remove: createRoute({
    method: 'delete',
    path: '/api/workspaces/{workspaceId}/vendor-connections/{connectionId}',
    tags: TAGS,
    summary: 'Remove a connection and its credentials (owners and admins)',
    operationId: 'deleteVendorConnection',
    request: { params: connectionParam },
    responses: { 200: jsonContent(successEnvelope(Connection), 'The connection removed.'), ...errorResponses(400, 401, 403, 404) },
  }),
};

/** The Vendor accounts page's API: the same connections as /v1/connections, managed by owners and admins. */
export function registerVendorConnections(app: OpenAPIHono<DashboardEnv>) {
  app.openapi(routes.list, async (c) => {
    const { workspace } = await workspaceAccess(c.env.DB, c.get('session').user.id, c.req.valid('param').workspaceId);
    return c.json(success({ connections: await listConnections(c.env.DB, workspace.id) }), 200);
  });

  app.openapi(routes.create, async (c) => {
    const access = await workspaceAccess(c.env.DB, c.get('session').user.id, c.req.valid('param').workspaceId);
    requireManager(access, 'connect vendor accounts');
    const body = c.req.valid('json');
    const vendor = connectableVendor(body.vendor)!;
    const given = Object.fromEntries(vendor.fields.map((field) => [field.name, field.secret ? body.secret : body.login]));
    let credentials: Record<string, string>;
    try {
      credentials = credentialsFor(vendor, given);
    } catch (error) {
      // The form has two fields: each vendor field's error is said beside the one it was typed in.
      if (!(error instanceof ApiError) || !error.details) throw error;
      const formField = (field: string) => (vendor.fields.find((candidate) => `credentials.${candidate.name}` === field)?.secret === false ? 'login' : 'secret');
      throw ApiError.validation(error.details.map((detail) => ({ ...detail, field: formField(detail.field) })));
    }
    const connection = await createConnection(c.env, access.workspace.id, { vendor, name: body.name || undefined, credentials }, c.req.raw.signal).catch((error: unknown) => {
      if (error instanceof ApiError && error.details) {
        throw ApiError.validation(error.details.map((detail) => ({ ...detail, field: detail.field.endsWith(vendor.hintField) ? 'secret' : 'login' })), error.message);
      }
      throw error;
    });
    return c.json(success(connection), 201);
  });

  app.openapi(routes.check, async (c) => {
    const { workspaceId, connectionId } = c.req.valid('param');
    const { workspace } = await workspaceAccess(c.env.DB, c.get('session').user.id, workspaceId);
    return c.json(success(await recheckConnection(c.env, workspace.id, connectionId, c.req.raw.signal)), 200);
  });

  app.openapi(routes.remove, async (c) => {
    const { workspaceId, connectionId } = c.req.valid('param');
    const access = await workspaceAccess(c.env.DB, c.get('session').user.id, workspaceId);
    requireManager(access, 'remove vendor accounts');
    return c.json(success(await deleteConnection(c.env.DB, access.workspace.id, connectionId)), 200);
  });
}
