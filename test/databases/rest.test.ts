import { afterEach, describe, expect, it } from 'vitest';
import { clock } from '../../src/core/clock';
import { DATABASE_LIMITS } from '../../src/core/database-limits';
import { companyByDomain, json, ops, provision } from '../support/api';
import { createDb, db, query } from './requests';
import { startAMinute } from '../support/held-minute';

const realNow = clock.now;
const limits = { ...DATABASE_LIMITS };
afterEach(() => {
  clock.now = realNow;
  Object.assign(DATABASE_LIMITS, limits);
});

describe('workspace databases (/v1/db)', () => {
  it('creates a database, writes and reads parameterized rows, and lists it', async () => {
    const { key, workspaceId } = await provision({ plan: 'payg' });
    const id = await createDb(key, 'leads');
    expect(id).toMatch(/^db_[0-9a-f]{24}$/);

    const created = await query(key, id, 'CREATE TABLE companies (name TEXT NOT NULL, domain TEXT UNIQUE, employees INTEGER, data BLOB)');
    expect(created.status).toBe(200);
    const inserted = await query(key, id, "INSERT INTO companies (name, domain, employees, data) VALUES (?, ?, ?, x'00ff'), ('Globex', 'globex.example', 12, NULL)", ['Acme', 'acme.example', 250]);
    expect(inserted.body.data).toMatchObject({ columns: [], rows: [], rowsWritten: expect.any(Number) });
    expect(inserted.body.data.rowsWritten).toBeGreaterThanOrEqual(2);
    expect(inserted.headers.get('RateLimit-Limit')).toBe('60');

    const selected = await query(key, id, 'SELECT name, employees, data FROM companies WHERE employees > ? ORDER BY name', [100]);
    expect(selected.status).toBe(200);
    expect(selected.body.data).toMatchObject({ columns: ['name', 'employees', 'data'], rows: [['Acme', 250, { base64: 'AP8=' }]], rowsRead: expect.any(Number) });
    expect(selected.body.data.durationMs).toBeGreaterThanOrEqual(0);
    // The duration does not come from the object's clock, which deployed stands still while the statements run: a
    // clock held still here changes nothing of it.
    const still = realNow();
    clock.now = () => still;
    const counted = await query(key, id, 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 300000) SELECT count(*) FROM c');
    clock.now = realNow;
    expect(counted.body.data.rows).toEqual([[300000]]);
    expect(counted.body.data.durationMs).toBeGreaterThan(0);

    const listed = await json(await db(key, 'GET', '/databases'));
    expect(listed.data.databases).toEqual([expect.objectContaining({ id, name: 'leads', workspaceId })]);
    const one = await json(await db(key, 'GET', `/databases/${id}`));
    expect(one.data).toMatchObject({ id, name: 'leads', tables: ['companies'] });
    expect(one.data.sizeBytes).toBeGreaterThan(0);
  });

  it('answers a statement SQLite refuses with 400 VALIDATION_ERROR carrying its message, and rolls the whole request back', async () => {
    const { key } = await provision({ plan: 'payg' });
    const id = await createDb(key, 'strict');
    await query(key, id, 'CREATE TABLE t (v TEXT UNIQUE)');
    const missing = await query(key, id, 'SELECT * FROM nowhere');
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'sql', location: 'body', message: expect.stringContaining('no such table: nowhere') }] });
    // Two statements, the second refused: the first is rolled back with it.
    const script = await query(key, id, "INSERT INTO t VALUES ('a'); INSERT INTO t VALUES ('a')");
    expect(script.status).toBe(400);
    expect(script.body.error.details[0].message).toContain('UNIQUE constraint failed');
    expect((await query(key, id, 'SELECT COUNT(*) AS n FROM t')).body.data.rows).toEqual([[0]]);
    // A script runs in order, answering its last statement.
    expect((await query(key, id, "INSERT INTO t VALUES ('b'); SELECT v FROM t WHERE v = ?", ['b'])).body.data.rows).toEqual([['b']]);
    expect((await query(key, id, 'BEGIN TRANSACTION')).status).toBe(400);
    expect((await query(key, id, 'SELECT ?', [])).status).toBe(400);
  });

  it('keeps the internal tables out of reach', async () => {
    const { key } = await provision({ plan: 'payg' });
    const id = await createDb(key, 'private');
    const owner = await query(key, id, 'SELECT * FROM _cf_KV');
    expect(owner.status).toBe(400);
    expect(owner.body.error.code).toBe('VALIDATION_ERROR');
    expect((await query(key, id, "UPDATE _cf_KV SET value = NULL")).status).toBe(400);
    expect((await query(key, id, "ATTACH DATABASE 'other' AS other")).status).toBe(400);
    expect((await json(await db(key, 'GET', `/databases/${id}`))).data.tables).toEqual([]);
    // Still the owner's after the attempts, and tables whose names only look like the internal ones are listed.
    expect((await query(key, id, 'CREATE TABLE acfg (x); CREATE TABLE xcf_events (x); CREATE TABLE sqlite1 (x); SELECT 1 AS one')).body.data.rows).toEqual([[1]]);
    expect((await json(await db(key, 'GET', `/databases/${id}`))).data.tables).toEqual(['acfg', 'sqlite1', 'xcf_events']);
  });

  it("reads another workspace's database as 404 NOT_FOUND, for every route", async () => {
    const owner = await provision({ plan: 'payg' });
    const stranger = await provision({ plan: 'payg' });
    const id = await createDb(owner.key, 'mine');
    await query(owner.key, id, 'CREATE TABLE secrets (v TEXT)');
    for (const [method, path, body] of [
      ['GET', `/databases/${id}`],
      ['POST', `/databases/${id}/query`, { sql: 'SELECT * FROM secrets' }],
      ['DELETE', `/databases/${id}`],
    ] as const) {
      const response = await db(stranger.key, method, path, body);
      expect(response.status, `${method} ${path}`).toBe(404);
      expect((await json(response)).error.code).toBe('NOT_FOUND');
    }
    expect((await json(await db(stranger.key, 'GET', '/databases'))).data.databases).toEqual([]);
    expect((await query(owner.key, id, 'SELECT COUNT(*) FROM secrets')).status).toBe(200);
  });

  it('deletes a database with everything in it, and frees its place', async () => {
    const { key } = await provision({ plan: 'payg' });
    const first = await createDb(key, 'one');
    await createDb(key, 'two');
    await query(key, first, 'CREATE TABLE t (v)');
    expect((await db(key, 'POST', '/databases', { name: 'three' })).status).toBe(402);
    expect((await db(key, 'DELETE', `/databases/${first}`)).status).toBe(200);
    expect((await query(key, first, 'SELECT * FROM t')).status).toBe(404);
    expect((await db(key, 'GET', `/databases/${first}`)).status).toBe(404);
    expect((await db(key, 'POST', '/databases', { name: 'three' })).status).toBe(201);
  });

  it("refuses a database past the plan's cap with 402 PLAN_LIMIT_REACHED naming used/limit, and without a plan 402 SUBSCRIPTION_REQUIRED", async () => {
    const account = await provision({ plan: 'payg' });
    expect((await ops('PUT', `/organizations/${account.organizationId}/plan`, { plan: 'payg', caps: { databases: 3 } })).status).toBe(200);
    // Concurrent creations cannot pass the cap together.
    const answers = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((name) => db(account.key, 'POST', '/databases', { name })));
    expect(answers.map((response) => response.status).sort()).toEqual([201, 201, 201, 402, 402]);
    const refused = await json(answers.find((response) => response.status === 402)!);
    expect(refused.error.code).toBe('PLAN_LIMIT_REACHED');
    expect(refused.error.message).toContain('3 of 3');
    expect(refused.error.message).toContain('workspace databases');

    const none = await provision({ plan: null });
    const response = await db(none.key, 'POST', '/databases', { name: 'x' });
    expect(response.status).toBe(402);
    expect((await json(response)).error.code).toBe('SUBSCRIPTION_REQUIRED');
  });

  it('refuses a taken name with 409 and a bad one with 400', async () => {
    const { key } = await provision({ plan: 'payg' });
    await createDb(key, 'same');
    expect((await db(key, 'POST', '/databases', { name: 'same' })).status).toBe(409);
    const bad = await json(await db(key, 'POST', '/databases', { name: 'no spaces' }));
    expect(bad.error.details).toEqual([expect.objectContaining({ field: 'name', location: 'body' })]);
  });

  it('refuses requests past the size bounds: SQL text, parameters, rows and bytes answered', async () => {
    const { key } = await provision({ plan: 'payg' });
    const id = await createDb(key, 'bounds');
    const long = await json(await db(key, 'POST', `/databases/${id}/query`, { sql: `SELECT '${'x'.repeat(DATABASE_LIMITS.sqlCharacters)}'` }));
    expect(long.error.details).toEqual([expect.objectContaining({ field: 'sql', message: 'At most 100,000 characters.' })]);
    const many = await json(await db(key, 'POST', `/databases/${id}/query`, { sql: 'SELECT 1', params: Array(101).fill(1) }));
    expect(many.error.details).toEqual([expect.objectContaining({ field: 'params', message: 'At most 100 parameters.' })]);
    const objects = await json(await db(key, 'POST', `/databases/${id}/query`, { sql: 'SELECT ?', params: [{ a: 1 }] }));
    expect(objects.error.details[0].field).toBe('params[0]');

    const rows = await query(key, id, 'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 10001) SELECT i FROM n');
    expect(rows.status).toBe(400);
    expect(rows.body.error.message).toContain('more than 10,000 rows');
    expect((await query(key, id, 'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 10000) SELECT i FROM n')).body.data.rows).toHaveLength(10_000);
    const bytes = await query(key, id, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 5000) SELECT printf('%.1000c', 'x') FROM n");
    expect(bytes.status).toBe(400);
    expect(bytes.body.error.message).toContain('more than 4 MB of rows');
  });

  it('rolls back a statement that would grow the database past its size bound', async () => {
    const { key } = await provision({ plan: 'payg' });
    const id = await createDb(key, 'growing');
    await query(key, id, 'CREATE TABLE blobs (b BLOB)');
    DATABASE_LIMITS.databaseBytes = 256 * 1024;
    expect((await query(key, id, 'INSERT INTO blobs VALUES (zeroblob(10000))')).status).toBe(200);
    const refused = await query(key, id, 'INSERT INTO blobs VALUES (zeroblob(400000))');
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('past its 256 KB limit');
    expect((await query(key, id, 'SELECT COUNT(*) FROM blobs')).body.data.rows).toEqual([[1]]);
  });

  it('stops and rolls back a request that runs past the time bound', async () => {
    const { key } = await provision({ plan: 'payg' });
    const id = await createDb(key, 'slow');
    await query(key, id, 'CREATE TABLE t (v)');
    // Every reading of the clock is a second later: the time passes between rows.
    let now = realNow();
    clock.now = () => (now += 1_000);
    const slow = await query(key, id, 'INSERT INTO t VALUES (1); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 20) SELECT i FROM n');
    clock.now = realNow;
    expect(slow.status).toBe(400);
    expect(slow.body.error.message).toContain('ran longer than 5 s');
    expect((await query(key, id, 'SELECT COUNT(*) FROM t')).body.data.rows).toEqual([[0]]);
  });

  it("counts database calls against the workspace's window: 429 RATE_LIMITED past the plan's ceiling", async () => {
    startAMinute();
    const account = await provision({ plan: 'payg' });
    expect((await ops('PUT', `/organizations/${account.organizationId}/plan`, { plan: 'payg', rpm: 3 })).status).toBe(200);
    const statuses = [];
    for (let index = 0; index < 4; index++) statuses.push((await db(account.key, 'GET', '/databases')).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const limited = await db(account.key, 'GET', '/databases');
    expect(limited.headers.get('Retry-After')).toMatch(/^\d+$/);
    // The same window as metered calls.
    expect((await companyByDomain(account.key, 'stripe.com')).status).toBe(429);
  });
});
