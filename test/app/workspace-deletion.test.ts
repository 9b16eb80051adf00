import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { PLAN_TABLE } from '../../src/core/plans';
import { bearer, call, credit, ops } from '../support/api';
import { Person, signUp } from '../support/dashboard';
import { storedJob } from '../jobs/support';
import { createDatabase } from '../../src/services/databases';
import { createServer } from '../../src/services/custom-mcp-servers';
import { createEndpoint, subscribedEndpoints } from '../../src/services/webhooks/endpoints';
import { deployAgent } from '../../src/services/agents';
import { finishDeletedWorkspaces } from '../../src/services/workspace-deletion';

/** Someone whose organization is on Pay as you go, with credit, and a second workspace beside the first. */
async function withSecondWorkspace() {
  const owner = await signUp();
  expect((await ops('PUT', `/organizations/${owner.organizationId}/plan`, { plan: 'payg' })).status).toBe(200);
  await credit(owner.organizationId, { purchasedCents: 100 });
  const second = await owner.json('POST', `/api/organizations/${owner.organizationId}/workspaces`, { name: 'Staging' });
  expect(second.status).toBe(201);
  return { owner, secondId: second.body.data.id as string };
}

const newKey = async (person: Person, workspaceId: string) => (await person.json('POST', `/api/workspaces/${workspaceId}/keys`, { name: 'program' })).body.data.key as string;
const deleteWorkspace = (person: Person, workspaceId: string) => person.json('DELETE', `/api/workspaces/${workspaceId}`);
const credits = (key: string) => call('/v1/credits', bearer(key));
const usage = (key: string) => call('/v1/usage', bearer(key));

describe('deleting a workspace', () => {
  it('refuses its keys from the answer on, even one an isolate remembers, and lets go of what it held', async () => {
    const { owner, secondId } = await withSecondWorkspace();
    const key = await newKey(owner, secondId);
    const kept = await newKey(owner, owner.workspaceId);
    expect((await owner.json('POST', `/api/workspaces/${secondId}/mcp-tokens`, { name: 'agent' })).status).toBe(201);
    const agent = (await owner.json('POST', `/api/workspaces/${secondId}/agents`, { name: 'helper' })).body.data;
    const database = (await owner.json('POST', `/api/workspaces/${secondId}/databases`, { name: 'notes' })).body.data;
    await owner.json('POST', `/api/workspaces/${secondId}/databases/query`, { databaseId: database.id, sql: 'CREATE TABLE notes (body TEXT)' });
    const job = await storedJob(3, { account: { organizationId: owner.organizationId, workspaceId: secondId } });
    // Used once, so this isolate remembers the key's principal (30 s before it reads D1 again).
    expect((await credits(key)).status).toBe(200);
    expect((await usage(key)).status).toBe(200);
    expect((await call('/runtime/agent', bearer(agent.key))).status).toBe(200);

    const deleted = await deleteWorkspace(owner, secondId);
    expect(deleted.status).toBe(200);

    for (const response of [await credits(key), await usage(key), await call('/runtime/agent', bearer(agent.key))]) expect(response.status).toBe(401);
    expect((await credits(kept)).status).toBe(200);
    const keys = await env.DB.prepare('SELECT scope, revoked_at AS revokedAt FROM api_keys WHERE workspace_id = ?').bind(secondId).all<{ scope: string; revokedAt: string | null }>();
    expect(keys.results.map((row) => row.scope).sort()).toEqual(['agent', 'workspace', 'workspace_mcp']);
    expect(keys.results.every((row) => row.revokedAt !== null)).toBe(true);
    expect((await env.DB.prepare('SELECT status FROM agents WHERE id = ?').bind(agent.id).first<{ status: string }>())!.status).toBe('stopped');
    expect(await env.DB.prepare('SELECT id FROM workspace_databases WHERE id = ?').bind(database.id).first()).toBeNull();
    expect((await env.DB.prepare('SELECT status FROM data_jobs WHERE id = ?').bind(job.id).first<{ status: string }>())!.status).toBe('cancelled');

    // Gone from every page and list, and from the plan's count.
    const me = await owner.json('GET', '/api/me');
    expect(me.body.data.organizations[0].workspaces.map((workspace: { id: string }) => workspace.id)).toEqual([owner.workspaceId]);
    expect((await owner.request('GET', `/w/${secondId}/keys`)).status).toBe(404);
    expect((await owner.json('POST', `/api/workspaces/${secondId}/keys`, { name: 'late' })).status).toBe(404);
  });

  it("frees its place under the plan's cap", async () => {
    const { owner, secondId } = await withSecondWorkspace();
    for (let index = 2; index < PLAN_TABLE.payg.caps.workspaces; index++) {
      expect((await owner.json('POST', `/api/organizations/${owner.organizationId}/workspaces`, { name: `W${index}` })).status).toBe(201);
    }
    const full = await owner.json('POST', `/api/organizations/${owner.organizationId}/workspaces`, { name: 'One too many' });
    expect(full.status).toBe(402);
    expect(full.body.error.code).toBe('PLAN_LIMIT_REACHED');
    expect((await deleteWorkspace(owner, secondId)).status).toBe(200);
    expect((await owner.json('POST', `/api/organizations/${owner.organizationId}/workspaces`, { name: 'In its place' })).status).toBe(201);
  });

  it("refuses the organization's last workspace with 409, and its keys go on working", async () => {
    const owner = await signUp();
    await ops('PUT', `/organizations/${owner.organizationId}/plan`, { plan: 'payg' });
    const key = await newKey(owner, owner.workspaceId);
    expect((await credits(key)).status).toBe(200);
    const refused = await deleteWorkspace(owner, owner.workspaceId);
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain('at least one workspace');
    expect((await credits(key)).status).toBe(200);
    expect((await newKey(owner, owner.workspaceId))).toMatch(/^sluice_live_/);
  });

  it('is for owners and admins of its organization: a member is refused, anyone else finds nothing', async () => {
    const { owner, secondId } = await withSecondWorkspace();
    const member = await signUp();
    const invitation = await owner.json('POST', `/api/organizations/${owner.organizationId}/invitations`, { email: member.account.user.email, role: 'member' });
    expect((await member.json('POST', `/api/invitations/${invitation.body.data.token}/accept`)).status).toBe(200);
    const refused = await deleteWorkspace(member, secondId);
    expect(refused.status).toBe(403);
    const stranger = await signUp();
    expect((await deleteWorkspace(stranger, secondId)).status).toBe(404);
    expect((await stranger.json('PATCH', `/api/workspaces/${secondId}`, { name: 'Mine' })).status).toBe(404);
    expect((await owner.json('GET', '/api/me')).body.data.organizations[0].workspaces).toHaveLength(2);
  });

  it('makes nothing in it for a request that passed its checks before the deletion: each such row is refused, none is left behind', async () => {
    const { owner, secondId } = await withSecondWorkspace();
    expect((await deleteWorkspace(owner, secondId)).status).toBe(200);
    // What a request already past workspaceAccess (or a key's gate) would do next, after the deletion's sweep.
    const owned = { organizationId: owner.organizationId, workspaceId: secondId };
    const refusals = await Promise.allSettled([
      createDatabase(env, owned, 'late'),
      createServer(env.DB, { workspaceId: secondId, name: 'late', tools: [] }),
      createEndpoint(env, secondId, { url: 'https://93.184.215.14/late', events: ['credits.low'] }),
      deployAgent(env, { ...owned, name: 'late', description: null, createdBy: null }),
    ]);
    for (const refusal of refusals) expect(refusal).toMatchObject({ status: 'rejected', reason: { status: 404 } });
    expect(await subscribedEndpoints(env.DB, { organizationId: owner.organizationId }, 'credits.low')).toEqual([]);
    for (const table of ['workspace_databases', 'mcp_servers', 'webhook_endpoints', 'agents']) {
      expect(await env.DB.prepare(`SELECT id FROM ${table} WHERE workspace_id = ?`).bind(secondId).all()).toMatchObject({ results: [] });
    }
  });

  it('is finished by the nightly run when its sweep was cut short: a live key is then refused, even one an isolate remembers', async () => {
    const { owner, secondId } = await withSecondWorkspace();
    const key = await newKey(owner, secondId);
    expect((await credits(key)).status).toBe(200);
    // Marked, and nothing more: as a deletion whose sweep failed at its first step (the gate unreachable).
    await env.DB.prepare('UPDATE workspaces SET deleted_at = ? WHERE id = ?').bind(new Date().toISOString(), secondId).run();
    await env.DB.prepare("INSERT INTO connections (id, workspace_id, vendor, name, credentials_ciphertext, hint, status, created_at, last_checked_at) VALUES (?, ?, 'firecrawl', 'left', 'x', '…1234', 'ok', ?, ?)")
      .bind(`con_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`, secondId, new Date().toISOString(), new Date().toISOString())
      .run();
    expect(await finishDeletedWorkspaces(env, 1_000)).toBeGreaterThanOrEqual(1);
    expect((await credits(key)).status).toBe(401);
    expect(await env.DB.prepare('SELECT id FROM connections WHERE workspace_id = ?').bind(secondId).all()).toMatchObject({ results: [] });
    expect(await env.DB.prepare('SELECT id FROM api_keys WHERE workspace_id = ? AND revoked_at IS NULL').bind(secondId).all()).toMatchObject({ results: [] });
    // Nothing is left of it for another night.
    const again = await env.DB.prepare('SELECT COUNT(*) AS n FROM workspaces WHERE id = ?').bind(secondId).first<{ n: number }>();
    expect(again!.n).toBe(1);
    expect(await finishDeletedWorkspaces(env, 1_000)).toBe(0);
  });

  it('can be asked again, which finishes the deletion and answers the same', async () => {
    const { owner, secondId } = await withSecondWorkspace();
    expect((await deleteWorkspace(owner, secondId)).status).toBe(200);
    expect((await deleteWorkspace(owner, secondId)).status).toBe(200);
  });
});

describe('renaming an organization', () => {
  it('changes its name everywhere for owners and admins; a member is refused and a stranger finds nothing', async () => {
    const { owner } = await withSecondWorkspace();
    const renamed = await owner.json('PATCH', `/api/organizations/${owner.organizationId}`, { name: 'Hamilton Labs' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({ id: owner.organizationId, name: 'Hamilton Labs', plan: 'payg' });
    expect((await owner.json('GET', '/api/me')).body.data.organizations[0].name).toBe('Hamilton Labs');
    const member = await signUp();
    const invitation = await owner.json('POST', `/api/organizations/${owner.organizationId}/invitations`, { email: member.account.user.email, role: 'member' });
    expect((await member.json('POST', `/api/invitations/${invitation.body.data.token}/accept`)).status).toBe(200);
    expect((await member.json('PATCH', `/api/organizations/${owner.organizationId}`, { name: 'Mine now' })).status).toBe(403);
    expect((await (await signUp()).json('PATCH', `/api/organizations/${owner.organizationId}`, { name: 'Mine now' })).status).toBe(404);
    expect((await owner.json('PATCH', `/api/organizations/${owner.organizationId}`, { name: ' ' })).status).toBe(400);
  });
});

describe('renaming a workspace', () => {
  it('changes its name for owners and admins, with the name checked like a new one', async () => {
    const { owner, secondId } = await withSecondWorkspace();
    const renamed = await owner.json('PATCH', `/api/workspaces/${secondId}`, { name: 'Production' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({ id: secondId, name: 'Production', organizationId: owner.organizationId });
    const empty = await owner.json('PATCH', `/api/workspaces/${secondId}`, { name: '' });
    expect(empty.status).toBe(400);
    expect(empty.body.error.details[0].field).toBe('name');
  });
});
