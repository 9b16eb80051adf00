import { env } from 'cloudflare:workers';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { clock } from '../../src/core/clock';
import { insertUsageRows, type UsageRow } from '../../src/core/usage';
import { centsFromUnits } from '../../src/core/money';
import { dailySpend, usageReport } from '../../src/services/usage-report';

const START = Date.UTC(2026, 10, 1, 0, 0, 0);
const SPAN_MS = 3 * 24 * 60 * 60 * 1000;
const OPERATIONS = ['linkedin.get-company-by-domain', 'web.scrape', 'seo.serp'];

let workspaces = 0;

// The rows are of November 2026: read from just after them, so their retention (13 months) never summarizes them.
beforeEach(() => {
  vi.spyOn(clock, 'now').mockReturnValue(START + SPAN_MS + 60_000);
});
afterEach(() => {
  vi.restoreAllMocks();
});

/**
 * Rows at random instants over three days, some failed, some sent twice: `again` as an outbox batch sent again,
 * `retried` as a retry that took the call id over after the first row was sent (a success after a failure, or a
 * failure after a success), with its own request id, outcome and a later time.
 */
const rowsArbitrary = fc.array(
  fc.record({
    at: fc.integer({ min: 0, max: SPAN_MS - 1 }),
    operation: fc.constantFrom(...OPERATIONS),
    key: fc.constantFrom('key_a', 'key_b'),
    status: fc.constantFrom(200, 200, 422, 503),
    units: fc.integer({ min: 0, max: 40_000 }),
    resent: fc.constantFrom('no', 'again', 'retried'),
    retryUnits: fc.integer({ min: 1, max: 40_000 }),
  }),
  { minLength: 1, maxLength: 60 },
);

const rangeArbitrary = fc
  .tuple(fc.integer({ min: -60 * 60 * 1000, max: SPAN_MS + 60 * 60 * 1000 }), fc.integer({ min: 1, max: SPAN_MS + 2 * 60 * 60 * 1000 }))
  .map(([from, length]) => ({ from: START + from, to: START + from + length }));

describe('usage totals kept per hour', () => {
  it('sum to exactly what the rows in [from, to) sum to, per operation and per day, whatever the range and its edges, a success that followed a failure under its call id counted as the success', async () => {
    await fc.assert(
      fc.asyncProperty(rowsArbitrary, fc.array(rangeArbitrary, { minLength: 1, maxLength: 4 }), async (drawn, ranges) => {
        const workspaceId = `ws_totals_${++workspaces}`;
        const rows: UsageRow[] = drawn.map((row, index) => ({
          id: `use_${workspaceId}_${index}`,
          requestId: `req_${index}`,
          organizationId: 'org_totals',
          workspaceId,
          keyId: row.key,
          operation: row.operation,
          status: row.status,
          errorCode: row.status === 200 ? null : 'PROVIDER_ERROR',
          costUnits: row.status === 200 ? row.units : 0,
          cached: false,
          latencyMs: 5,
          createdAt: new Date(START + row.at).toISOString(),
        }));
        const resent = rows.flatMap((row, index) => {
          const { resent: how, retryUnits } = drawn[index]!;
          if (how === 'no') return [];
          if (how === 'again') return [row];
          const later = new Date(Date.parse(row.createdAt) + 90_000).toISOString();
          return [row.status < 400
            ? { ...row, requestId: `${row.requestId}_retry`, status: 500, errorCode: 'INTERNAL', costUnits: 0, latencyMs: 9, createdAt: later }
            : { ...row, requestId: `${row.requestId}_retry`, keyId: 'key_retry', status: 200, errorCode: null, costUnits: retryUnits, latencyMs: 9, createdAt: later }];
        });
        await env.DB.batch([insertUsageRows(env.DB, JSON.stringify(rows)), insertUsageRows(env.DB, JSON.stringify(resent))]);
        // What each call id's row should say: a success that followed a failure in its place, at the failure's time.
        const kept = rows.map((row) => {
          const retry = resent.find((other) => other.id === row.id && other.status < 400 && row.status >= 400);
          return retry ? { ...retry, createdAt: row.createdAt } : row;
        });
        const stored = await env.DB.prepare('SELECT id, request_id, key_id, status, error_code, cost_units, latency_ms, created_at FROM usage WHERE workspace_id = ? ORDER BY id')
          .bind(workspaceId)
          .all();
        expect(stored.results).toEqual(
          [...kept]
            .sort((a, b) => (a.id < b.id ? -1 : 1))
            .map((row) => ({ id: row.id, request_id: row.requestId, key_id: row.keyId, status: row.status, error_code: row.errorCode, cost_units: row.costUnits, latency_ms: row.latencyMs, created_at: row.createdAt })),
        );

        for (const range of ranges) {
          const from = new Date(range.from);
          const to = new Date(range.to);
          const inside = kept.filter((row) => row.createdAt >= from.toISOString() && row.createdAt < to.toISOString());
          const report = await usageReport(env.DB, workspaceId, { from: from.toISOString(), to: to.toISOString(), limit: 1 });
          const sums = (of: UsageRow[]) => ({
            calls: of.length,
            succeeded: of.filter((row) => row.status < 400).length,
            failed: of.filter((row) => row.status >= 400).length,
            costCents: centsFromUnits(of.reduce((sum, row) => sum + row.costUnits, 0)),
          });
          expect(report.totals).toEqual(sums(inside));
          // Busiest first, then by name (SQLite's binary order), as the report documents.
          const expectedByOperation = OPERATIONS.map((operation) => ({ operation, ...sums(inside.filter((row) => row.operation === operation)) }))
            .filter((group) => group.calls > 0)
            .sort((a, b) => b.calls - a.calls || (a.operation < b.operation ? -1 : 1));
          expect(report.byOperation).toEqual(expectedByOperation);

          const days = await dailySpend(env.DB, workspaceId, from, to);
          for (const day of days) {
            const ofDay = inside.filter((row) => row.createdAt.startsWith(day.day));
            expect(day).toEqual({ day: day.day, calls: ofDay.length, costCents: centsFromUnits(ofDay.reduce((sum, row) => sum + row.costUnits, 0)) });
          }
          expect(days.reduce((sum, day) => sum + day.calls, 0)).toBe(inside.length);
        }
      }),
      { numRuns: 40 },
    );
  });
});

describe('a batch of usage rows', () => {
  it('lands whole but for a row D1 refuses (a missing column), which is dropped rather than holding the batch back', async () => {
    const workspaceId = `ws_refused_${++workspaces}`;
    const row = (index: number): Partial<UsageRow> => ({
      id: `use_${workspaceId}_${index}`,
      requestId: `req_${index}`,
      organizationId: 'org_refused',
      workspaceId,
      keyId: 'key_a',
      operation: 'web.scrape',
      status: 200,
      errorCode: null,
      costUnits: 100,
      cached: false,
      latencyMs: 5,
      createdAt: new Date(START + index).toISOString(),
    });
    const { operation: _dropped, ...withoutOperation } = row(1);
    await env.DB.batch([insertUsageRows(env.DB, JSON.stringify([row(0), withoutOperation, row(2)]))]);
    const { results } = await env.DB.prepare('SELECT id FROM usage WHERE workspace_id = ? ORDER BY id').bind(workspaceId).all<{ id: string }>();
    expect(results.map((stored) => stored.id)).toEqual([`use_${workspaceId}_0`, `use_${workspaceId}_2`]);
  });
});

describe('usage rows paged by the index', () => {
  it('walks every row of the range once, newest first, and reads about a page of rows however deep the page', async () => {
    const workspaceId = `ws_pages_${++workspaces}`;
    // 3,000 rows, three to a millisecond, so pages also break between rows of the same instant.
    const rows: UsageRow[] = Array.from({ length: 3_000 }, (_, index) => ({
      id: `use_${String(index).padStart(6, '0')}_${workspaceId}`,
      requestId: `req_${index}`,
      organizationId: 'org_pages',
      workspaceId,
      keyId: 'key_a',
      operation: OPERATIONS[index % 3]!,
      status: 200,
      errorCode: null,
      costUnits: 100,
      cached: false,
      latencyMs: 5,
      createdAt: new Date(START + Math.floor(index / 3)).toISOString(),
    }));
    await env.DB.batch([insertUsageRows(env.DB, JSON.stringify(rows))]);
    // The page's statement is the batch's second: what D1 read for it, page after page.
    const pageReads: number[] = [];
    const recording = {
      prepare: (query: string) => env.DB.prepare(query),
      batch: async (statements: D1PreparedStatement[]) => {
        const results = await env.DB.batch(statements);
        pageReads.push(results[1]!.meta.rows_read);
        return results;
      },
    } as unknown as D1Database;

    const walked: string[] = [];
    let cursor: string | undefined;
    do {
      const report = await usageReport(recording, workspaceId, { from: new Date(START).toISOString(), to: new Date(START + SPAN_MS).toISOString(), limit: 100, ...(cursor ? { cursor } : {}) });
      walked.push(...report.rows.map((row) => row.id));
      cursor = report.nextCursor ?? undefined;
    } while (cursor);

    const newestFirst = [...rows].sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1)).map((row) => row.id);
    expect(walked).toEqual(newestFirst);
    expect(pageReads).toHaveLength(30);
    // The last page reads what the first does (its 101 rows and their jobs' lookups), not the 2,900 rows before it.
    expect(Math.max(...pageReads)).toBeLessThan(2 * pageReads[0]!);
  });
});
