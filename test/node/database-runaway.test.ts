/**
 * A workspace database statement that computes for minutes before its first row, on the real local stack
 * (issue 32 item 1): it passes the static screen (a cross join, not a recursive expression without LIMIT),
 * is stopped at its bound with 400 VALIDATION_ERROR, and meanwhile the rest of the stack keeps answering,
 * because the databases run in a workerd process of their own (scripts/stack.ts). Timing here is a
 * generous sanity bound; `npm run bench` measures it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_LIMITS } from '../../src/core/database-limits';
import { isolatedEnv, type Started, startStack, stopAll, tempDir } from './support/processes';

let stack: Started;

beforeAll(async () => {
  stack = await startStack(await isolatedEnv(tempDir('database-runaway')));
});

afterAll(() => stopAll());

async function api(method: string, path: string, body?: unknown) {
  const response = await fetch(`${stack.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${stack.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as any };
}

/** 10^12 rows to count: minutes of SQLite work that yields no row until the end. */
const RUNAWAY = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 1000000) SELECT count(*) FROM c a, c b';

describe('a statement that runs past its bound on the local stack', () => {
  it('is stopped with 400 VALIDATION_ERROR near its bound while /health keeps answering, and the database works after it', async () => {
    const created = await api('POST', '/v1/db/databases', { name: 'runaway' });
    expect(created.status).toBe(201);
    const query = (sql: string) => api('POST', `/v1/db/databases/${created.body.data.id}/query`, { sql });
    expect((await query('CREATE TABLE kept (x INTEGER); INSERT INTO kept VALUES (1)')).status).toBe(200);

    const started = Date.now();
    let done = false;
    const runaway = query(`INSERT INTO kept VALUES (2); ${RUNAWAY}`).finally(() => (done = true));
    const health: number[] = [];
    while (!done) {
      const sent = Date.now();
      expect((await fetch(`${stack.apiUrl}/health`)).status).toBe(200);
      health.push(Date.now() - sent);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const refused = await runaway;
    const took = Date.now() - started;

    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('VALIDATION_ERROR');
    expect(refused.body.error.message).toContain(`longer than ${DATABASE_LIMITS.statementMs / 1000} s`);
    expect(took).toBeGreaterThanOrEqual(DATABASE_LIMITS.statementMs);
    expect(took).toBeLessThan(DATABASE_LIMITS.statementMs + 5_000);
    expect(health.length).toBeGreaterThan(10);
    expect(Math.max(...health)).toBeLessThan(1_000);
    expect(stack.output()).toContain('restarting the databases\' process');

    // Nothing of the stopped request was kept, and the database answers again once its process is back
    // (a few seconds: until then a database call is a 500, as any call to a restarting object would be).
    let after = await query('SELECT x FROM kept ORDER BY x');
    for (const waitUntil = Date.now() + 20_000; after.status !== 200 && Date.now() < waitUntil; after = await query('SELECT x FROM kept ORDER BY x')) {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(after.body.data.rows).toEqual([[1]]);
  }, 60_000);
});
