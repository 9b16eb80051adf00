import { z } from '@hono/zod-openapi';
import type { Env } from '../../core/config';
import { nowIso } from '../../core/clock';
import { ApiError } from '../../core/errors';
import { queryDatabase } from '../databases';

/** A table a job writes into: a plain SQL name (it is quoted in the SQL, and cannot close the quotes). */
const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

export const JobInto = z
  .strictObject({
    databaseId: z.string().min(1).openapi({ description: 'A database of this workspace (GET /v1/db/databases).', example: 'db_5f1c2a9b7d3e4f6a8b0c1d2e' }),
    table: z
      .string()
      .regex(TABLE_NAME, 'Use 1-64 letters, digits or underscores, starting with a letter or underscore.')
      .refine((name) => !/^sqlite_/i.test(name), "Names starting with sqlite_ are SQLite's own.")
      .openapi({ description: 'Created if missing, with the columns job_id, item_index, input, data (JSON text) and written_at.', example: 'companies' }),
  })
  .openapi('DataJobInto', {
    description:
      "Writes each success as a row of this table: job_id, item_index, input and data (the operation's answer, as JSON text; read a field with data->>'$.name'), written_at. One row per item, whatever happens to the job.",
  });
export type JobInto = z.infer<typeof JobInto>;

/** The columns a job writes, in order; (job_id, item_index) is the key, so an item written twice is one row. */
const COLUMNS = 'job_id, item_index, input, data, written_at';

function createTable(table: string): string {
  return `CREATE TABLE IF NOT EXISTS "${table}" (job_id TEXT NOT NULL, item_index INTEGER NOT NULL, input TEXT NOT NULL, data TEXT, written_at TEXT NOT NULL, PRIMARY KEY (job_id, item_index))`;
}

/**
 * At submission, before anything is queued: the database is the workspace's (404 otherwise, as its own
 * routes answer), and the table exists, made now if missing, with the columns a job writes (400 naming
 * `into.table` when a table of that name has other columns).
 */
export async function prepareInto(env: Env, workspaceId: string, into: JobInto): Promise<void> {
  try {
    await queryDatabase(env, workspaceId, into.databaseId, { sql: `${createTable(into.table)}; SELECT ${COLUMNS} FROM "${into.table}" LIMIT 0`, params: [] });
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== 'VALIDATION_ERROR') throw error;
    throw ApiError.validation(
      [{ field: 'into.table', location: 'body', message: `Table ${into.table} cannot take a job's rows (${COLUMNS}): ${error.details?.[0]?.message ?? error.message}` }],
      `Table ${into.table} of database ${into.databaseId} cannot take a job's rows; name a new table (it is created) or one with the columns ${COLUMNS}. Nothing was queued.`,
    );
  }
}

/** One success as it is written: its index, and its input and answer as JSON text. */
export interface IntoRow {
  idx: number;
  input: string;
  data: unknown;
}

/** Bytes of rows sent in one request to the database (each request is one transaction). */
const REQUEST_BYTES = 1024 * 1024;

/**
 * Writes a slice's successes into the job's table, before the slice records them: a crash between the two
 * runs the slice again, its items are answered again by the idempotency store, and `INSERT OR IGNORE` on
 * the (job_id, item_index) key keeps one row each. The rows travel as one JSON parameter (the database
 * takes at most 100 parameters a request). The table is made again if it was dropped meanwhile.
 */
export async function writeInto(env: Env, job: { id: string; workspaceId: string; intoDatabaseId: string; intoTable: string }, rows: IntoRow[]): Promise<void> {
  const sql = `${createTable(job.intoTable)}; INSERT OR IGNORE INTO "${job.intoTable}" (${COLUMNS}) SELECT ?1, json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), ?2 FROM json_each(?3)`;
  let chunk: string[] = [];
  let bytes = 0;
  const flush = async () => {
    if (chunk.length === 0) return;
    await queryDatabase(env, job.workspaceId, job.intoDatabaseId, { sql, params: [job.id, nowIso(), `[${chunk.join(',')}]`] });
    chunk = [];
    bytes = 0;
  };
  for (const row of rows) {
    const text = JSON.stringify([row.idx, row.input, JSON.stringify(row.data ?? null)]);
    if (bytes + text.length > REQUEST_BYTES) await flush();
    chunk.push(text);
    bytes += text.length;
  }
  await flush();
}
