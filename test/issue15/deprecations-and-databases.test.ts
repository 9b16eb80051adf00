import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { McpGateway } from '../../src/api/mcp-gateway';
import { afterEach, describe, expect, it } from 'vitest';
import { RETIRED_PATHS } from '../../src/api/routes/retired-paths';
import { authenticateMcpBearer } from '../../src/services/auth';
import { clock } from '../../src/core/clock';
import { DATABASE_LIMITS } from '../../src/core/database-limits';
import { DEPRECATIONS } from '../../src/core/deprecations';
import mcpApp from '../../src/mcp/index';
import { bearer, call, companyByDomain, funded, json, ops, provision } from '../support/api';
import { signUp } from '../support/dashboard';
import { toolErrorOf } from '../mcp/tool-error';

const realNow = clock.now;
const limits = { ...DATABASE_LIMITS };
afterEach(() => {
  clock.now = realNow;
  Object.assign(DATABASE_LIMITS, limits);
});

/** Moves the injectable clock to a moment, for the rest of the test. */
function at(moment: number) {
  clock.now = () => moment;
}

const DAY = 86_400_000;
let addresses = 0;

function register(body: unknown, headers: Record<string, string> = {}) {
  addresses += 1;
  return call('/v1/register', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'cf-connecting-ip': `203.0.113.${addresses}`, ...headers },
    body: JSON.stringify(body),
    // As Cloudflare's edge forwards it: only then is the address believed.
    cf: { colo: 'AMS' },
  });
}

const INTENT = { agentName: 'Claude Code', email: 'ada@example.com', organization: 'Analytical Engines', useCase: 'Weekly competitor backlinks.', sources: ['seo', 'web'] };

describe('POST /v1/register (deprecated, removed on 2026-12-31)', () => {
  it('records the intent the day before its sunset, with Deprecation, Sunset and a Link to its successor', async () => {
    at(DEPRECATIONS.register.sunsetAt - DAY);
    const response = await register(INTENT);
    expect(response.status).toBe(201);
    expect(response.headers.get('Deprecation')).toBe('@1782864000');
    expect(response.headers.get('Sunset')).toBe('Thu, 31 Dec 2026 00:00:00 GMT');
    expect(response.headers.get('Link')).toContain(`<${env.MCP_URL}>; rel="successor-version"; title="sluice_onboarding"`);
    const { data } = await json(response);
    expect(data).toMatchObject({ workspaceId: null, next: { mcpUrl: env.MCP_URL, sources: [{ slug: 'seo' }, { slug: 'web' }] } });
    const row = await env.DB.prepare('SELECT * FROM onboarding_intents WHERE id = ?').bind(data.id).first();
    expect(row).toMatchObject({ surface: 'register', agent_name: 'Claude Code', email: 'ada@example.com', organization_name: 'Analytical Engines', use_case: 'Weekly competitor backlinks.', sources: '["seo","web"]', workspace_id: null });
  });

  it('records the workspace of a key sent with it, and refuses a wrong key with 401', async () => {
    at(DEPRECATIONS.register.sunsetAt - 1);
    const account = await provision();
    const response = await register(INTENT, { authorization: `Bearer ${account.key}` });
    expect(response.status).toBe(201);
    const { data } = await json(response);
    expect(data.workspaceId).toBe(account.workspaceId);
    expect(await env.DB.prepare('SELECT organization_id AS o FROM onboarding_intents WHERE id = ?').bind(data.id).first('o')).toBe(account.organizationId);

    const wrong = await register(INTENT, { authorization: `Bearer sluice_live_${'0'.repeat(32)}` });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('Sunset')).toBe('Thu, 31 Dec 2026 00:00:00 GMT');
  });

  it('lets one address register anonymously 20 times an hour, then 429 with Retry-After; other methods do not count', async () => {
    at(DEPRECATIONS.register.sunsetAt - DAY);
    const from = { 'content-type': 'application/json', 'cf-connecting-ip': '198.51.100.77' };
    const edge = { cf: { colo: 'AMS' } };
    for (let tried = 0; tried < 5; tried++) expect((await call('/v1/register', { headers: from, ...edge })).status).toBe(404);
    const statuses: number[] = [];
    for (let sent = 0; sent < 21; sent++) statuses.push((await call('/v1/register', { method: 'POST', headers: from, body: JSON.stringify(INTENT), ...edge })).status);
    expect(statuses).toEqual([...Array<number>(20).fill(201), 429]);
    const refused = await call('/v1/register', { method: 'POST', headers: from, body: JSON.stringify(INTENT), ...edge });
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await json(refused)).error.code).toBe('RATE_LIMITED');
    // Another address is not held back.
    expect((await register(INTENT)).status).toBe(201);
  });

  it('believes no cf-connecting-ip that did not come through the edge: rotating it does not escape the limit', async () => {
    at(DEPRECATIONS.register.sunsetAt - DAY);
    const statuses: number[] = [];
    for (let sent = 0; sent < 21; sent++) {
      const headers = { 'content-type': 'application/json', 'cf-connecting-ip': `192.0.2.${sent}` };
      statuses.push((await call('/v1/register', { method: 'POST', headers, body: JSON.stringify(INTENT) })).status);
    }
    expect(statuses).toEqual([...Array<number>(20).fill(201), 429]);
  });

  it('refuses a bad intent with 400 naming the fields, an unknown source included', async () => {
    at(DEPRECATIONS.register.sunsetAt - DAY);
    const response = await register({ agentName: '', useCase: 'x', sources: ['myspace'], email: 'not-an-email' });
    expect(response.status).toBe(400);
    const { error } = await json(response);
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.details.map((detail: { field: string }) => detail.field).sort()).toEqual(['agentName', 'email', 'sources[0]']);
  });

  it('answers 410 ENDPOINT_MIGRATED naming sluice_onboarding from the sunset on, with or without a key', async () => {
    at(DEPRECATIONS.register.sunsetAt);
    const before = await env.DB.prepare('SELECT COUNT(*) AS n FROM onboarding_intents').first('n');
    for (const headers of [{}, { authorization: `Bearer ${(await provision()).key}` }] as Record<string, string>[]) {
      const response = await register(INTENT, headers);
      expect(response.status).toBe(410);
      expect(response.headers.get('Link')).toContain(`<${env.MCP_URL}>; rel="successor-version"`);
      const { error } = await json(response);
      expect(error.code).toBe('ENDPOINT_MIGRATED');
      expect(error.message).toContain('sluice_onboarding');
    }
    expect(await env.DB.prepare('SELECT COUNT(*) AS n FROM onboarding_intents').first('n')).toBe(before);
  });
});

describe('retired curated paths /v1/<slug>/<operation> (removed on 2026-10-01)', () => {
  it('takes no name of a real /v1 route', () => {
    const taken = new Set(RETIRED_PATHS.map((retired) => retired.path.split('/')[2]));
    for (const reserved of ['data', 'credits', 'usage', 'plans', 'platforms', 'db', 'webhook-endpoints', 'register', 'connections']) expect(taken.has(reserved)).toBe(false);
    expect(RETIRED_PATHS.length).toBeGreaterThan(60);
  });

  it('answers every retired path with 410 ENDPOINT_MIGRATED and a Link to its successor from the sunset on', async () => {
    at(DEPRECATIONS.curatedPaths.sunsetAt);
    const { key } = await provision();
    for (const { path, successor, operation } of RETIRED_PATHS) {
      const response = await call(path, { method: operation.method, ...bearer(key) });
      expect(response.status, path).toBe(410);
      expect(response.headers.get('Link')).toBe(`<${successor}>; rel="successor-version"`);
      const { error } = await json(response);
      expect(error).toMatchObject({ code: 'ENDPOINT_MIGRATED' });
      expect(error.message).toContain(successor);
    }
  });

  it('still serves the successor the day before the sunset, with Deprecation and Sunset, and charges like it', async () => {
    at(DEPRECATIONS.curatedPaths.sunsetAt - DAY);
    const account = await funded(100, 'payg');
    const response = await call('/v1/linkedin/get-company-by-domain?domain=stripe.com', bearer(account.key));
    expect(response.status).toBe(200);
    expect(response.headers.get('Deprecation')).toBe('@1782864000');
    expect(response.headers.get('Sunset')).toBe('Thu, 01 Oct 2026 00:00:00 GMT');
    expect(response.headers.get('Link')).toBe('</v1/data/linkedin/get-company-by-domain>; rel="successor-version"');
    const body = await json(response);
    const twin = await json(await companyByDomain(account.key, 'stripe.com'));
    expect(body.data).toEqual(twin.data);
    expect(body.meta.costCents).toBe(twin.meta.costCents);
  });

  it('leaves the real /v1 routes and unknown paths as they were', async () => {
    at(DEPRECATIONS.curatedPaths.sunsetAt + DAY);
    const { key } = await provision();
    expect((await call('/v1/credits', bearer(key))).status).toBe(200);
    expect((await call('/v1/platforms/linkedin')).status).toBe(200);
    const unknown = await call('/v1/linkedin/no-such-operation', bearer(key));
    expect(unknown.status).toBe(404);
  });
});

function db(key: string, method: string, path: string, body?: unknown) {
  return call(`/v1/db${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function createDb(key: string, name: string): Promise<string> {
  const response = await db(key, 'POST', '/databases', { name });
  expect(response.status, await response.clone().text()).toBe(201);
  return (await json(response)).data.id;
}

async function query(key: string, id: string, sql: string, params?: unknown[]) {
  const response = await db(key, 'POST', `/databases/${id}/query`, { sql, ...(params ? { params } : {}) });
  return { status: response.status, headers: response.headers, body: await json(response) };
}

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
    // Still the owner's after the attempts.
    expect((await query(key, id, 'SELECT 1 AS one')).body.data.rows).toEqual([[1]]);
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

/** The mcp worker with its service binding answered by the api worker's own McpGateway, in this isolate. */
async function mcpCall(token: string, name: string, args: unknown) {
  const gateway = new McpGateway(createExecutionContext(), env);
  const api = { authenticate: (bearerToken: string) => authenticateMcpBearer(env, bearerToken), callWorkspaceTool: gateway.callWorkspaceTool.bind(gateway) };
  const context = createExecutionContext();
  const response = await mcpApp.fetch(
    new Request(`${new URL(env.MCP_URL).origin}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    }),
    { ...env, API: api },
    context,
  );
  await waitOnExecutionContext(context);
  return ((await response.json()) as { result: { isError?: boolean; structuredContent: any } }).result;
}

describe('the workspace tools over MCP', () => {
  it('records the onboarding intent for the workspace with sluice_onboarding, the successor of /v1/register', async () => {
    const account = await provision({ plan: 'payg' });
    const token = (await ops('POST', '/keys', { workspaceId: account.workspaceId, scope: 'workspace_mcp', name: 'mcp' })).body.data.key;
    const result = await mcpCall(token, 'sluice_onboarding', { agentName: 'Cursor', useCase: 'Enrich our CRM leads.', sources: ['leads'] });
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent.data).toMatchObject({ workspaceId: account.workspaceId, next: { sources: [{ slug: 'leads' }] } });
    const row = await env.DB.prepare('SELECT surface, agent_name, organization_id FROM onboarding_intents WHERE id = ?').bind(result.structuredContent.data.id).first();
    expect(row).toEqual({ surface: 'mcp', agent_name: 'Cursor', organization_id: account.organizationId });

    const refused = await mcpCall(token, 'sluice_onboarding', { useCase: 'x' });
    expect(refused.isError).toBe(true);
    expect(toolErrorOf(refused)).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'agentName', location: 'body', message: 'Required.' }] });
  });

  it('creates, lists and queries a database with the sluice_db tools, in the same window and isolation as REST', async () => {
    const account = await provision({ plan: 'payg' });
    const token = (await ops('POST', '/keys', { workspaceId: account.workspaceId, scope: 'workspace_mcp', name: 'mcp' })).body.data.key;
    const created = await mcpCall(token, 'sluice_db_create', { name: 'runs' });
    const databaseId = created.structuredContent.data.id;
    expect((await mcpCall(token, 'sluice_db_list', {})).structuredContent.data.databases).toEqual([expect.objectContaining({ id: databaseId, name: 'runs' })]);
    await mcpCall(token, 'sluice_db_query', { databaseId, sql: 'CREATE TABLE seen (url TEXT PRIMARY KEY)' });
    await mcpCall(token, 'sluice_db_query', { databaseId, sql: 'INSERT INTO seen VALUES (?)', params: ['https://example.com'] });
    // The REST key of the same workspace reads what the agent wrote.
    expect((await query(account.key, databaseId, 'SELECT url FROM seen')).body.data.rows).toEqual([['https://example.com']]);

    const refused = await mcpCall(token, 'sluice_db_query', { databaseId, sql: 'SELEC 1' });
    expect(toolErrorOf(refused)).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'sql', message: expect.stringContaining('syntax error') }] });
    const stranger = await provision({ plan: 'payg' });
    const theirs = (await ops('POST', '/keys', { workspaceId: stranger.workspaceId, scope: 'workspace_mcp', name: 'mcp' })).body.data.key;
    expect(toolErrorOf(await mcpCall(theirs, 'sluice_db_query', { databaseId, sql: 'SELECT * FROM seen' })).code).toBe('NOT_FOUND');
  });
});

describe('the databases page and its API in the dashboard', () => {
  it("lets a member create a database once the organization has a plan, query it, and see it listed; another organization's reads as 404", async () => {
    const person = await signUp();
    const base = `/api/workspaces/${person.workspaceId}/databases`;
    const noPlan = await person.json('POST', base, { name: 'notes' });
    expect(noPlan.status).toBe(402);
    expect(noPlan.body.error.code).toBe('SUBSCRIPTION_REQUIRED');

    expect((await person.json('POST', `/api/organizations/${person.organizationId}/trial`)).status).toBe(201);
    const created = await person.json('POST', base, { name: 'notes' });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    await person.json('POST', `${base}/query`, { databaseId: id, sql: 'CREATE TABLE notes (body TEXT)' });
    const inserted = await person.json('POST', `${base}/query`, { databaseId: id, sql: 'INSERT INTO notes VALUES (?) RETURNING body', params: ['<b>hello</b>'] });
    expect(inserted.body.data.rows).toEqual([['<b>hello</b>']]);

    const page = await person.request('GET', `/w/${person.workspaceId}/databases`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(id);
    expect(html).toContain('notes');
    expect(html).toContain('data-query-result');

    const stranger = await signUp();
    const theirs = await stranger.json('POST', `/api/workspaces/${stranger.workspaceId}/databases/query`, { databaseId: id, sql: 'SELECT * FROM notes' });
    expect(theirs.status).toBe(404);
    expect((await stranger.json('POST', `${base}/query`, { databaseId: id, sql: 'SELECT * FROM notes' })).status).toBe(404);
  });
});
