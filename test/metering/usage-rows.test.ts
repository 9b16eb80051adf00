import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { insertUsageRows, type UsageRow } from '../../src/core/usage';

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
