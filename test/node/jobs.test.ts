import Papa from 'papaparse';
import { beforeAll, describe, expect, it } from 'vitest';
import { opsClient } from '../../scripts/lib/ops-client';
import { sharedStack } from './support/shared-stack';

let apiUrl: string;
let key: string;

beforeAll(async () => {
  const stack = await sharedStack();
  apiUrl = stack.urls.api!;
  const ops = opsClient(apiUrl, stack.settings.OPS_TOKEN!);
  const organizationId = (await ops.call<{ id: string }>('POST', '/ops/v1/organizations', { name: 'Jobs test', plan: 'payg' })).id;
  await ops.call('POST', `/ops/v1/organizations/${organizationId}/wallet/credit`, { purchasedCents: 100 });
  const workspaceId = (await ops.call<{ id: string }>('POST', '/ops/v1/workspaces', { organizationId, name: 'Jobs test' })).id;
  key = (await ops.call<{ key: string }>('POST', '/ops/v1/keys', { workspaceId })).key;
}, 180_000);

function api(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${apiUrl}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, ...(init.headers ?? {}) } });
}

describe('a data job on the local stack', () => {
  it('runs on the Workflow Miniflare runs for npm start, and its results download as CSV', async () => {
    const inputs = ['acme.com', 'globex.com', 'initech.com'].map((domain) => ({ domain }));
    const submitted = await api('/v1/data/agnt/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ operation: 'linkedin/get-company-by-domain', inputs }) });
    expect(submitted.status).toBe(202);
    const { id } = ((await submitted.json()) as { data: { id: string } }).data;

    let job: { status: string; counts: { succeeded: number; pending: number }; spentCents: number } | undefined;
    for (let attempt = 0; attempt < 60; attempt++) {
      job = ((await (await api(`/v1/data/agnt/jobs/${id}`)).json()) as { data: typeof job }).data;
      if (job!.status === 'succeeded' || job!.status === 'failed') break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(job).toMatchObject({ status: 'succeeded', counts: { succeeded: 3, pending: 0 }, spentCents: 3 });

    const csv = await api(`/v1/data/agnt/jobs/${id}/results`, { headers: { accept: 'text/csv' } });
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const parsed = Papa.parse<Record<string, string>>(await csv.text(), { header: true, skipEmptyLines: true });
    expect(parsed.meta.fields).toEqual(['index', 'status', 'costCents', 'errorCode', 'errorMessage', 'input', 'data']);
    expect(parsed.data.map((row) => [row.index, row.status, row.costCents, JSON.parse(row.input!).domain])).toEqual([
      ['0', 'succeeded', '1', 'acme.com'],
      ['1', 'succeeded', '1', 'globex.com'],
      ['2', 'succeeded', '1', 'initech.com'],
    ]);
  });
});
