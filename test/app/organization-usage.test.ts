import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { insertUsageRows, type UsageRow } from '../../src/core/usage';
import { ops } from '../support/api';
import { type Person, signUp } from '../support/dashboard';

const thisMonth = new Date().toISOString().slice(0, 7);
const lastMonthStart = (() => {
  const now = new Date();
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1, 12);
})();
const lastMonth = new Date(lastMonthStart).toISOString().slice(0, 7);

/** `count` calls of the workspace at `at`, each costing `units`, written as the usage outbox writes them. */
async function calls(person: Person, workspaceId: string, count: number, units: number, at: number, sandbox = false, operation = 'web.scrape'): Promise<void> {
  const rows: UsageRow[] = Array.from({ length: count }, (_, index) => ({
    id: `use_${crypto.randomUUID().replaceAll('-', '')}`,
    requestId: `req_${index}`,
    organizationId: person.organizationId,
    workspaceId,
    keyId: 'key_organization_usage',
    operation,
    status: 200,
    errorCode: null,
    costUnits: units,
    cached: false,
    latencyMs: 5,
    createdAt: new Date(at + index).toISOString(),
    sandbox,
  }));
  await env.DB.batch([insertUsageRows(env.DB, JSON.stringify(rows))]);
}

describe("an organization's spend by workspace", () => {
  it('lists each workspace of a month, a deleted one that spent in it too, the most spent first', async () => {
    const owner = await signUp();
    await ops('PUT', `/organizations/${owner.organizationId}/plan`, { plan: 'team' });
    const made = async (name: string) => (await owner.json('POST', `/api/organizations/${owner.organizationId}/workspaces`, { name })).body.data.id as string;
    const [staging, gone, idle] = [await made('Staging'), await made('Gone'), await made('Idle gone')];
    // A minute ago, or the month's first instant in its first minute: this month either way.
    const today = Math.max(Date.now() - 60_000, Date.parse(`${thisMonth}-01T00:00:00Z`));
    await calls(owner, owner.workspaceId, 3, 10_000, today);
    await calls(owner, staging, 2, 5_000, today);
    await calls(owner, staging, 4, 0, today, true);
    await calls(owner, gone, 5, 20_000, today);
    // Sandbox calls of an operation that sorts first: its day row counts no live call, which must not hide the others.
    await calls(owner, gone, 4, 0, today, true, 'aaa.sandbox-only');
    await calls(owner, owner.workspaceId, 7, 10_000, lastMonthStart);
    for (const workspaceId of [gone, idle]) expect((await owner.request('DELETE', `/api/workspaces/${workspaceId}`)).status).toBe(200);

    const usage = await owner.json('GET', `/api/organizations/${owner.organizationId}/usage`);
    expect(usage.status).toBe(200);
    expect(usage.body.data).toEqual({
      organizationId: owner.organizationId,
      month: thisMonth,
      totals: { calls: 10, costCents: 14 },
      workspaces: [
        { workspaceId: gone, name: 'Gone', deleted: true, calls: 5, costCents: 10 },
        { workspaceId: owner.workspaceId, name: 'Default', deleted: false, calls: 3, costCents: 3 },
        { workspaceId: staging, name: 'Staging', deleted: false, calls: 2, costCents: 1 },
      ],
    });
    const earlier = await owner.json('GET', `/api/organizations/${owner.organizationId}/usage?month=${lastMonth}`);
    expect(earlier.body.data.workspaces).toEqual([
      { workspaceId: owner.workspaceId, name: 'Default', deleted: false, calls: 7, costCents: 7 },
      { workspaceId: staging, name: 'Staging', deleted: false, calls: 0, costCents: 0 },
    ]);

    // The Usage page shows it, the deleted workspace named as such.
    const page = await (await owner.request('GET', `/w/${owner.workspaceId}/usage`)).text();
    expect(page).toContain(`Spend by workspace, ${thisMonth}`);
    expect(page).toMatch(/Gone <span class="badge plain">deleted<\/span>/);
  });

  it('refuses a month that is not YYYY-MM with 400 naming it, and another organization with 404', async () => {
    const owner = await signUp();
    const refused = await owner.json('GET', `/api/organizations/${owner.organizationId}/usage?month=2026-13`);
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual([expect.objectContaining({ field: 'month' })]);
    const stranger = await signUp();
    expect((await stranger.request('GET', `/api/organizations/${owner.organizationId}/usage`)).status).toBe(404);
  });
});
