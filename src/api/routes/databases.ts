import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { CreateDatabase, createDatabase, Database, DatabaseQuery, DatabaseQueryResult, deleteDatabase, getDatabase, listDatabases, queryDatabase } from '../../services/databases';
import { success } from '../../core/envelope';
import { ApiError } from '../../core/errors';
import { admitFreeCall } from '../../services/pipeline';
import type { AppEnv } from '../../core/context';
import { jsonContent, meteredErrorResponses, successEnvelope } from '../../core/schemas';
import { requireManagingKey } from '../../services/managing-keys';

/** Paths whose handler checks the key in its own gate message (the window's), so the middleware need not. */
export const DATABASE_PATHS = /^\/v1\/db\/databases(\/db_[0-9a-f]{24}(\/query)?)?$/;

const databaseIdParam = z.object({
  databaseId: z
    .string()
    .regex(/^db_[0-9a-f]{24}$/, 'Expected a database id (db_ and 24 hex characters).')
    .openapi({ param: { name: 'databaseId', in: 'path' }, example: 'db_5f1c2a9b7d3e4f6a8b0c1d2e' }),
});

const EXAMPLE_DATABASE = { id: 'db_5f1c2a9b7d3e4f6a8b0c1d2e', workspaceId: 'ws_0a1b2c3d4e5f6a7b8c9d0e1f', name: 'leads', createdAt: '2026-11-23T09:58:01.000Z' };
const EXAMPLE_RESULT = { columns: ['name', 'domain'], rows: [['Acme', 'acme.example']], rowsRead: 1, rowsWritten: 0, durationMs: 1, sizeBytes: 12288 };

const LIMITED = 'Free, and counted against the workspace\'s requests-per-minute window like /v1/data calls.';

const routes = {
  create: createRoute({
    method: 'post',
    path: '/v1/db/databases',
    tags: ['Databases'],
    summary: 'Create a named SQLite database for the workspace',
    description: `Each database is its own SQLite store. The organization's plan caps how many it has (402 PLAN_LIMIT_REACHED). ${LIMITED}`,
    operationId: 'createDatabase',
    request: { body: { content: { 'application/json': { schema: CreateDatabase, example: { name: 'leads' } } }, required: true } },
    responses: { 201: jsonContent(successEnvelope(Database), 'The new, empty database.', { metered: true, example: success(EXAMPLE_DATABASE) }), ...meteredErrorResponses(400, 401, 402, 403, 409, 429) },
  }),
  list: createRoute({
    method: 'get',
    path: '/v1/db/databases',
    tags: ['Databases'],
    summary: "The workspace's databases",
    description: LIMITED,
    operationId: 'listDatabases',
    request: { query: z.strictObject({}) },
    responses: { 200: jsonContent(successEnvelope(z.object({ databases: z.array(Database) })), 'Oldest first.', { metered: true, example: success({ databases: [EXAMPLE_DATABASE] }) }), ...meteredErrorResponses(400, 401, 402, 403, 429) },
  }),
  get: createRoute({
    method: 'get',
    path: '/v1/db/databases/{databaseId}',
    tags: ['Databases'],
    summary: 'One database, with its size and tables',
    description: `Another workspace's database reads as 404. ${LIMITED}`,
    operationId: 'getDatabase',
    request: { params: databaseIdParam },
    responses: { 200: jsonContent(successEnvelope(Database), 'The database.', { metered: true, example: success({ ...EXAMPLE_DATABASE, sizeBytes: 12288, tables: ['companies'] }) }), ...meteredErrorResponses(400, 401, 402, 403, 404, 429) },
  }),
  remove: createRoute({
    method: 'delete',
    path: '/v1/db/databases/{databaseId}',
    tags: ['Databases'],
    summary: 'Delete a database and everything in it',
    description: `Cannot be undone; frees a place under the plan's cap. Needs a key made by an owner or admin of the organization (403 otherwise). ${LIMITED}`,
    operationId: 'deleteDatabase',
    request: { params: databaseIdParam },
    responses: { 200: jsonContent(successEnvelope(z.object({ id: z.string(), deleted: z.literal(true) })), 'Deleted.', { metered: true, example: success({ id: EXAMPLE_DATABASE.id, deleted: true }) }), ...meteredErrorResponses(400, 401, 402, 403, 404, 429) },
  }),
  query: createRoute({
    method: 'post',
    path: '/v1/db/databases/{databaseId}/query',
    tags: ['Databases'],
    summary: 'Run parameterized SQL in a database',
    description:
      `Runs \`sql\` with \`params\` bound to its ? placeholders, in one transaction, and answers the rows of its last statement. A statement SQLite refuses is 400 VALIDATION_ERROR carrying SQLite's message. Bounds (400, rolled back): ${'100,000'} characters of SQL, 100 parameters, 10,000 rows or 4 MB answered, 512 MB per database, 5 s per request (a statement that computes past it is stopped). A recursive WITH needs LIMIT n (n at most 1,000,000) at the end of its definition; ANALYZE and the sqlite_stat tables are refused. ${LIMITED}`,
    operationId: 'queryDatabase',
    request: {
      params: databaseIdParam,
      body: { content: { 'application/json': { schema: DatabaseQuery, example: { sql: 'SELECT name, domain FROM companies WHERE employees > ? ORDER BY name LIMIT 50', params: [100] } } }, required: true },
    },
    responses: { 200: jsonContent(successEnvelope(DatabaseQueryResult), 'Rows and what the statement did.', { metered: true, example: success(EXAMPLE_RESULT) }), ...meteredErrorResponses(400, 401, 402, 403, 404, 429) },
  }),
};

export function registerDatabases(app: OpenAPIHono<AppEnv>) {
  app.openapi(routes.create, (c) =>
    admitted(c, async (principal) => c.json(success(await createDatabase(c.env, principal, c.req.valid('json').name)), 201)),
  );
  app.openapi(routes.list, (c) => admitted(c, async (principal) => c.json(success({ databases: await listDatabases(c.env.DB, principal.workspaceId) }), 200)));
  app.openapi(routes.get, (c) => admitted(c, async (principal) => c.json(success(await getDatabase(c.env, principal.workspaceId, c.req.valid('param').databaseId)), 200)));
  app.openapi(routes.remove, (c) =>
    admitted(c, async (principal) => {
      await requireManagingKey(c.env.DB, principal, 'delete databases');
      const { databaseId } = c.req.valid('param');
      await deleteDatabase(c.env, principal.workspaceId, databaseId);
      return c.json(success({ id: databaseId, deleted: true as const }), 200);
    }),
  );
  app.openapi(routes.query, (c) =>
    admitted(c, async (principal) => c.json(success(await queryDatabase(c.env, principal.workspaceId, c.req.valid('param').databaseId, c.req.valid('json'))), 200)),
  );
}

/** Admits the call through the workspace's window, then answers with its RateLimit-* headers, refusals included. */
async function admitted<R extends Response>(c: Context<AppEnv>, run: (principal: AppEnv['Variables']['principal']) => Promise<R>): Promise<R> {
  const principal = c.get('principal');
  const headers = await admitFreeCall(c.env, principal);
  try {
    const response = await run(principal);
    for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
    return response;
  } catch (error) {
    if (error instanceof ApiError) Object.assign(error.headers, headers);
    throw error;
  }
}
