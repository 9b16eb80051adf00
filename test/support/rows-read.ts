import { env } from 'cloudflare:workers';
import { vi } from 'vitest';

/**
 * D1 that notes the rows each statement read (D1's `rows_read`), for reads whose cost must not grow with rows
 * that pile up. Each statement is answered through `all()` (or `batch`), whose answer carries the figure.
 */
function recordingDb(reads: number[]): D1Database {
  const wrap = (statement: D1PreparedStatement): D1PreparedStatement =>
    Object.assign(Object.create(statement) as D1PreparedStatement, {
      inner: statement,
      bind: (...values: unknown[]) => wrap(statement.bind(...values)),
      all: async () => {
        const answer = await statement.all();
        reads.push(answer.meta.rows_read);
        return answer;
      },
      run: async () => {
        const answer = await statement.run();
        reads.push(answer.meta.rows_read);
        return answer;
      },
      first: async (column?: string) => {
        const answer = await statement.all<Record<string, unknown>>();
        reads.push(answer.meta.rows_read);
        const row = answer.results[0] ?? null;
        return column ? (row?.[column] ?? null) : row;
      },
    });
  return {
    prepare: (query: string) => wrap(env.DB.prepare(query)),
    batch: async (statements: D1PreparedStatement[]) => {
      const answers = await env.DB.batch(statements.map((statement) => (statement as unknown as { inner: D1PreparedStatement }).inner));
      for (const answer of answers) reads.push(answer.meta.rows_read);
      return answers;
    },
  } as unknown as D1Database;
}

/** The rows D1 read for `read`'s statements, with what `read` answered. */
export async function rowsReadBy<T>(read: (db: D1Database) => Promise<T>): Promise<{ answer: T; rows: number }> {
  const reads: number[] = [];
  const answer = await read(recordingDb(reads));
  return { answer, rows: reads.reduce((sum, n) => sum + n, 0) };
}

/** The rows a Durable Object's statements read (each cursor's `rowsRead`) while `run` runs on its `sql`. */
export function objectRowsReadWhile(sql: SqlStorage, run: () => void): number {
  const exec = sql.exec.bind(sql);
  const read: SqlStorageCursor<Record<string, SqlStorageValue>>[] = [];
  const spy = vi.spyOn(sql, 'exec').mockImplementation((query, ...bindings) => read[read.push(exec(query, ...bindings)) - 1]!);
  try {
    run();
  } finally {
    spy.mockRestore();
  }
  return read.reduce((sum, cursor) => sum + cursor.rowsRead, 0);
}
