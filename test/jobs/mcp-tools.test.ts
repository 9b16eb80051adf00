import { env } from 'cloudflare:workers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mcpCall } from '../mcp/in-isolate';
import { credit, ops, provision } from '../support/api';
import { signUp } from '../support/dashboard';
import { connect } from '../mcp-oauth/support';
import { driveJob, jobTime, type JobTime } from './support';

let time: JobTime;
beforeEach(async () => {
  time = await jobTime();
});
afterEach(async () => {
  await time.dispose();
});

describe('data jobs over MCP', () => {
  it('stops a job an MCP client connected by OAuth submitted once the client is disconnected, the items not run left pending', async () => {
    const person = await signUp();
    await ops('PUT', `/organizations/${person.organizationId}/plan`, { plan: 'payg' });
    // Money for one item: the job then waits, so the disconnection finds it running.
    await credit(person.organizationId, { purchasedCents: 1 });
    const client = await connect(person);
    const submitted = await mcpCall(client.access_token, 'sluice_jobs_submit', { operation: 'linkedin/get-company-by-domain', inputs: [{ domain: 'g1.com' }, { domain: 'g2.com' }, { domain: 'g3.com' }] });
    const id = submitted.structuredContent.data.id;
    await driveJob(id, time, (job) => job.status === 'waiting_for_credits' && job.counts.succeeded === 1, { follow: false });

    const grantId = (await env.DB.prepare('SELECT id FROM oauth_grants WHERE user_id = ?').bind(person.account.user.id).first<{ id: string }>())!.id;
    expect((await person.json('POST', `/api/workspaces/${person.workspaceId}/oauth-clients/${grantId}/revoke`)).status).toBe(200);
    await credit(person.organizationId, { purchasedCents: 100 });
    const job = await driveJob(id, time, (view) => view.finishedAt !== null);
    expect(job).toMatchObject({ status: 'failed', counts: { succeeded: 1, pending: 2 }, spentCents: 1 });
    expect(job.reason).toContain(`The MCP client that submitted this job (OAuth grant ${grantId}) was disconnected`);
  });


  it('submits with sluice_jobs_submit, follows with sluice_jobs_status and collects with sluice_jobs_results; an invalid item is refused naming it', async () => {
    const account = await provision({ plan: 'payg' });
    await credit(account.organizationId, { purchasedCents: 10 });
    const token = (await ops('POST', '/keys', { workspaceId: account.workspaceId, scope: 'workspace_mcp', name: 'mcp' })).body.data.key;

    const refused = await mcpCall(token, 'sluice_jobs_submit', { operation: 'linkedin/get-company-by-domain', inputs: [{ domain: 'a.com' }, { domain: '' }] });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused)).toContain('inputs[1].domain');

    const submitted = await mcpCall(token, 'sluice_jobs_submit', { operation: 'linkedin/get-company-by-domain', inputs: [{ domain: 'a.com' }, { domain: 'status404.b.com' }] });
    expect(submitted.isError).toBeUndefined();
    const id = submitted.structuredContent.data.id;
    expect(submitted.structuredContent.data).toMatchObject({ status: 'queued', items: 2, quotedCents: 2 });
    await driveJob(id, time, (job) => job.finishedAt !== null);

    const status = await mcpCall(token, 'sluice_jobs_status', { jobId: id });
    expect(status.structuredContent.data).toMatchObject({ status: 'succeeded', counts: { total: 2, succeeded: 1, failed: 1, pending: 0 }, spentCents: 1 });
    const results = await mcpCall(token, 'sluice_jobs_results', { jobId: id, limit: 1 });
    expect(results.structuredContent.data.items).toEqual([expect.objectContaining({ index: 0, status: 'succeeded', costCents: 1 })]);
    const rest = await mcpCall(token, 'sluice_jobs_results', { jobId: id, cursor: results.structuredContent.data.nextCursor });
    expect(rest.structuredContent.data).toMatchObject({ items: [{ index: 1, status: 'failed', error: { code: 'PROVIDER_ERROR' } }], nextCursor: null });

    const stranger = await provision({ plan: 'payg' });
    const strangerToken = (await ops('POST', '/keys', { workspaceId: stranger.workspaceId, scope: 'workspace_mcp', name: 'mcp' })).body.data.key;
    const hidden = await mcpCall(strangerToken, 'sluice_jobs_status', { jobId: id });
    expect(hidden.isError).toBe(true);
    expect(JSON.stringify(hidden)).toContain('NOT_FOUND');
  });

  it('makes one job of sluice_jobs_submit calls with one _meta.idempotency_key, as the header does on REST', async () => {
    const account = await provision({ plan: 'payg' });
    await credit(account.organizationId, { purchasedCents: 10 });
    const token = (await ops('POST', '/keys', { workspaceId: account.workspaceId, scope: 'workspace_mcp', name: 'mcp' })).body.data.key;
    const job = { operation: 'linkedin/get-company-by-domain', inputs: [{ domain: 'once.com' }] };
    const first = await mcpCall(token, 'sluice_jobs_submit', job, { meta: { idempotency_key: 'mcp-submit-1' } });
    const again = await mcpCall(token, 'sluice_jobs_submit', job, { meta: { idempotency_key: 'mcp-submit-1' } });
    expect(again.structuredContent.data.id).toBe(first.structuredContent.data.id);
    const other = await mcpCall(token, 'sluice_jobs_submit', { ...job, name: 'other' }, { meta: { idempotency_key: 'mcp-submit-1' } });
    expect(other.isError).toBe(true);
    expect(JSON.stringify(other)).toContain(`which made job ${first.structuredContent.data.id}`);
    const malformed = await mcpCall(token, 'sluice_jobs_submit', job, { meta: { idempotency_key: 42 } });
    expect(malformed.isError).toBe(true);
    expect(JSON.stringify(malformed)).toContain('_meta.idempotency_key');
    await driveJob(first.structuredContent.data.id, time, (view) => view.finishedAt !== null);
    const jobs = await env.DB.prepare('SELECT COUNT(*) AS n FROM data_jobs WHERE workspace_id = ?').bind(account.workspaceId).first<{ n: number }>();
    expect(jobs!.n).toBe(1);
  });

  it('runs as a job only what the endpoint serves: a facet refuses an operation of another group, naming it, and queues nothing', async () => {
    const account = await provision({ plan: 'payg' });
    await credit(account.organizationId, { purchasedCents: 10 });
    const token = (await ops('POST', '/keys', { workspaceId: account.workspaceId, scope: 'workspace_mcp', name: 'mcp' })).body.data.key;
    const job = { operation: 'linkedin/get-company-by-domain', inputs: [{ domain: 'facet.com' }] };
    const refused = await mcpCall(token, 'sluice_jobs_submit', job, { path: '/mcp/web' });
    expect(refused.isError).toBe(true);
    const text = (refused as unknown as { content: { text: string }[] }).content[0]!.text;
    expect(JSON.parse(text.slice(text.indexOf('\n') + 1)).error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [{ field: 'operation', location: 'body', message: 'Not served at this endpoint (data_linkedin_get_company_by_domain).' }],
    });
    const jobs = async () => (await env.DB.prepare('SELECT COUNT(*) AS n FROM data_jobs WHERE workspace_id = ?').bind(account.workspaceId).first<{ n: number }>())!.n;
    expect(await jobs()).toBe(0);
    // Its own group's facet runs it.
    const accepted = await mcpCall(token, 'sluice_jobs_submit', job, { path: '/mcp/social' });
    expect(accepted.isError).toBeUndefined();
    await driveJob(accepted.structuredContent.data.id, time, (view) => view.finishedAt !== null);
    expect(await jobs()).toBe(1);
  });

  it("sluice_jobs_submit takes connectionId and into as the REST route does, refusing a connection or a table before queueing", async () => {
    const account = await provision({ plan: 'payg' });
    await credit(account.organizationId, { purchasedCents: 10 });
    const token = (await ops('POST', '/keys', { workspaceId: account.workspaceId, scope: 'workspace_mcp', name: 'mcp' })).body.data.key;
    const job = { operation: 'linkedin/get-company-by-domain', inputs: [{ domain: 'a.com' }] };

    const connection = await mcpCall(token, 'sluice_jobs_submit', { ...job, connectionId: 'con_000000000000000000000000' });
    expect(connection.isError).toBe(true);
    expect(JSON.stringify(connection)).toContain('No connection con_000000000000000000000000');
    const database = (await mcpCall(token, 'sluice_db_create', { name: 'results' })).structuredContent.data.id;
    const table = await mcpCall(token, 'sluice_jobs_submit', { ...job, into: { databaseId: database, table: 'no spaces' } });
    expect(table.isError).toBe(true);
    expect(JSON.stringify(table)).toContain('into.table');

    const submitted = await mcpCall(token, 'sluice_jobs_submit', { ...job, into: { databaseId: database, table: 'companies' } });
    expect(submitted.structuredContent.data).toMatchObject({ status: 'queued', into: { databaseId: database, table: 'companies' }, connectionId: null });
    await driveJob(submitted.structuredContent.data.id, time, (view) => view.finishedAt !== null);
    const rows = await mcpCall(token, 'sluice_db_query', { databaseId: database, sql: "SELECT item_index, data->>'$.name' IS NOT NULL FROM companies" });
    expect(rows.structuredContent.data.rows).toEqual([[0, 1]]);
  });
});
