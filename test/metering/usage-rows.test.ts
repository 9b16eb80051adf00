import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clock } from '../../src/core/clock';
import { insertUsageRows, type UsageRow } from '../../src/core/usage';
import { companyByDomain, eventually, funded, wallet } from '../support/api';

/** A row with every optional field and flag set, and one with none of them: each column must come back as sent. */
const FULL: UsageRow = {
  id: 'use_rows_full',
  requestId: 'req_rows_full',
  organizationId: 'org_rows',
  workspaceId: 'ws_rows',
  keyId: 'key_rows',
  operation: 'linkedin.get-company-by-domain',
  status: 200,
  errorCode: null,
  costUnits: 12_345,
  cached: true,
  latencyMs: 87,
  createdAt: '2026-11-28T21:00:00.123Z',
  sandbox: true,
  connectionId: 'conn_rows',
};
const BARE: UsageRow = {
  id: 'use_rows_bare',
  requestId: 'req_rows_bare',
  organizationId: 'org_rows',
  workspaceId: 'ws_rows',
  keyId: 'key_rows_2',
  operation: 'web.scrape',
  status: 503,
  errorCode: 'PROVIDER_ERROR',
  costUnits: 0,
  cached: false,
  latencyMs: 1_500,
  createdAt: '2026-11-28T21:00:01.000Z',
};

describe('usage rows written to D1 in one statement', () => {
  it('keep every field of every row, in the batch order, and a batch sent again adds nothing', async () => {
    for (let sent = 0; sent < 2; sent++) await insertUsageRows(env.DB, JSON.stringify([FULL, BARE])).run();
    const { results } = await env.DB.prepare("SELECT * FROM usage WHERE id LIKE 'use_rows_%' ORDER BY rowid").run();
    expect(results).toEqual([
      {
        id: 'use_rows_full', request_id: 'req_rows_full', organization_id: 'org_rows', workspace_id: 'ws_rows', key_id: 'key_rows',
        operation: 'linkedin.get-company-by-domain', status: 200, error_code: null, cost_units: 12_345, cached: 1, latency_ms: 87,
        created_at: '2026-11-28T21:00:00.123Z', sandbox: 1, connection_id: 'conn_rows',
      },
      {
        id: 'use_rows_bare', request_id: 'req_rows_bare', organization_id: 'org_rows', workspace_id: 'ws_rows', key_id: 'key_rows_2',
        operation: 'web.scrape', status: 503, error_code: 'PROVIDER_ERROR', cost_units: 0, cached: 0, latency_ms: 1_500,
        created_at: '2026-11-28T21:00:01.000Z', sandbox: 0, connection_id: null,
      },
    ]);
  });
});

describe("a call's id", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('sorts after the ids of the calls before it, in D1 and in the ledger, and differs within a millisecond', async () => {
    const account = await funded(10);
    const start = Date.now();
    // Seven calls, two of them in one millisecond: random ids would come in this order once in 2,520 runs.
    const instants = [start, start + 1, start + 1, start + 2, start + 5, start + 1_000, start + 60_000];
    const now = vi.spyOn(clock, 'now');
    for (const [index, instant] of instants.entries()) {
      now.mockReturnValue(instant);
      expect((await companyByDomain(account.key, `order${index}.com`)).status).toBe(200);
    }
    now.mockRestore();

    const rows = await eventually(
      () => env.DB.prepare('SELECT id, created_at AS createdAt FROM usage WHERE workspace_id = ? ORDER BY id').bind(account.workspaceId).all<{ id: string; createdAt: string }>(),
      (result) => result.results.length === instants.length,
    );
    // Ordered by id, the rows are in the order the calls were made (their times; the two of one millisecond either way).
    expect(rows.results.map((row) => row.createdAt)).toEqual(instants.map((instant) => new Date(instant).toISOString()));
    expect(new Set(rows.results.map((row) => row.id)).size).toBe(instants.length);
    for (const row of rows.results) expect(row.id).toMatch(/^use_[0-9a-f]{36}$/);
    // The wallet's captures, in the order it applied them (the calls'), carry the same ids, their times in sorted order.
    const captures: string[] = (await wallet(account.organizationId)).ledger.filter((entry: { kind: string }) => entry.kind === 'capture').map((entry: { holdId: string }) => entry.holdId).reverse();
    expect(new Set(captures)).toEqual(new Set(rows.results.map((row) => row.id)));
    const timeOf = (id: string) => id.slice(0, 'use_'.length + 12);
    expect(captures.map(timeOf)).toEqual(rows.results.map((row) => timeOf(row.id)));
  });
});
