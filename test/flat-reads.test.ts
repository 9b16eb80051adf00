import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { listKeys } from '../src/services/accounts';
import { unfinishedItems } from '../src/services/jobs/store';
import { provision } from './support/api';

/**
 * D1 that notes the rows each statement read (D1's `rows_read`), for reads whose cost must not grow with rows
 * that pile up. Each statement is answered through `all()`, whose answer carries the figure.
 */
function recordingDb(reads: number[]): D1Database {
  const wrap = (statement: D1PreparedStatement): D1PreparedStatement =>
    ({
      bind: (...values: unknown[]) => wrap(statement.bind(...values)),
      all: async () => {
        const answer = await statement.all();
        reads.push(answer.meta.rows_read);
        return answer;
      },
      first: async (column?: string) => {
        const answer = await statement.all<Record<string, unknown>>();
        reads.push(answer.meta.rows_read);
        const row = answer.results[0] ?? null;
        return column ? (row?.[column] ?? null) : row;
      },
    }) as unknown as D1PreparedStatement;
  return { prepare: (query: string) => wrap(env.DB.prepare(query)) } as unknown as D1Database;
}

/** The rows `read` took, answered with what it answered. */
async function rowsReadBy<T>(read: (db: D1Database) => Promise<T>): Promise<{ answer: T; rows: number }> {
  const reads: number[] = [];
  const answer = await read(recordingDb(reads));
  return { answer, rows: reads.reduce((sum, n) => sum + n, 0) };
}

describe('reads that stay flat as rows pile up', () => {
  it("lists a workspace's keys of one scope reading those keys, not the thousands of job keys beside them", async () => {
    const account = await provision();
    const before = await rowsReadBy((db) => listKeys(db, account.workspaceId, 'workspace'));
    // Every data job mints a key for its run and keeps it revoked: 3,000 jobs' worth.
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 2999)
       INSERT INTO api_keys (id, workspace_id, key_hash, key_ciphertext, key_hint, scope, name, created_at, revoked_at)
       SELECT 'key_job_' || ?1 || '_' || i, ?1, 'hash_' || ?1 || '_' || i, 'x', 'abcd', 'data_job', 'job', datetime('now'), datetime('now') FROM n`,
    )
      .bind(account.workspaceId)
      .run();
    const after = await rowsReadBy((db) => listKeys(db, account.workspaceId, 'workspace'));
    expect(after.answer.map((key) => key.id)).toEqual(before.answer.map((key) => key.id));
    expect(after.answer.length).toBeGreaterThan(0);
    // The index's walk may touch a neighbour where it ends; by the workspace alone it read all 3,000 more.
    expect(after.rows).toBeLessThanOrEqual(before.rows + 2);
  });

  it("sums a workspace's unfinished items reading its unfinished jobs, not every job it ever ran", async () => {
    const account = await provision();
    const addJobs = (count: number, status: string, items: number) =>
      env.DB.prepare(
        `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?3 - 1)
         INSERT INTO data_jobs (id, organization_id, workspace_id, operation, status, items, succeeded, quoted_units, created_at)
         SELECT 'job_' || ?4 || '_' || ?2 || '_' || i, ?1, ?2, 'web/scrape', ?4, ?5, 1, 0, datetime('now') FROM n`,
      )
        .bind(account.organizationId, account.workspaceId, count, status, items)
        .run();
    await addJobs(2, 'running', 10);
    const before = await rowsReadBy((db) => unfinishedItems(db, account.workspaceId));
    expect(before.answer).toBe(2 * 9);
    await addJobs(3_000, 'succeeded', 1);
    const after = await rowsReadBy((db) => unfinishedItems(db, account.workspaceId));
    expect(after.answer).toBe(2 * 9);
    expect(after.rows).toBeLessThanOrEqual(before.rows + 2);
  });
});
