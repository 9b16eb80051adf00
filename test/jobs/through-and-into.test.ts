import { env } from 'cloudflare:workers';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { exampleOf } from '../../src/api/examples';
import { centsFromUnits, unitsFromCents } from '../../src/core/money';
import { type Plan, PLAN_TABLE } from '../../src/core/plans';
import { CONNECTABLE_VENDORS } from '../../src/services/connections-vendors';
import { writeInto } from '../../src/services/jobs/into';
import { OPERATIONS } from '../../src/operations';
import { call, credit, eventually, funded, json, ops, provision, type Provisioned } from '../support/api';
import { FAKE_VENDORS_ORIGIN } from '../fakes/vendor-wire';
import { driveJob, jobKeyId, jobTime, type JobTime, ndjsonResults, submit } from './support';

vi.setConfig({ testTimeout: 120_000 });

const SETTINGS = env as unknown as Record<string, string>;
const COMPANY = 'linkedin/get-company-by-domain';
const hunter = CONNECTABLE_VENDORS.find((vendor) => vendor.slug === 'hunter')!;
const hunterOperation = OPERATIONS.find((operation) => operation.upstream?.vendor.id === 'hunter' && operation.method === 'GET' && exampleOf(operation) && operation.paths.some((path) => path.startsWith('/v1/data/')))!;
const HUNTER_JOB = `${hunterOperation.platform}/${hunterOperation.name}`;

let time: JobTime;
beforeEach(async () => {
  time = await jobTime();
});
afterEach(async () => {
  vi.restoreAllMocks();
  await time.dispose();
});

async function send(method: string, path: string, key: string, body?: unknown) {
  const response = await call(path, { method, headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { status: response.status, body: await json(response) };
}

/** A workspace (payg unless said) with money and a Hunter connection holding the credentials the fake vendor accepts. */
async function connected(plan: Plan = 'payg', purchasedCents = 100): Promise<{ account: Provisioned; connectionId: string }> {
  const account = await provision({ plan });
  await credit(account.organizationId, { purchasedCents });
  const credentials = Object.fromEntries(hunter.fields.map((field) => [field.name, SETTINGS[field.setting]!]));
  const created = await send('POST', '/v1/connections', account.key, { vendor: 'hunter', name: 'ours', credentials });
  expect(created.status).toBe(201);
  return { account, connectionId: created.body.data.id };
}

async function jobsOf(workspaceId: string): Promise<number> {
  return (await env.DB.prepare('SELECT COUNT(*) AS n FROM data_jobs WHERE workspace_id = ?').bind(workspaceId).first<{ n: number }>())!.n;
}

describe('a data job through a connection', () => {
  it("runs every item with the workspace's connection: quoted and charged the plan's fee, usage rows marked with the connection and the job", async () => {
    const { account, connectionId } = await connected();
    const input = exampleOf(hunterOperation)!.input;
    const fee = PLAN_TABLE.payg.connectionFeeCents;
    expect(hunterOperation.price.display.cents).not.toBe(fee);

    const submitted = await submit(account.key, { operation: HUNTER_JOB, inputs: [input, input, input], connectionId });
    expect(submitted.status).toBe(202);
    expect(submitted.body.data).toMatchObject({ connectionId, quotedCents: centsFromUnits(3 * unitsFromCents(fee)), into: null });
    const job = await driveJob(submitted.body.data.id, time, (view) => view.finishedAt !== null);
    expect(job).toMatchObject({ status: 'succeeded', counts: { succeeded: 3, failed: 0 }, spentCents: centsFromUnits(3 * unitsFromCents(fee)) });

    const keyId = await jobKeyId(job.id);
    const rows = await eventually(
      () => env.DB.prepare('SELECT status, cost_units, connection_id FROM usage WHERE key_id = ? AND status = 200').bind(keyId).all<{ cost_units: number; connection_id: string }>(),
      (found) => found.results.length >= 3,
    );
    expect(rows.results.map((row) => [row.connection_id, row.cost_units])).toEqual(Array.from({ length: 3 }, () => [connectionId, unitsFromCents(fee)]));
    const usage = (await send('GET', '/v1/usage', account.key)).body.data.rows.filter((row: { status: number }) => row.status === 200);
    expect(usage.map((row: { jobId: string; connectionId: string }) => [row.jobId, row.connectionId])).toEqual(Array.from({ length: 3 }, () => [job.id, connectionId]));
  });

  it('stops at its maxCostCents when the plan changes and the fee rises after the quote, the items not run left pending', async () => {
    const low = PLAN_TABLE.toolkit.connectionFeeCents;
    const high = PLAN_TABLE.payg.connectionFeeCents;
    expect(high).toBeGreaterThan(low);
    // The key's limit has room for two items at the low fee: the job runs two, then waits.
    const { account, connectionId } = await connected('toolkit');
    expect((await ops('PUT', `/keys/${account.keyId}/limit`, { monthlyLimitCents: 2 * low })).status).toBe(200);
    const input = exampleOf(hunterOperation)!.input;
    const maxCostCents = 3 * low;
    const submitted = await submit(account.key, { operation: HUNTER_JOB, inputs: [input, input, input], connectionId, maxCostCents });
    expect(submitted.body.data).toMatchObject({ quotedCents: maxCostCents, maxCostCents });
    const id = submitted.body.data.id;
    await driveJob(id, time, (job) => job.status === 'waiting_for_credits' && job.counts.succeeded === 2, { follow: false });

    // Pay as you go now, and no key limit: the fee rose, and what is left under the cap (half a cent) pays for no item at it.
    expect((await ops('PUT', `/organizations/${account.organizationId}/plan`, { plan: 'payg' })).status).toBe(200);
    expect((await ops('PUT', `/keys/${account.keyId}/limit`, { monthlyLimitCents: null })).status).toBe(200);
    const job = await driveJob(id, time, (view) => view.finishedAt !== null);
    expect(job).toMatchObject({ status: 'failed', counts: { succeeded: 2, failed: 0, pending: 1 }, spentCents: 2 * low });
    expect(job.reason).toContain(`The job reached its maxCostCents of`);
    expect(job.reason).toContain("the connection's fee is now 1 cent an item");
  });

  it("stops at the first item its connection's vendor account is out of credits for: the vendor asked once, nothing failed or charged, the rest pending and the reason saying what to do", async () => {
    const { account, connectionId } = await connected();
    const input = exampleOf(hunterOperation)!.input;
    // Hunter's answer for an account past its monthly usage (its API docs: 429 with this error).
    let refusals = 0;
    const realFetch = globalThis.fetch;
    vi.spyOn(globalThis, 'fetch').mockImplementation(async (target, init) => {
      const request = new Request(target, init);
      if (!request.url.startsWith(`${FAKE_VENDORS_ORIGIN}/hunter/`)) return realFetch(request);
      refusals += 1;
      return Response.json({ errors: [{ id: 'too_many_requests', code: 429, details: "You've reached your usage limit for this month. Upgrade your plan." }] }, { status: 429 });
    });
    const submitted = await submit(account.key, { operation: HUNTER_JOB, inputs: Array.from({ length: 20 }, () => input), connectionId });
    const id = submitted.body.data.id;
    const job = await driveJob(id, time, (view) => view.finishedAt !== null);
    expect(job).toMatchObject({ status: 'failed', counts: { succeeded: 0, failed: 0, pending: 20 }, spentCents: 0 });
    expect(job.reason).toContain(`connection ${connectionId}`);
    expect(job.reason).toContain('out of credits');
    expect(job.reason).toContain(`/v1/data/agnt/jobs/${id}/results?status=pending`);
    // The job's first call runs alone (it does not know the window yet) and stops it: the vendor is asked once.
    expect(refusals).toBe(1);
    const pending = await send('GET', `/v1/data/agnt/jobs/${id}/results?status=pending`, account.key);
    expect(pending.body.data.items).toHaveLength(20);
    expect(pending.body.data.items[0]).toMatchObject({ status: 'pending', input });
  });

  it("refuses before queueing: a connection the workspace does not have (404), an operation its vendor does not serve (404 ENDPOINT_NOT_FOUND naming the vendors that do)", async () => {
    const { account, connectionId } = await connected();
    const input = exampleOf(hunterOperation)!.input;
    const unknown = await submit(account.key, { operation: HUNTER_JOB, inputs: [input], connectionId: 'con_000000000000000000000000' });
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'NOT_FOUND']);

    const stranger = await provision({ plan: 'payg' });
    await credit(stranger.organizationId, { purchasedCents: 100 });
    const elsewhere = await submit(stranger.key, { operation: HUNTER_JOB, inputs: [input], connectionId });
    expect([elsewhere.status, elsewhere.body.error.code]).toEqual([404, 'NOT_FOUND']);

    const notServed = await submit(account.key, { operation: 'seo/serp', inputs: [{ keyword: 'shoes' }], connectionId });
    expect([notServed.status, notServed.body.error.code]).toEqual([404, 'ENDPOINT_NOT_FOUND']);
    expect(notServed.body.error.message).toMatch(/dataforseo/);

    expect(await jobsOf(account.workspaceId)).toBe(0);
    expect(await jobsOf(stranger.workspaceId)).toBe(0);
  });
});

async function database(key: string, name = 'results'): Promise<string> {
  const created = await send('POST', '/v1/db/databases', key, { name });
  expect(created.status).toBe(201);
  return created.body.data.id;
}

function query(key: string, databaseId: string, sql: string) {
  return send('POST', `/v1/db/databases/${databaseId}/query`, key, { sql });
}

describe('a data job into a workspace database', () => {
  it('writes each success as a row of the table it creates (input and data as JSON text), no row for a failure', async () => {
    const account = await funded(100);
    const databaseId = await database(account.key);
    const inputs = [{ domain: 'a.com' }, { domain: 'status404.b.com' }, { domain: 'c.com' }];
    const submitted = await submit(account.key, { operation: COMPANY, inputs, into: { databaseId, table: 'companies' } });
    expect(submitted.status).toBe(202);
    expect(submitted.body.data.into).toEqual({ databaseId, table: 'companies' });
    // Made at submission, before the job runs: an agent may query it at once.
    expect((await query(account.key, databaseId, 'SELECT COUNT(*) FROM companies')).body.data.rows).toEqual([[0]]);

    const job = await driveJob(submitted.body.data.id, time, (view) => view.finishedAt !== null);
    expect(job).toMatchObject({ status: 'succeeded', counts: { succeeded: 2, failed: 1 } });
    const results = await ndjsonResults(account.key, job.id);
    const table = await query(account.key, databaseId, "SELECT job_id, item_index, input, data, data->>'$.name' FROM companies ORDER BY item_index");
    expect(table.status).toBe(200);
    const succeeded = results.filter((item) => item.status === 'succeeded');
    expect(table.body.data.rows.map((row: unknown[]) => [row[0], row[1], JSON.parse(row[2] as string), JSON.parse(row[3] as string), row[4]])).toEqual(
      succeeded.map((item) => [job.id, item.index, item.input, item.data, item.data.name]),
    );
    expect(succeeded.map((item) => item.index)).toEqual([0, 2]);
  });

  it('writes an item again (a slice run again after a crash) as the same one row', async () => {
    const account = await funded(100);
    const databaseId = await database(account.key);
    const job = { id: 'job_0123456789abcdef01234567', workspaceId: account.workspaceId, intoDatabaseId: databaseId, intoTable: 'again' };
    await writeInto(env, job, [{ idx: 0, input: '{"domain":"a.com"}', data: { name: 'A' } }]);
    await writeInto(env, job, [
      { idx: 0, input: '{"domain":"a.com"}', data: { name: 'A' } },
      { idx: 1, input: '{"domain":"b.com"}', data: { name: 'B' } },
    ]);
    expect((await query(account.key, databaseId, 'SELECT item_index, data FROM again ORDER BY item_index')).body.data.rows).toEqual([
      [0, '{"name":"A"}'],
      [1, '{"name":"B"}'],
    ]);
  });

  it("refuses before queueing: an unknown or another workspace's database (404), a bad table name or a table of other columns (400 naming into.table)", async () => {
    const account = await funded(100);
    const databaseId = await database(account.key);
    const job = (into: unknown) => submit(account.key, { operation: COMPANY, inputs: [{ domain: 'a.com' }], into });

    const unknown = await job({ databaseId: 'db_000000000000000000000000', table: 'companies' });
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'NOT_FOUND']);
    const stranger = await funded(100);
    const theirs = await database(stranger.key);
    expect((await job({ databaseId: theirs, table: 'companies' })).status).toBe(404);

    for (const table of ['drop table x', 'a"b', 'sqlite_master', '', 'x'.repeat(65)]) {
      const refused = await job({ databaseId, table });
      expect({ table, status: refused.status, code: refused.body.error.code, field: refused.body.error.details[0].field }).toEqual({ table, status: 400, code: 'VALIDATION_ERROR', field: 'into.table' });
    }
    expect((await query(account.key, databaseId, 'CREATE TABLE other (x INTEGER)')).status).toBe(200);
    const otherColumns = await job({ databaseId, table: 'other' });
    expect([otherColumns.status, otherColumns.body.error.details[0].field]).toEqual([400, 'into.table']);

    expect(await jobsOf(account.workspaceId)).toBe(0);
    expect((await query(account.key, databaseId, "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' ORDER BY name")).body.data.rows).toEqual([['other']]);
  });
});
