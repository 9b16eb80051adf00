import { z } from '@hono/zod-openapi';
import type { QueryAnswer, QueryResult, SqlParam } from '../core/protocols/database';
import { nowIso } from '../core/clock';
import type { Env } from '../core/config';
import { DATABASE_LIMITS, DATABASE_NAME } from '../core/database-limits';
import { ApiError } from '../core/errors';
import { newId } from '../core/ids';
import { assertRoomFor, plansPageUrl, refuseFull, termsOf } from './plan-caps';
import { isLiveWorkspace, workspaceIsLive } from './live-workspaces';

/** A workspace database as the API shows it; `sizeBytes` and `tables` come from the database itself. */
export const Database = z
  .object({
    id: z.string().openapi({ example: 'db_5f1c2a9b7d3e4f6a8b0c1d2e' }),
    workspaceId: z.string(),
    name: z.string().openapi({ example: 'leads' }),
    createdAt: z.string(),
    sizeBytes: z.number().int().optional().openapi({ description: 'Size of its SQLite file (GET of one database only).' }),
    tables: z.array(z.string()).optional().openapi({ description: 'Its tables (GET of one database only).' }),
  })
  .openapi('Database');
export type Database = z.infer<typeof Database>;

export const CreateDatabase = z.strictObject({
  name: z
    .string()
    .regex(DATABASE_NAME, 'Use 1-64 letters, digits, dots, dashes or underscores, starting with a letter or digit.')
    .openapi({ description: 'Unique in the workspace.', example: 'leads' }),
}).openapi('CreateDatabase');

export const DatabaseQuery = z
  .strictObject({
    sql: z
      .string()
      .min(1, 'Required.')
      .max(DATABASE_LIMITS.sqlCharacters, `At most ${DATABASE_LIMITS.sqlCharacters.toLocaleString('en-US')} characters.`)
      .openapi({
        description:
          'SQLite SQL. Several statements separated by ";" run in order in one transaction (only the last may take parameters, and only its rows are answered); BEGIN/COMMIT are refused (each request is its own transaction).',
        example: 'SELECT name, domain FROM companies WHERE employees > ? ORDER BY name LIMIT 50',
      }),
    params: z
      .array(z.union([z.string(), z.number(), z.boolean()]).nullable())
      .max(DATABASE_LIMITS.params, `At most ${DATABASE_LIMITS.params} parameters.`)
      .default([])
      .openapi({ description: 'Values of the ? placeholders, in order (true and false are stored as 1 and 0).', example: [100] }),
  })
  .openapi('DatabaseQuery');
export type DatabaseQuery = z.infer<typeof DatabaseQuery>;

export const DatabaseQueryResult = z
  .object({
    columns: z.array(z.string()),
    rows: z
      .array(z.array(z.union([z.string(), z.number(), z.object({ base64: z.string() })]).nullable()))
      .openapi({ description: 'Each row as an array in the order of `columns`; a blob is {base64}.' }),
    rowsRead: z.number().int(),
    rowsWritten: z.number().int(),
    durationMs: z.number().openapi({ description: 'Milliseconds the request took in the database, measured by the API across its call to it.' }),
    sizeBytes: z.number().int().openapi({ description: 'Size of the database after the statement.' }),
  })
  .openapi('DatabaseQueryResult', {
    example: { columns: ['name', 'domain'], rows: [['Acme', 'acme.example']], rowsRead: 1, rowsWritten: 0, durationMs: 1, sizeBytes: 12288 },
  });

/** Whose database it is: the workspace asking, and the organization whose plan caps how many there are. */
export interface DatabaseOwnerRef {
  organizationId: string;
  workspaceId: string;
}

const COLUMNS = 'id, workspace_id AS workspaceId, name, created_at AS createdAt';

function objectOf(env: Env, databaseId: string) {
  return env.WORKSPACE_DATABASE.get(env.WORKSPACE_DATABASE.idFromName(databaseId));
}

export async function listDatabases(db: D1Database, workspaceId: string): Promise<Database[]> {
  const { results } = await db.prepare(`SELECT ${COLUMNS} FROM workspace_databases WHERE workspace_id = ? ORDER BY created_at, id`).bind(workspaceId).all<Database>();
  return results;
}

/** One database of the workspace, with its size and tables; another workspace's reads as missing. */
export async function getDatabase(env: Env, workspaceId: string, id: string): Promise<Database> {
  const record = await findDatabase(env.DB, workspaceId, id);
  const described = await objectOf(env, id).describe(workspaceId);
  return { ...record, ...(described ?? { sizeBytes: 0, tables: [] }) };
}

async function findDatabase(db: D1Database, workspaceId: string, id: string): Promise<Database> {
  const record = await db.prepare(`SELECT ${COLUMNS} FROM workspace_databases WHERE id = ? AND workspace_id = ?`).bind(id, workspaceId).first<Database>();
  if (!record) throw notFound(id);
  return record;
}

async function countDatabases(db: D1Database, organizationId: string): Promise<number> {
  return (await db.prepare('SELECT COUNT(*) AS n FROM workspace_databases WHERE organization_id = ?').bind(organizationId).first<{ n: number }>())?.n ?? 0;
}

/**
 * A database, if the organization's plan has room for one more (402 otherwise; the count and the insert
 * are one statement, so two created at once cannot both take the last place). A name already used in the
 * workspace is 409.
 */
export async function createDatabase(env: Env, owner: DatabaseOwnerRef, name: string): Promise<Database> {
  const terms = await termsOf(env.DB, owner.organizationId);
  const plansUrl = plansPageUrl(env, owner.workspaceId);
  assertRoomFor(terms, 'databases', await countDatabases(env.DB, owner.organizationId), 'PLAN_LIMIT_REACHED', plansUrl);
  const database: Database = { id: newId('db'), workspaceId: owner.workspaceId, name, createdAt: nowIso() };
  let inserted: D1Result;
  try {
    inserted = await env.DB.prepare(
      `INSERT INTO workspace_databases (id, organization_id, workspace_id, name, created_at)
       SELECT ?1, ?2, ?3, ?4, ?5 WHERE (SELECT COUNT(*) FROM workspace_databases WHERE organization_id = ?2) < ?6 AND ${workspaceIsLive('?3')}`,
    )
      .bind(database.id, owner.organizationId, owner.workspaceId, name, database.createdAt, terms.caps!.databases)
      .run();
  } catch (error) {
    if (/UNIQUE constraint failed/.test(String(error))) throw ApiError.conflict(`This workspace already has a database named '${name}'.`);
    throw error;
  }
  if (inserted.meta.changes !== 1 && !(await isLiveWorkspace(env.DB, owner.workspaceId))) throw ApiError.notFound(`No workspace ${owner.workspaceId}.`);
  if (inserted.meta.changes !== 1) refuseFull(terms, 'databases', await countDatabases(env.DB, owner.organizationId), 'PLAN_LIMIT_REACHED', plansUrl);
  try {
    await objectOf(env, database.id).open({ databaseId: database.id, workspaceId: owner.workspaceId });
  } catch (error) {
    await env.DB.prepare('DELETE FROM workspace_databases WHERE id = ?').bind(database.id).run();
    throw error;
  }
  // Deleted between the row and the object's opening (its id is listed from the row on): that delete found the
  // object without an owner, so removed only the row. The object goes too, or it would answer queries while no
  // list, count or delete could reach it.
  if (!(await env.DB.prepare('SELECT 1 FROM workspace_databases WHERE id = ?').bind(database.id).first())) {
    await objectOf(env, database.id).destroy(owner.workspaceId);
    throw ApiError.conflict(`The database '${name}' was deleted while it was being created; create it again if it is still wanted.`);
  }
  return database;
}

/** Deletes the data first, then the row: a failure between leaves a listed, empty database to delete again. */
export async function deleteDatabase(env: Env, workspaceId: string, id: string): Promise<void> {
  await findDatabase(env.DB, workspaceId, id);
  await objectOf(env, id).destroy(workspaceId);
  await env.DB.prepare('DELETE FROM workspace_databases WHERE id = ? AND workspace_id = ?').bind(id, workspaceId).run();
}

/**
 * Runs a request's SQL in the database. The object itself knows its owner, so a statement costs no D1
 * read: another workspace's database, or one deleted, answers as missing.
 */
export async function queryDatabase(env: Env, workspaceId: string, id: string, query: DatabaseQuery): Promise<QueryResult> {
  if (!/^db_[0-9a-f]{24}$/.test(id)) throw notFound(id);
  const started = Date.now();
  const answer = await askBounded(() => objectOf(env, id).query(workspaceId, query.sql, query.params as SqlParam[]));
  switch (answer.kind) {
    case 'ok':
      // Measured here, across the call (StatementsRun says why the object cannot): the statements and one hop.
      return { ...answer.result, durationMs: Date.now() - started };
    case 'not_found':
      throw notFound(id);
    case 'refused':
      throw ApiError.validation([{ field: 'sql', location: 'body', message: answer.message }], `SQLite refused the statement: ${answer.message}`);
    case 'limit':
      throw ApiError.validation([{ field: 'sql', location: 'body', message: answer.message }], answer.message);
  }
}

/**
 * The object's answer, or the statement bound's refusal when the object was stopped past it: a statement
 * that computes long before its first row is stopped by the platform, not by the object (Cloudflare's CPU
 * limit resets the object; locally the database process is restarted), and the call then fails. Only a
 * call that failed after the bound is taken for that; a quicker failure is a fault, answered as one.
 */
async function askBounded(ask: () => Promise<QueryAnswer>): Promise<QueryAnswer> {
  const started = Date.now();
  try {
    return await ask();
  } catch (error) {
    if (Date.now() - started < DATABASE_LIMITS.statementMs) throw error;
    const seconds = DATABASE_LIMITS.statementMs / 1000;
    return { kind: 'limit', limit: 'statementMs', message: `A statement ran longer than ${seconds} s and the database was stopped; nothing of this request was kept. Add an index or a LIMIT, or avoid cross joins of large tables.` };
  }
}

function notFound(id: string): ApiError {
  return ApiError.notFound(`No database ${id} in this workspace.`);
}
