import { createExecutionContext, createScheduledController, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import worker from '../../src/api';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clock } from '../../src/core/clock';
import { insertUsageRows, type UsageRow } from '../../src/core/usage';
import { usageReport } from '../../src/services/usage-report';
import { pruneUsage } from '../../src/services/usage-retention';
import { provision } from '../support/api';
import { handToConsumer, keptNightly } from '../support/nightly';
import { rowsReadBy } from '../support/rows-read';

afterEach(() => {
  vi.restoreAllMocks();
});

/** "Now" for this file: rows before 2026-11-15 (13 months back) are past their retention. */
const NOW = Date.UTC(2027, 11, 15, 9, 30);
const KEPT_SINCE = '2026-11-15T00:00:00.000Z';

function rowsAt(workspaceId: string, instants: number[]): UsageRow[] {
  return instants.map((at, index) => ({
    id: `use_retention_${workspaceId}_${index}`,
    requestId: `req_${index}`,
    organizationId: 'org_retention',
    workspaceId,
    keyId: 'key_a',
    operation: index % 2 === 0 ? 'web.scrape' : 'seo.serp',
    status: index % 5 === 4 ? 503 : 200,
    errorCode: index % 5 === 4 ? 'PROVIDER_UNAVAILABLE' : null,
    costUnits: index % 5 === 4 ? 0 : 1_000 * (index + 1),
    cached: false,
    latencyMs: 5,
    createdAt: new Date(at).toISOString(),
  }));
}

describe('usage rows past their 13 months', () => {
  it('are deleted by the daily run while the totals of any range stay what they were, and the report says where it summarizes', async () => {
    vi.spyOn(clock, 'now').mockReturnValue(NOW);
    const { workspaceId } = await provision();
    // Ten calls on 2026-10-20 (past the retention), four on 2026-11-14 (the last day past it), six kept.
    const old = Array.from({ length: 10 }, (_, index) => Date.UTC(2026, 9, 20, index * 2, 15));
    const lastOldDay = Array.from({ length: 4 }, (_, index) => Date.UTC(2026, 10, 14, 20 + index, 5));
    const kept = Array.from({ length: 6 }, (_, index) => Date.UTC(2026, 10, 15 + index, 10, 0));
    await insertUsageRows(env.DB, JSON.stringify(rowsAt(workspaceId, [...old, ...lastOldDay, ...kept]))).run();

    const ranges = [
      { from: '2026-10-01T00:00:00.000Z', to: '2026-12-01T00:00:00.000Z' },
      { from: '2026-10-20T00:00:00.000Z', to: '2026-11-16T00:00:00.000Z' },
    ];
    const before = await Promise.all(ranges.map((range) => usageReport(env.DB, workspaceId, { ...range, limit: 500 })));
    expect(before[0]!.totals.calls).toBe(20);
    expect(before[0]!.summarizedBefore).toBe(KEPT_SINCE);

    // At least this workspace's fourteen (the file's database may hold other files' workspaces).
    expect((await pruneUsage(env.DB)).rows).toBeGreaterThanOrEqual(14);
    const left = await env.DB.prepare('SELECT created_at AS at FROM usage WHERE workspace_id = ? ORDER BY created_at').bind(workspaceId).all<{ at: string }>();
    expect(left.results.map((row) => row.at)).toEqual(kept.map((at) => new Date(at).toISOString()));
    const hoursLeft = await env.DB.prepare('SELECT MIN(hour) AS first FROM usage_hourly WHERE workspace_id = ?').bind(workspaceId).first<{ first: string }>();
    expect(hoursLeft!.first >= KEPT_SINCE.slice(0, 13)).toBe(true);

    for (const [index, range] of ranges.entries()) {
      const after = await usageReport(env.DB, workspaceId, { ...range, limit: 500 });
      expect(after.totals).toEqual(before[index]!.totals);
      expect(after.byOperation).toEqual(before[index]!.byOperation);
      expect(after.rows.every((row) => row.createdAt >= KEPT_SINCE)).toBe(true);
    }
    // A second run finds nothing more to delete.
    expect(await pruneUsage(env.DB)).toEqual({ rows: 0, hours: 0 });
  });

  it('reaches a workspace past the first thousand: each run visits the workspaces with rows to delete, not every workspace', async () => {
    vi.spyOn(clock, 'now').mockReturnValue(NOW);
    const first = await provision();
    // 1,500 workspaces with nothing old, first in any order (by id, by rowid): a run that visited every workspace,
    // at two statements each out of its 2,000, stopped before the one that has.
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 1499)
       INSERT INTO workspaces (id, organization_id, name, created_at) SELECT printf('ws_00000000%016d', i), ?1, 'Quiet', '2026-01-01T00:00:00.000Z' FROM n`,
    )
      .bind(first.organizationId)
      .run();
    // Each with hourly totals of the last days, which a run reading the whole hourly table would read too.
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 2999)
       INSERT INTO usage_hourly (workspace_id, hour, operation, calls, succeeded, cost_units)
       SELECT printf('ws_00000000%016d', i % 1500), printf('2027-12-%02dT%02d', 1 + i / 1500, i % 24), 'web.scrape', 1, 1, 10 FROM n`,
    ).run();
    const { workspaceId } = await provision();
    await insertUsageRows(env.DB, JSON.stringify(rowsAt(workspaceId, [Date.UTC(2026, 9, 20, 6, 0), Date.UTC(2026, 11, 1, 12, 0)]))).run();

    const { answer, rows } = await rowsReadBy((db) => pruneUsage(db));
    expect(answer.rows).toBeGreaterThanOrEqual(1);
    const left = await env.DB.prepare('SELECT COUNT(*) AS n FROM usage WHERE workspace_id = ?').bind(workspaceId).first<number>('n');
    expect(left).toBe(1);
    // Its reads are the hourly totals past the retention, not the 3,000 recent ones or the 1,500 quiet workspaces.
    expect(rows).toBeLessThan(100);
  });

  it("carries a night with more to delete than one run may on through the nightly queue, until none is left", async () => {
    vi.spyOn(clock, 'now').mockReturnValue(NOW);
    const { organizationId } = await provision();
    // 1,100 workspaces with a call past the retention each: two statements a workspace, past one run's 2,000.
    const prefix = `ws_night_${crypto.randomUUID().slice(0, 8)}_`;
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 1099)
       INSERT INTO usage (id, request_id, organization_id, workspace_id, key_id, operation, status, cost_units, latency_ms, created_at)
       SELECT 'use_' || ?1 || i, 'req_night', ?2, ?1 || printf('%05d', i), 'key_a', 'web.scrape', 200, 10, 5, '2026-10-20T06:00:00.000Z' FROM n`,
    )
      .bind(prefix, organizationId)
      .run();
    const left = () => env.DB.prepare('SELECT COUNT(*) AS n FROM usage WHERE workspace_id LIKE ?').bind(`${prefix}%`).first<number>('n');

    const { sent, bindings } = keptNightly();
    const context = createExecutionContext();
    await worker.scheduled(createScheduledController({ scheduledTime: NOW, cron: '5 0 * * *' }), bindings, context);
    await waitOnExecutionContext(context);
    const afterCron = await left();
    expect(afterCron).toBeGreaterThan(0);
    expect(afterCron).toBeLessThan(1_100);
    // Each message runs the prune once more, and sends the next only while a run uses its whole budget.
    const nextPrune = () => {
      const index = sent.findIndex((message) => message.kind === 'prune' && message.what === 'usage');
      return index < 0 ? undefined : sent.splice(index, 1)[0];
    };
    let runs = 0;
    for (let message = nextPrune(); message && runs < 5; message = nextPrune()) {
      runs += 1;
      expect((await handToConsumer(bindings, [message])).explicitAcks).toEqual(['msg_0']);
    }
    expect(await left()).toBe(0);
    expect(runs).toBeGreaterThanOrEqual(1);
    expect(nextPrune()).toBeUndefined();
  }, 30_000);

  it('widens a range that starts inside a summarized day to the whole day, and leaves a range of kept rows alone', async () => {
    vi.spyOn(clock, 'now').mockReturnValue(NOW);
    const { workspaceId } = await provision();
    const morning = Date.UTC(2026, 9, 20, 6, 0);
    const evening = Date.UTC(2026, 9, 20, 18, 0);
    await insertUsageRows(env.DB, JSON.stringify(rowsAt(workspaceId, [morning, evening, Date.UTC(2026, 11, 1, 12, 0)]))).run();
    await pruneUsage(env.DB);

    const noon = await usageReport(env.DB, workspaceId, { from: '2026-10-20T12:00:00.000Z', to: '2026-10-20T13:00:00.000Z', limit: 10 });
    expect(noon).toMatchObject({ from: '2026-10-20T00:00:00.000Z', to: '2026-10-21T00:00:00.000Z', summarizedBefore: KEPT_SINCE, rows: [] });
    expect(noon.totals.calls).toBe(2);

    const recent = await usageReport(env.DB, workspaceId, { from: '2026-12-01T11:00:00.000Z', to: '2026-12-01T13:00:00.000Z', limit: 10 });
    expect(recent).toMatchObject({ from: '2026-12-01T11:00:00.000Z', summarizedBefore: null });
    expect(recent.rows).toHaveLength(1);
  });
});
