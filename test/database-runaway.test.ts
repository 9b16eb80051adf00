/**
 * What a workspace database refuses before it runs (issue 32 items 1 and 10): a recursive common table
 * expression that states no LIMIT within the bound (it might never end, and one that yields no row until
 * the end cannot be stopped from inside the object), and every way to ANALYZE or read sqlite_stat1, which
 * would tell the row count of the object's own `_cf_KV` table. How a statement that passes the screen is
 * still stopped at its bound while it runs is in test/node/start.test.ts (it needs a real stack).
 */
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { DATABASE_LIMITS } from '../src/core/database-limits';
import { call, json, provision } from './support/api';

async function databaseOf(): Promise<{ key: string; id: string }> {
  const { key } = await provision({ plan: 'payg' });
  const created = await call('/v1/db/databases', { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'runaway' }) });
  expect(created.status).toBe(201);
  return { key, id: (await json(created)).data.id };
}

async function query(database: { key: string; id: string }, sql: string, params: unknown[] = []) {
  const started = Date.now();
  const response = await call(`/v1/db/databases/${database.id}/query`, {
    method: 'POST',
    headers: { authorization: `Bearer ${database.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ sql, params }),
  });
  return { status: response.status, body: await json(response), ms: Date.now() - started };
}

const COUNTER = (limit: string) => `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c${limit}) SELECT count(*) FROM c`;

describe('recursive common table expressions', () => {
  it('refuses one without a LIMIT with 400 VALIDATION_ERROR at once, instead of running it forever', async () => {
    const database = await databaseOf();
    const refused = await query(database, COUNTER(''));
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('VALIDATION_ERROR');
    expect(refused.body.error.message).toContain('needs a LIMIT of at most 1,000,000 rows');
    expect(refused.body.error.details).toEqual([{ field: 'sql', location: 'body', message: refused.body.error.message }]);
    expect(refused.ms).toBeLessThan(DATABASE_LIMITS.statementMs);
  });

  it('refuses a LIMIT past the bound (the 50,000,000 rows that took 8 s), a LIMIT that is not a number, and the same shape without the RECURSIVE keyword', async () => {
    const database = await databaseOf();
    for (const sql of [
      COUNTER(' LIMIT 50000000'),
      COUNTER(' LIMIT ?'),
      COUNTER(' LIMIT 10 * 1000000000'),
      'WITH c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c',
      'WITH "c"(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM [c] /* LIMIT 5 */) SELECT count(*) FROM c',
      'CREATE TABLE t (x); INSERT INTO t WITH RECURSIVE c(x) AS (SELECT 1 UNION SELECT x+1 FROM c) SELECT x FROM c',
      // A '...' literal where only a name fits is a name to SQLite.
      "WITH RECURSIVE 'c'(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c",
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM 'c') SELECT count(*) FROM c",
    ]) {
      const refused = await query(database, sql, sql.includes('?') ? [1000] : []);
      expect(refused.status, sql).toBe(400);
      expect(refused.body.error.message, sql).toContain('needs a LIMIT');
    }
    // Nothing of a refused request ran: the table of the last one was not made.
    expect((await query(database, "SELECT count(*) FROM sqlite_master WHERE name = 't'")).body.data.rows).toEqual([[0]]);
  });

  it('runs one with a LIMIT within the bound, and leaves alone what only looks recursive', async () => {
    const database = await databaseOf();
    expect((await query(database, COUNTER(' LIMIT 1000'))).body.data.rows).toEqual([[1000]]);
    expect((await query(database, 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c ORDER BY 1 LIMIT 5 OFFSET 2) SELECT sum(x) FROM c')).body.data.rows).toEqual([[25]]);
    expect((await query(database, 'WITH total AS (SELECT 1 AS total UNION ALL SELECT 2 AS total) SELECT sum(total) FROM total')).body.data.rows).toEqual([[3]]);
    expect((await query(database, "SELECT 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x FROM c)' -- FROM c")).status).toBe(200);
  });
});

describe("the object's internals", () => {
  it('refuses ANALYZE, PRAGMA optimize (which runs it) and any mention of sqlite_stat1, which would count the rows of _cf_KV', async () => {
    const database = await databaseOf();
    expect((await query(database, 'CREATE TABLE analyze_log ("analyze" TEXT); CREATE INDEX by_word ON analyze_log ("analyze")')).status).toBe(200);
    for (const sql of ['ANALYZE', 'analyze main', 'SELECT 1; ANALYZE', 'PRAGMA optimize', 'PRAGMA main.optimize(0x10002)', 'SELECT * FROM sqlite_stat1', 'SELECT * FROM main."sqlite_stat1"', 'DELETE FROM [SQLITE_STAT1]', "SELECT * FROM 'sqlite_stat1'"]) {
      const refused = await query(database, sql);
      expect(refused.status, sql).toBe(400);
      expect(refused.body.error.code, sql).toBe('VALIDATION_ERROR');
    }
    // What is refused is the statement, not the word: a quoted column named "analyze" and a string still work.
    expect((await query(database, `INSERT INTO analyze_log ("analyze") VALUES ('ANALYZE sqlite_stat1') RETURNING "analyze"`)).body.data.rows).toEqual([['ANALYZE sqlite_stat1']]);
  });

  it('keeps sqlite_stat1 unreadable in a database analyzed before the screen existed', async () => {
    const database = await databaseOf();
    const stub = env.WORKSPACE_DATABASE.get(env.WORKSPACE_DATABASE.idFromName(database.id));
    // As the object could be made to do before: the statistics include _cf_KV's row count.
    const statistics = await runInDurableObject(stub, (_object, state) => state.storage.sql.exec('ANALYZE').toArray() && state.storage.sql.exec('SELECT tbl FROM sqlite_stat1').toArray());
    expect(statistics).toContainEqual({ tbl: '_cf_KV' });
    const refused = await query(database, 'SELECT tbl, stat FROM sqlite_stat1');
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('sqlite_stat1 is internal');
  });
});
