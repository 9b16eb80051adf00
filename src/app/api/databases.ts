import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { errorResponses, jsonContent, successEnvelope } from '../../core/schemas';
import { CreateDatabase, createDatabase, Database, DatabaseQuery, DatabaseQueryResult, deleteDatabase, listDatabases, queryDatabase } from '../../services/databases';
import { success } from '../../core/envelope';
import { countAttempt, type ThrottleRule } from '../../core/throttle';
import type { DashboardEnv } from '../context';
import { requireManager, workspaceAccess } from '../members';
import { jsonBody, workspaceIdParam } from './schemas';

const databaseId = z.string().regex(/^db_[0-9a-f]{24}$/, 'Choose a database.');

/**
 * The query box is for a person typing: sixty runs a minute is more than anyone types, and a loop in a browser's
 * console beyond that is a program, which /v1/db serves through the workspace's window with a key. A run is one
 * request, whatever statements its SQL holds (each bounded as on /v1/db).
 */
export const QUERIES_PER_PERSON: ThrottleRule = { limit: 60, windowMs: 60_000, what: 'queries from the query box (60 a minute; a program uses /v1/db with a key)' };

const DashboardQuery = z.strictObject({ databaseId, ...DatabaseQuery.shape }).openapi('DashboardDatabaseQuery');

const routes = {
  list: createRoute({
    method: 'get',
    path: '/api/workspaces/{workspaceId}/databases',
    tags: ['Databases'],
    summary: "The workspace's databases",
    operationId: 'listWorkspaceDatabases',
    request: { params: workspaceIdParam },
    responses: { 200: jsonContent(successEnvelope(z.object({ databases: z.array(Database) })), 'Oldest first.'), ...errorResponses(400, 401, 404) },
  }),
  create: createRoute({
    method: 'post',
    path: '/api/workspaces/{workspaceId}/databases',
    tags: ['Databases'],
    summary: "Create a database (counts against the plan's cap)",
    operationId: 'createWorkspaceDatabase',
    request: { params: workspaceIdParam, body: jsonBody(CreateDatabase) },
    responses: { 201: jsonContent(successEnvelope(Database), 'The new, empty database.'), ...errorResponses(400, 401, 402, 404, 409) },
  }),
  query: createRoute({
    method: 'post',
    path: '/api/workspaces/{workspaceId}/databases/query',
    tags: ['Databases'],
    summary: 'Run SQL in one of the workspace\'s databases (the query box)',
    operationId: 'queryWorkspaceDatabase',
    request: { params: workspaceIdParam, body: jsonBody(DashboardQuery) },
    responses: { 200: jsonContent(successEnvelope(DatabaseQueryResult), 'Rows and what the statement did.'), ...errorResponses(400, 401, 404, 429) },
  }),
  remove: createRoute({
    method: 'delete',
    path: '/api/workspaces/{workspaceId}/databases/{databaseId}',
    tags: ['Databases'],
    summary: 'Delete a database and everything in it (owners and admins)',
    operationId: 'deleteWorkspaceDatabase',
    request: { params: workspaceIdParam.extend({ databaseId: databaseId.openapi({ param: { name: 'databaseId', in: 'path' } }) }) },
    responses: { 200: jsonContent(successEnvelope(z.object({ id: z.string(), deleted: z.literal(true) })), 'Deleted.'), ...errorResponses(400, 401, 403, 404) },
  }),
};

/**
 * The databases page's API: the same functions as /v1/db, for a signed-in member of the workspace. A
 * person's own queries here are not counted in the workspace's API window (that window meters programs), but in
 * a count of their own (`QUERIES_PER_PERSON`).
 */
export function registerDatabases(app: OpenAPIHono<DashboardEnv>) {
  app.openapi(routes.list, async (c) => {
    const { workspace } = await workspaceAccess(c.env.DB, c.get('session').user.id, c.req.valid('param').workspaceId);
    return c.json(success({ databases: await listDatabases(c.env.DB, workspace.id) }), 200);
  });

  app.openapi(routes.create, async (c) => {
    const { workspace, organization } = await workspaceAccess(c.env.DB, c.get('session').user.id, c.req.valid('param').workspaceId);
    return c.json(success(await createDatabase(c.env, { organizationId: organization.id, workspaceId: workspace.id }, c.req.valid('json').name)), 201);
  });

  app.openapi(routes.query, async (c) => {
    const userId = c.get('session').user.id;
    const { workspace } = await workspaceAccess(c.env.DB, userId, c.req.valid('param').workspaceId);
    await countAttempt(c.env.DB, `db-query:${userId}`, QUERIES_PER_PERSON);
    const { databaseId: id, ...query } = c.req.valid('json');
    return c.json(success(await queryDatabase(c.env, workspace.id, id, query)), 200);
  });

  app.openapi(routes.remove, async (c) => {
    const { workspaceId, databaseId: id } = c.req.valid('param');
    const access = await workspaceAccess(c.env.DB, c.get('session').user.id, workspaceId);
    requireManager(access, 'delete databases');
    await deleteDatabase(c.env, access.workspace.id, id);
    return c.json(success({ id, deleted: true as const }), 200);
  });
}
