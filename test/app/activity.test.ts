import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { AUDITED } from '../../src/app/activity';
import { buildDashboardApp } from '../../src/app';
import { ops } from '../support/api';
import { FAKE_RECEIVER } from '../fakes/webhook-receiver';
import { authorize, pkce, registerClient } from '../mcp-oauth/support';
import { describeAction } from '../../src/app/pages/activity';
import { type Person, join, signUp } from '../support/dashboard';

const activity = (person: Person, query = '') => person.json('GET', `/api/organizations/${person.organizationId}/activity${query}`);

describe("an organization's activity", () => {
  it('records who changed what, where and when, newest first, once the change succeeded', async () => {
    const owner = await signUp();
    await ops('PUT', `/organizations/${owner.organizationId}/plan`, { plan: 'team' });
    const keys = `/api/workspaces/${owner.workspaceId}/keys`;
    const key = (await owner.json('POST', keys, { name: 'billing script' })).body.data;
    expect((await owner.json('PUT', `${keys}/${key.id}/limit`, { monthlyLimitCents: 500 })).status).toBe(200);
    expect((await owner.json('POST', `${keys}/${key.id}/revoke`)).status).toBe(200);
    // Refused changes are not activity.
    expect((await owner.json('POST', keys, { name: '' })).status).toBe(400);
    expect((await owner.json('POST', `${keys}/key_000000000000000000000000/revoke`)).status).toBe(404);
    const invited = (await owner.json('POST', `/api/organizations/${owner.organizationId}/invitations`, { email: 'grace@example.com', role: 'admin' })).body.data;
    const staging = (await owner.json('POST', `/api/organizations/${owner.organizationId}/workspaces`, { name: 'Staging' })).body.data;
    expect((await owner.request('DELETE', `/api/workspaces/${staging.id}`)).status).toBe(200);

    const { status, body } = await activity(owner);
    expect(status).toBe(200);
    const actor = { id: owner.account.user.id, name: expect.any(String), email: owner.account.user.email };
    const here = { id: owner.workspaceId, name: 'Default' };
    expect(body.data.events.map(({ action, actor: who, workspace, target, detail }: any) => ({ action, who, workspace, target, detail }))).toEqual([
      { action: 'workspace.deleted', who: actor, workspace: { id: staging.id, name: 'Staging' }, target: staging.id, detail: null },
      { action: 'workspace.created', who: actor, workspace: null, target: staging.id, detail: 'Staging' },
      { action: 'member.invited', who: actor, workspace: null, target: invited.id, detail: 'grace@example.com' },
      { action: 'key.revoked', who: actor, workspace: here, target: key.id, detail: null },
      { action: 'key.limit_changed', who: actor, workspace: here, target: key.id, detail: '500 cents a month' },
      { action: 'key.created', who: actor, workspace: here, target: key.id, detail: 'billing script' },
    ]);
    expect(body.data.nextBefore).toBeNull();

    // A page at a time, by id.
    const first = (await activity(owner, '?limit=4')).body.data;
    expect(first.events).toHaveLength(4);
    const rest = (await activity(owner, `?limit=4&before=${first.nextBefore}`)).body.data;
    expect([...first.events, ...rest.events].map((event: any) => event.id)).toEqual(body.data.events.map((event: any) => event.id));
    expect(rest.nextBefore).toBeNull();

    // The page, in words, and further back by the link it gives when there is more than a page.
    const page = await (await owner.request('GET', `/w/${owner.workspaceId}/activity`)).text();
    expect(page).toContain('API key created');
    expect(page).toContain('billing script');
    expect(page).not.toContain('Older changes');
    const older = await (await owner.request('GET', `/w/${owner.workspaceId}/activity?before=${rest.events[0].id}`)).text();
    expect(older).toContain('API key created');
    expect(older).not.toContain('Workspace created');
    expect(older).toContain(`href="/w/${owner.workspaceId}/activity">Newest</a>`);
  });

  it("records an agent's stop in its workspace, an invitation accepted by who joined, and an endpoint by its host alone", async () => {
    const owner = await signUp();
    await ops('PUT', `/organizations/${owner.organizationId}/plan`, { plan: 'team' });
    const agent = (await owner.json('POST', `/api/workspaces/${owner.workspaceId}/agents`, { name: 'researcher' })).body.data;
    expect((await owner.json('POST', `/api/agents/${agent.id}/stop`)).status).toBe(200);
    const invitee = await signUp();
    const invitation = (await owner.json('POST', `/api/organizations/${owner.organizationId}/invitations`, { email: invitee.account.user.email, role: 'member' })).body.data;
    expect((await invitee.json('POST', `/api/invitations/${invitation.token}/accept`)).status).toBe(200);
    await env.DB.prepare("INSERT INTO activity (organization_id, action, created_at) VALUES ('org_elsewhere', 'key.created', ?)").bind(new Date().toISOString()).run();
    const hook = `${FAKE_RECEIVER}/ok/secret-path-${crypto.randomUUID()}`;
    const endpoint = await owner.json('POST', `/api/workspaces/${owner.workspaceId}/webhook-endpoints`, { url: hook, events: ['key.created'] });
    expect(endpoint.status).toBe(201);
    const rotated = await owner.json('POST', `/api/workspaces/${owner.workspaceId}/webhook-endpoints/${endpoint.body.data.id}/rotate-secret`);
    expect(rotated.status).toBe(200);

    const events = (await activity(owner)).body.data.events.map(({ action, actor, workspace, target, detail }: any) => ({ action, who: actor?.id, workspace: workspace?.id ?? null, target, detail }));
    expect(events.slice(0, 6)).toEqual([
      { action: 'webhook_endpoint.secret_rotated', who: owner.account.user.id, workspace: owner.workspaceId, target: endpoint.body.data.id, detail: null },
      { action: 'webhook_endpoint.added', who: owner.account.user.id, workspace: owner.workspaceId, target: endpoint.body.data.id, detail: new URL(hook).host },
      { action: 'member.joined', who: invitee.account.user.id, workspace: null, target: null, detail: 'member' },
      { action: 'member.invited', who: owner.account.user.id, workspace: null, target: invitation.id, detail: invitee.account.user.email },
      { action: 'agent.stopped', who: owner.account.user.id, workspace: owner.workspaceId, target: agent.id, detail: 'researcher' },
      { action: 'agent.deployed', who: owner.account.user.id, workspace: owner.workspaceId, target: agent.id, detail: 'researcher' },
    ]);
    // Neither the invitation's token nor the endpoint's path or secret is anywhere in the activity.
    for (const secret of [invitation.token, 'secret-path', endpoint.body.data.secret, rotated.body.data.secret]) expect(JSON.stringify(events)).not.toContain(secret);
  });

  it('records an MCP client given a workspace at the consent page, by its name', async () => {
    const owner = await signUp();
    const clientId = await registerClient({ client_name: 'Claude Desktop' });
    await authorize(owner, { clientId, challenge: (await pkce()).challenge });
    const [latest] = (await activity(owner)).body.data.events;
    expect(latest).toMatchObject({ action: 'oauth_client.connected', actor: { id: owner.account.user.id }, workspace: { id: owner.workspaceId }, target: clientId, detail: 'Claude Desktop' });
    expect(describeAction(latest.action)).toBe('OAuth client connected');
  });

  it('is read by owners and admins only, and says so to a member', async () => {
    const owner = await signUp();
    const [admin, member] = [await signUp(), await signUp()];
    await join(admin, owner.organizationId, 'admin');
    await join(member, owner.organizationId, 'member');
    const asOf = (person: Person) => person.json('GET', `/api/organizations/${owner.organizationId}/activity`);
    expect((await asOf(admin)).status).toBe(200);
    expect((await asOf(member)).status).toBe(403);
    expect(await (await member.request('GET', `/w/${owner.workspaceId}/activity`)).text()).toContain('Owners and admins see the organization&#39;s activity.');
    expect((await asOf(await signUp())).status).toBe(404);
  });

  it('records a change asked for again, which changes nothing, once', async () => {
    const owner = await signUp();
    await ops('PUT', `/organizations/${owner.organizationId}/plan`, { plan: 'team' });
    const keys = `/api/workspaces/${owner.workspaceId}/keys`;
    const key = (await owner.json('POST', keys, { name: 'twice' })).body.data;
    const invited = (await owner.json('POST', `/api/organizations/${owner.organizationId}/invitations`, { email: 'twice@example.com', role: 'member' })).body.data;
    const staging = (await owner.json('POST', `/api/organizations/${owner.organizationId}/workspaces`, { name: 'Staging' })).body.data;
    for (let time = 0; time < 2; time += 1) {
      expect((await owner.json('POST', `${keys}/${key.id}/revoke`)).status).toBe(200);
      expect((await owner.json('POST', `/api/organizations/${owner.organizationId}/invitations/${invited.id}/revoke`)).status).toBe(200);
      expect((await owner.request('DELETE', `/api/workspaces/${staging.id}`)).status).toBe(200);
    }
    const actions = (await activity(owner)).body.data.events.map((event: { action: string }) => event.action);
    expect(actions).toEqual(['workspace.deleted', 'invitation.revoked', 'key.revoked', 'workspace.created', 'member.invited', 'key.created']);
    // A deletion whose first request failed after marking the workspace deleted is recorded by the one that finishes it.
    const cut = (await owner.json('POST', `/api/organizations/${owner.organizationId}/workspaces`, { name: 'Cut short' })).body.data;
    await env.DB.prepare('UPDATE workspaces SET deleted_at = ? WHERE id = ?').bind(new Date().toISOString(), cut.id).run();
    expect((await owner.request('DELETE', `/api/workspaces/${cut.id}`)).status).toBe(200);
    expect((await owner.request('DELETE', `/api/workspaces/${cut.id}`)).status).toBe(200);
    const deletions = (await activity(owner)).body.data.events.filter((event: { action: string; target: string }) => event.action === 'workspace.deleted' && event.target === cut.id);
    expect(deletions).toHaveLength(1);
  });

  it('names only routes the dashboard serves, each a change (no read)', () => {
    const served = new Set(
      buildDashboardApp().routes.map((route) => `${route.method} ${route.path}`),
    );
    for (const route of Object.keys(AUDITED)) {
      expect(route.startsWith('GET ')).toBe(false);
      expect(served.has(route), route).toBe(true);
    }
  });
});
