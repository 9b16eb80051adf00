import { env } from 'cloudflare:workers';
import Papa from 'papaparse';
import { describe, expect, it } from 'vitest';
import { exportRangeOf, streamUsageCsv, USAGE_CSV_COLUMNS } from '../../src/services/usage-report';
import { USAGE_EXPORTS_PER_USER } from '../../src/app/api/usage';
import { USAGE_EXPORTS_PER_WORKSPACE } from '../../src/api/routes/usage';
import { bearer, call, companyByDomain, eventually, json, ops } from '../support/api';
import { type Person, signUp } from '../support/dashboard';

const exportOf = (person: Person, query: string) => person.request('GET', `/api/workspaces/${person.workspaceId}/usage/export${query}`);
const parsed = (text: string) => Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: true });
const day = (offsetDays: number) => new Date(Date.now() + offsetDays * 24 * 60 * 60 * 1000).toISOString().slice(0, 10);

/** `count` calls' rows of the workspace, a second apart ending at `endingAt`, written as the pipeline writes them. */
async function rowsOf(person: Person, count: number, endingAt: number, errorCode: string | null = null): Promise<void> {
  const statements = Array.from({ length: count }, (_, index) =>
    env.DB.prepare(
      `INSERT INTO usage (id, request_id, organization_id, workspace_id, key_id, operation, status, error_code, cost_units, latency_ms, created_at)
       VALUES (?, ?, ?, ?, 'key_export', 'test.export', ?, ?, ?, 12, ?)`,
    ).bind(
      `use_${crypto.randomUUID().replaceAll('-', '')}`,
      `req_export_${index}`,
      person.organizationId,
      person.workspaceId,
      errorCode ? 502 : 200,
      errorCode,
      errorCode ? 0 : 10_000,
      new Date(endingAt - index * 1000).toISOString(),
    ),
  );
  for (let start = 0; start < statements.length; start += 100) await env.DB.batch(statements.slice(start, start + 100));
}

describe('the usage export', () => {
  it("downloads a workspace's calls as CSV, the same calls GET /v1/usage lists", async () => {
    const owner = await signUp();
    await ops('PUT', `/organizations/${owner.organizationId}/plan`, { plan: 'payg' });
    await ops('POST', `/organizations/${owner.organizationId}/wallet/credit`, { purchasedCents: 100 });
    const key = (await owner.json('POST', `/api/workspaces/${owner.workspaceId}/keys`, { name: 'program' })).body.data.key as string;
    for (const domain of ['one.example.com', 'two.example.com']) expect((await companyByDomain(key, domain)).status).toBe(200);
    const listed = await eventually(async () => (await json(await call('/v1/usage', bearer(key)))).data.rows as { requestId: string; costCents: number }[], (rows) => rows.length === 2);

    const response = await exportOf(owner, `?from=${day(-1)}&to=${day(0)}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="usage-${owner.workspaceId}-${day(-1)}-to-${day(0)}.csv"`);
    const csv = parsed(await response.text());
    expect(csv.meta.fields).toEqual([...USAGE_CSV_COLUMNS]);
    expect(csv.data.map((row) => [row.requestId, Number(row.costCents), row.keyId])).toEqual(listed.map((row) => [row.requestId, row.costCents, expect.stringMatching(/^key_/)]));

    // The workspace's own key downloads the same file from GET /v1/usage/export.
    const byKey = await call(`/v1/usage/export?from=${day(-1)}&to=${day(0)}`, bearer(key));
    expect(byKey.status).toBe(200);
    expect(byKey.headers.get('content-disposition')).toBe(response.headers.get('content-disposition'));
    expect(parsed(await byKey.text()).data).toEqual(csv.data);
  });

  it('takes up to 400 days counting both ends, and says how many a longer range asks for', async () => {
    const owner = await signUp();
    expect((await exportOf(owner, `?from=${day(-399)}&to=${day(0)}`)).status).toBe(200);
    const longer = await exportOf(owner, `?from=${day(-400)}&to=${day(0)}`);
    expect(longer.status).toBe(400);
    expect(((await longer.json()) as any).error.details).toEqual([expect.objectContaining({ field: 'from', message: expect.stringContaining('(this asks for 401)') })]);
    // One day: from and to the same.
    expect((await exportOf(owner, `?from=${day(-2)}&to=${day(-2)}`)).status).toBe(200);
  });

  it(`over REST: the key's workspace only, ${USAGE_EXPORTS_PER_WORKSPACE.limit} an hour counted per workspace, a refused range not counted`, async () => {
    const owner = await signUp();
    const other = await signUp();
    await rowsOf(other, 1, Date.now() - 1000);
    const key = (await owner.json('POST', `/api/workspaces/${owner.workspaceId}/keys`, { name: 'exports' })).body.data.key as string;
    expect((await call('/v1/usage/export')).status).toBe(401);
    // The other organization's call is not in this workspace's file.
    expect(parsed(await (await call('/v1/usage/export', bearer(key))).text()).data).toEqual([]);
    const backwards = await call(`/v1/usage/export?from=${day(0)}&to=${day(-1)}`, bearer(key));
    expect(backwards.status).toBe(400);
    expect(((await backwards.json()) as any).error).toMatchObject({ code: 'VALIDATION_ERROR', details: [expect.objectContaining({ field: 'from' })] });
    for (let export_ = 1; export_ < USAGE_EXPORTS_PER_WORKSPACE.limit; export_++) expect((await call('/v1/usage/export', bearer(key))).status).toBe(200);
    const refused = await call('/v1/usage/export', bearer(key));
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as any).error.code).toBe('RATE_LIMITED');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('lists every call of the days asked, newest first, page after page, and none outside them', async () => {
    const owner = await signUp();
    const noon = (offsetDays: number) => Date.parse(`${day(offsetDays)}T12:00:00Z`);
    // 1,203 calls on the day before yesterday (three pages of 500 and some), and one on each day around it.
    await rowsOf(owner, 1_203, noon(-2));
    await rowsOf(owner, 1, noon(-1));
    await rowsOf(owner, 1, noon(-4));
    const csv = parsed(await (await exportOf(owner, `?from=${day(-3)}&to=${day(-2)}`)).text());
    expect(csv.data).toHaveLength(1_203);
    expect(new Set(csv.data.map((row) => row.requestId)).size).toBe(1_203);
    const times = csv.data.map((row) => row.createdAt);
    expect(times).toEqual([...times].sort().reverse());
    expect(times.every((time) => String(time).startsWith(day(-2)))).toBe(true);
  });

  it("escapes a cell a spreadsheet would run as a formula", async () => {
    const owner = await signUp();
    await rowsOf(owner, 1, Date.now() - 2000, '=HYPERLINK("https://evil.example")');
    // One that goes on past its first line too (papaparse's own pattern let it through).
    await rowsOf(owner, 1, Date.now() - 1000, '+SUM(1)\nmore');
    const rows = parsed(await (await exportOf(owner, '')).text()).data;
    expect(rows.map((row) => row.errorCode)).toEqual([`'+SUM(1)\nmore`, `'=HYPERLINK("https://evil.example")`]);
  });

  it('refuses days out of order or not dates with 400 naming the field, and another organization\'s workspace with 404', async () => {
    const owner = await signUp();
    const backwards = await exportOf(owner, `?from=${day(0)}&to=${day(-3)}`);
    expect(backwards.status).toBe(400);
    expect(((await backwards.json()) as any).error).toMatchObject({ code: 'VALIDATION_ERROR', details: [expect.objectContaining({ field: 'from' })] });
    const notADate = await exportOf(owner, '?to=yesterday');
    expect(notADate.status).toBe(400);
    expect(((await notADate.json()) as any).error.details[0]).toMatchObject({ field: 'to' });
    const stranger = await signUp();
    expect((await stranger.request('GET', `/api/workspaces/${owner.workspaceId}/usage/export`)).status).toBe(404);
  });

  it(`allows a person ${USAGE_EXPORTS_PER_USER.limit} exports an hour, then 429 with Retry-After`, async () => {
    const owner = await signUp();
    for (let export_ = 0; export_ < USAGE_EXPORTS_PER_USER.limit; export_++) expect((await exportOf(owner, '')).status).toBe(200);
    const refused = await exportOf(owner, '');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('errors the download, rather than end it as if whole, when a page cannot be read', async () => {
    const owner = await signUp();
    await rowsOf(owner, 600, Date.now() - 1000);
    let pages = 0;
    // D1 answers the first page and fails on the second, as an outage part way would.
    const failing = new Proxy(env.DB, {
      get(target, property) {
        if (property !== 'prepare') return Reflect.get(target, property);
        return (query: string) => {
          if (query.includes('FROM usage LEFT JOIN data_jobs') && ++pages > 1) throw new Error('D1 is unavailable');
          return target.prepare(query);
        };
      },
    });
    const range = exportRangeOf({});
    await expect(new Response(streamUsageCsv(failing, owner.workspaceId, range)).text()).rejects.toThrow('D1 is unavailable');
    expect(pages).toBe(2);
  });
});
