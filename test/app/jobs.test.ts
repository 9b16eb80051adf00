import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { McpGateway } from '../../src/api/mcp-gateway';
import { bearer, call, credit, json, ops } from '../support/api';
import { signUp } from '../support/dashboard';
import { driveJob, jobTime } from '../jobs/support';

describe('the Jobs page and its API in the dashboard', () => {
  it('starts a job from mapped CSV rows, lists it with its progress, downloads its results as CSV, cancels; refusals name the row; another workspace reads 404', async () => {
    const time = await jobTime();
    try {
      const person = await signUp();
      const base = `/api/workspaces/${person.workspaceId}/jobs`;
      const operation = 'linkedin/get-company-by-domain';
      const noPlan = await person.json('POST', base, { operation, inputs: [{ domain: 'a.com' }] });
      expect([noPlan.status, noPlan.body.error.code]).toEqual([402, 'SUBSCRIPTION_REQUIRED']);
      expect((await person.json('POST', `/api/organizations/${person.organizationId}/trial`)).status).toBe(201);

      const invalid = await person.json('POST', base, { operation, inputs: [{ domain: 'a.com' }, { domain: '' }] });
      expect([invalid.status, invalid.body.error.details[0].field]).toEqual([400, 'inputs[1].domain']);

      const started = await person.json('POST', base, { operation, inputs: [{ domain: 'one.com' }, { domain: 'status404.two.com' }], name: 'From a sheet' });
      expect(started.status).toBe(202);
      const id = started.body.data.id;
      const job = await driveJob(id, time, (view) => view.finishedAt !== null);
      expect(job).toMatchObject({ status: 'succeeded', counts: { total: 2, succeeded: 1, failed: 1, pending: 0 } });

      const listed = await person.json('GET', base);
      expect(listed.body.data.jobs.map((entry: { id: string; counts: { succeeded: number } }) => [entry.id, entry.counts.succeeded])).toEqual([[id, 1]]);
      const page = await (await person.request('GET', `/w/${person.workspaceId}/jobs`)).text();
      expect(page).toContain(`data-job-id="${id}"`);
      expect(page).toContain('From a sheet');
      expect(page).toContain('<progress max="2" value="2"');

      const csv = await person.request('GET', `${base}/${id}/results.csv`);
      expect(csv.headers.get('content-type')).toContain('text/csv');
      const lines = (await csv.text()).trim().split('\r\n');
      expect(lines[0]).toBe('index,status,costCents,errorCode,errorMessage,input,data');
      expect(lines.slice(1).map((line) => line.split(',').slice(0, 2).join(','))).toEqual(['0,succeeded', '1,failed']);

      const long = await person.json('POST', base, { operation, inputs: Array.from({ length: 300 }, (_, index) => ({ domain: `c${index}.com` })) });
      const cancelled = await person.json('POST', `${base}/${long.body.data.id}/cancel`);
      expect([cancelled.status, cancelled.body.data.status]).toEqual([200, 'cancelled']);
      expect((await person.json('POST', `${base}/${long.body.data.id}/cancel`)).status).toBe(200);
      // The activity has each submission, and the cancel once.
      const activity = (await person.json('GET', `/api/organizations/${person.organizationId}/activity`)).body.data.events.filter((event: { action: string }) => event.action.startsWith('job.'));
      expect(activity.map(({ action, target, detail }: { action: string; target: string; detail: string | null }) => [action, target, detail])).toEqual([
        ['job.cancelled', long.body.data.id, null],
        ['job.submitted', long.body.data.id, `${operation}, 300 items`],
        ['job.submitted', id, `${operation}, 2 items`],
      ]);

      const stranger = await signUp();
      expect((await stranger.json('GET', `/api/workspaces/${person.workspaceId}/jobs`)).status).toBe(404);
      expect((await stranger.request('GET', `/api/workspaces/${stranger.workspaceId}/jobs/${id}/results.csv`)).status).toBe(404);
      expect((await stranger.json('POST', `/api/workspaces/${stranger.workspaceId}/jobs/${id}/cancel`)).status).toBe(404);
      // Same-origin: a cross-site form cannot start a job with the person's cookie.
      const crossSite = await person.request('POST', base, { operation, inputs: [{ domain: 'x.com' }] }, { headers: { origin: 'https://evil.example' } });
      expect(crossSite.status).toBe(403);
    } finally {
      await time.dispose();
    }
  });

  it("refuses, through the api worker's settings, a job this installation cannot run, and says so beside the operation", async () => {
    const person = await signUp();
    expect((await person.json('POST', `/api/organizations/${person.organizationId}/trial`)).status).toBe(201);
    const base = `/api/workspaces/${person.workspaceId}/jobs`;
    // The dashboard's API binding: the api worker's own gateway, here over settings without the vendor's key.
    const API = new McpGateway(createExecutionContext(), { ...env, LINKEDIN_API_KEY: '' });
    const job = { operation: 'linkedin/get-company-by-domain', inputs: [{ domain: 'one.com' }] };
    const refused = await person.json('POST', base, job, { bindings: { API } });
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('PROVIDER_UNAVAILABLE');
    expect(refused.body.error.message).toContain('LINKEDIN_API_KEY');
    expect((await person.json('GET', base)).body.data.jobs).toEqual([]);
    const page = await (await person.request('GET', `/w/${person.workspaceId}/jobs`, undefined, { bindings: { API } })).text();
    expect(page).toContain('linkedin/get-company-by-domain (needs LINKEDIN_API_KEY or a vendor account)');
    expect(page).toContain('>web/scrape<');
    // With the key, the same job is taken.
    const taken = await person.json('POST', base, job, { bindings: { API: new McpGateway(createExecutionContext(), env) } });
    expect(taken.status).toBe(202);
  });

  it('a job waiting for money links to the plans and credit, and the link is hidden while it runs', async () => {
    const time = await jobTime();
    try {
      const person = await signUp();
      expect((await ops('PUT', `/organizations/${person.organizationId}/plan`, { plan: 'payg' })).status).toBe(200);
      await credit(person.organizationId, { purchasedCents: 1 });
      const base = `/api/workspaces/${person.workspaceId}/jobs`;
      const started = await person.json('POST', base, { operation: 'linkedin/get-company-by-domain', inputs: [{ domain: 'one.com' }, { domain: 'two.com' }] });
      expect(started.status).toBe(202);
      await driveJob(started.body.data.id, time, (view) => view.status === 'waiting_for_credits', { follow: false });
      const page = await (await person.request('GET', `/w/${person.workspaceId}/jobs`)).text();
      const link = page.match(/<a[^>]*data-job-money[^>]*>/)?.[0];
      expect(link).toContain(`href="/w/${person.workspaceId}/plans"`);
      expect(link).not.toContain('hidden');
      expect(page.match(/<a[^>]*data-job-limit[^>]*>/)?.[0]).toContain('hidden');
      expect(page.match(/data-job-status[^>]*>([^<]*)</)?.[1]).toBe('waiting for credits');

      await credit(person.organizationId, { purchasedCents: 10 });
      await driveJob(started.body.data.id, time, (view) => view.finishedAt !== null);
      const after = await (await person.request('GET', `/w/${person.workspaceId}/jobs`)).text();
      expect(after.match(/<a[^>]*data-job-money[^>]*>/)?.[0]).toContain('hidden');
    } finally {
      await time.dispose();
    }
  });

  it("a job waiting on its submitting key's monthly limit links to the API keys, not to credit", async () => {
    const time = await jobTime();
    try {
      const person = await signUp();
      expect((await ops('PUT', `/organizations/${person.organizationId}/plan`, { plan: 'payg' })).status).toBe(200);
      await credit(person.organizationId, { purchasedCents: 100 });
      const made = await person.json('POST', `/api/workspaces/${person.workspaceId}/keys`, { name: 'batch', monthlyLimitCents: 1 });
      expect(made.status).toBe(201);
      const submitted = await call('/v1/data/agnt/jobs', bearer(made.body.data.key, { method: 'POST', body: { operation: 'linkedin/get-company-by-domain', inputs: [{ domain: 'one.com' }, { domain: 'two.com' }] } }));
      expect(submitted.status).toBe(202);
      const job = await driveJob((await json(submitted)).data.id, time, (view) => view.status === 'waiting_for_credits', { follow: false });
      expect(job.waitingOn).toBe('key_limit');
      const page = await (await person.request('GET', `/w/${person.workspaceId}/jobs`)).text();
      const limit = page.match(/<a[^>]*data-job-limit[^>]*>/)?.[0];
      expect(limit).toContain(`href="/w/${person.workspaceId}/keys"`);
      expect(limit).not.toContain('hidden');
      expect(page.match(/<a[^>]*data-job-money[^>]*>/)?.[0]).toContain('hidden');
      // Named by what it waits for, in a sentence, not the refusal's dozen lines under a badge saying "credits".
      expect(page.match(/data-job-status[^>]*>([^<]*)</)?.[1]).toBe('waiting on the key limit');
      expect(page.match(/data-job-reason[^>]*>([^<]*)</)?.[1]).toContain('monthly spend limit');
    } finally {
      await time.dispose();
    }
  });

  it("offers the workspace's databases and connections, and a job started into a table says so in its row", async () => {
    const time = await jobTime();
    try {
      const person = await signUp();
      expect((await person.json('POST', `/api/organizations/${person.organizationId}/trial`)).status).toBe(201);
      const database = await person.json('POST', `/api/workspaces/${person.workspaceId}/databases`, { name: 'results' });
      expect(database.status).toBe(201);
      const form = await (await person.request('GET', `/w/${person.workspaceId}/jobs`)).text();
      expect(form).toContain(`<option value="${database.body.data.id}">database results</option>`);
      expect(form).toContain('name="connectionId"');

      const base = `/api/workspaces/${person.workspaceId}/jobs`;
      const badTable = await person.json('POST', base, { operation: 'linkedin/get-company-by-domain', inputs: [{ domain: 'a.com' }], into: { databaseId: database.body.data.id, table: 'two words' } });
      expect([badTable.status, badTable.body.error.details[0].field]).toEqual([400, 'into.table']);
      const started = await person.json('POST', base, { operation: 'linkedin/get-company-by-domain', inputs: [{ domain: 'a.com' }], into: { databaseId: database.body.data.id, table: 'companies' } });
      expect(started.status).toBe(202);
      await driveJob(started.body.data.id, time, (view) => view.finishedAt !== null);
      const page = await (await person.request('GET', `/w/${person.workspaceId}/jobs`)).text();
      expect(page).toContain('into companies in database results');
    } finally {
      await time.dispose();
    }
  });
});
