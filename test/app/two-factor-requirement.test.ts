import { env } from 'cloudflare:workers';
import { Secret, TOTP } from 'otpauth';
import { describe, expect, it } from 'vitest';
import { clock } from '../../src/core/clock';
import { join, Person, sessionCookie, signInFresh, signUp } from '../support/dashboard';
import { authorizeRequest, connect, form, listTools, pkce, registerClient } from '../mcp-oauth/support';
import { bearer, call, ops } from '../support/api';

const PASSWORD = 'a long enough passphrase';

/** Turns two-factor sign-in on for `person`, as the Settings card does: the password, then a first code from the app. */
async function turnOnTwoFactor(person: Person): Promise<void> {
  const setup = await person.json('POST', '/api/me/two-factor/setup', { currentPassword: PASSWORD });
  expect(setup.status).toBe(200);
  const code = TOTP.generate({ secret: Secret.fromBase32(setup.body.data.secret), algorithm: 'SHA1', digits: 6, period: 30, timestamp: clock.now() });
  expect((await person.json('POST', '/api/me/two-factor/confirm', { code })).status).toBe(200);
}

const requirement = (person: Person, organizationId: string, required: unknown) => person.json('PUT', `/api/organizations/${organizationId}/two-factor-requirement`, { required });

describe('an organization that requires two-factor sign-in', () => {
  it('is set by an owner who has it on; the rest get 403, and 400 for a body that is not a boolean', async () => {
    const owner = await signUp();
    const admin = await signUp();
    await join(admin, owner.organizationId, 'admin');

    const before = await requirement(owner, owner.organizationId, true);
    expect(before).toMatchObject({ status: 409, body: { error: { message: expect.stringContaining('your own account first') } } });
    await turnOnTwoFactor(admin);
    expect((await requirement(admin, owner.organizationId, true)).status).toBe(403);
    expect((await requirement(owner, owner.organizationId, 'yes')).body.error.details).toEqual([expect.objectContaining({ field: 'required' })]);

    await turnOnTwoFactor(owner);
    expect(await requirement(owner, owner.organizationId, true)).toMatchObject({ status: 200, body: { data: { required: true, membersWithout: 0 } } });
    const activity = await owner.json('GET', `/api/organizations/${owner.organizationId}/activity`);
    expect(activity.body.data.events[0]).toMatchObject({ action: 'organization.two_factor_requirement_changed', detail: 'required of every member' });
  });

  it('shuts a member without it out of every route and page but Settings, and their MCP client, until they turn it on', async () => {
    const owner = await signUp();
    const member = await signUp();
    await join(member, owner.organizationId, 'member');
    const client = await connect(member, { workspaceId: owner.workspaceId });
    const madeKey = await member.json('POST', `/api/workspaces/${owner.workspaceId}/keys`, { name: "the member's" });
    expect(madeKey.status).toBe(201);
    expect((await listTools('/mcp', client.access_token)).status).toBe(200);

    await turnOnTwoFactor(owner);
    expect(await requirement(owner, owner.organizationId, true)).toMatchObject({ status: 200, body: { data: { required: true, membersWithout: 1 } } });
    // Owners and admins see who lacks it.
    const listed = await owner.json('GET', `/api/organizations/${owner.organizationId}/members`);
    expect(listed.body.data.members.map((one: { email: string; twoFactor: boolean }) => [one.email, one.twoFactor])).toEqual([
      [owner.account.user.email, true],
      [member.account.user.email, false],
    ]);

    for (const response of [
      await member.json('GET', `/api/workspaces/${owner.workspaceId}/keys`),
      await member.json('GET', `/api/organizations/${owner.organizationId}/members`),
      await member.json('POST', `/api/workspaces/${owner.workspaceId}/keys`, { name: 'another' }),
    ]) {
      expect(response.status).toBe(403);
      expect(response.body.error.message).toContain('requires two-factor sign-in of its members. Turn it on in Settings');
    }
    const page = await member.request('GET', `/w/${owner.workspaceId}/keys`);
    expect(page.status).toBe(403);
    const text = await page.text();
    expect(text).toContain('Two-factor sign-in required');
    expect(text).not.toContain("the member&#39;s");
    const settings = await member.request('GET', `/w/${owner.workspaceId}/settings`);
    expect(settings.status).toBe(200);
    expect(await settings.text()).toContain('workspaces show you only this page until you turn it on');
    const refused = await listTools('/mcp', client.access_token);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('requires two-factor sign-in');
    // The key they made is the workspace's: it still works.
    expect((await call('/v1/credits', bearer(madeKey.body.data.key))).status).toBe(200);

    await turnOnTwoFactor(member);
    expect((await member.json('GET', `/api/workspaces/${owner.workspaceId}/keys`)).status).toBe(200);
    expect((await member.request('GET', `/w/${owner.workspaceId}/keys`)).status).toBe(200);
    expect((await listTools('/mcp', client.access_token)).status).toBe(200);
    // And it stays on while they belong.
    const off = await member.json('DELETE', '/api/me/two-factor', { currentPassword: PASSWORD });
    expect(off).toMatchObject({ status: 409, body: { error: { message: expect.stringContaining('it stays on while you belong to it') } } });

    expect(await requirement(owner, owner.organizationId, false)).toMatchObject({ status: 200, body: { data: { required: false } } });
    expect((await member.json('DELETE', '/api/me/two-factor', { currentPassword: PASSWORD })).status).toBe(200);
    expect((await member.json('GET', `/api/workspaces/${owner.workspaceId}/keys`)).status).toBe(200);
  });

  it("refuses the member's own MCP tokens, sandbox keys and OAuth refreshes too, and signs out their other browsers once they turn it on", async () => {
    const owner = await signUp();
    const member = await signUp();
    await join(member, owner.organizationId, 'member');
    const token = (await member.json('POST', `/api/workspaces/${owner.workspaceId}/mcp-tokens`, { name: "the member's" })).body.data.key as string;
    const sandbox = (await member.json('POST', `/api/workspaces/${owner.workspaceId}/sandbox-keys`, { name: "the member's" })).body.data.key as string;
    const client = await connect(member, { workspaceId: owner.workspaceId });
    const sandboxCall = () => call('/runtime/data/linkedin/get-company-by-domain?domain=acme.example', bearer(sandbox));
    expect((await listTools('/mcp', token)).status).toBe(200);
    expect((await sandboxCall()).status).toBe(200);

    await turnOnTwoFactor(owner);
    expect((await requirement(owner, owner.organizationId, true)).status).toBe(200);
    // Said twice, it is one change.
    expect((await requirement(owner, owner.organizationId, true)).status).toBe(200);
    const changes = (await owner.json('GET', `/api/organizations/${owner.organizationId}/activity`)).body.data.events.filter((event: { action: string }) => event.action === 'organization.two_factor_requirement_changed');
    expect(changes).toHaveLength(1);

    // A key's principal is read again within 30 s of its last read (principal-cache.ts): here, a new isolate's first.
    const later = clock.now;
    clock.now = () => later() + 11 * 60_000;
    try {
      const refusedToken = await listTools('/mcp', token);
      expect(refusedToken.status).toBe(401);
      expect(refusedToken.headers.get('www-authenticate')).toContain('the person who made this credential has not turned it on');
      const refusedSandbox = await sandboxCall();
      expect(refusedSandbox.status).toBe(403);
      expect((await refusedSandbox.json()) as unknown).toMatchObject({ error: { message: expect.stringContaining('has not turned it on') } });
    } finally {
      clock.now = later;
    }
    const refreshed = await form('/oauth/token', { grant_type: 'refresh_token', refresh_token: client.refresh_token, client_id: client.clientId });
    expect(refreshed.status).toBe(400);
    expect(((await refreshed.json()) as { error: string; error_description: string }).error_description).toContain('requires two-factor sign-in');

    // A browser signed in with the password alone meanwhile is signed out when they turn it on elsewhere.
    const elsewhere = new Person(sessionCookie(await signInFresh(member.account.user.email, PASSWORD))!, member.account);
    expect((await elsewhere.json('GET', '/api/me')).status).toBe(200);
    await turnOnTwoFactor(member);
    expect((await elsewhere.json('GET', '/api/me')).status).toBe(401);
    expect((await member.json('GET', '/api/me')).status).toBe(200);
    clock.now = () => later() + 22 * 60_000;
    try {
      expect((await listTools('/mcp', token)).status).toBe(200);
      expect((await sandboxCall()).status).toBe(200);
    } finally {
      clock.now = later;
    }
  });

  it("leaves the operator's MCP tokens working: they have no maker to lack it", async () => {
    const owner = await signUp();
    const made = await ops('POST', '/keys', { workspaceId: owner.workspaceId, scope: 'workspace_mcp', name: 'by the operator' });
    await turnOnTwoFactor(owner);
    expect((await requirement(owner, owner.organizationId, true)).status).toBe(200);
    const later = clock.now;
    clock.now = () => later() + 11 * 60_000;
    try {
      expect((await listTools('/mcp', made.body.data.key)).status).toBe(200);
    } finally {
      clock.now = later;
    }
  });

  it('lets a member without it leave, or delete their account, but not remove anyone else', async () => {
    const owner = await signUp();
    const admin = await signUp();
    const leaver = await signUp();
    await join(admin, owner.organizationId, 'admin');
    await join(leaver, owner.organizationId, 'member');
    await turnOnTwoFactor(owner);
    await requirement(owner, owner.organizationId, true);
    const removing = await admin.json('DELETE', `/api/organizations/${owner.organizationId}/members/${leaver.account.user.id}`);
    expect(removing.status).toBe(403);
    expect((await leaver.json('DELETE', `/api/organizations/${owner.organizationId}/members/${leaver.account.user.id}`)).status).toBe(200);
    const deleted = await admin.json('DELETE', '/api/me', { currentPassword: PASSWORD });
    expect(deleted.status).toBe(200);
    expect(deleted.body.data.left.map((organization: { id: string }) => organization.id)).toContain(owner.organizationId);
  });

  it("leaves the member's other organizations alone, and a member's list without the column", async () => {
    const owner = await signUp();
    const member = await signUp();
    await join(member, owner.organizationId, 'member');
    await turnOnTwoFactor(owner);
    await requirement(owner, owner.organizationId, true);
    expect((await member.json('GET', `/api/workspaces/${member.workspaceId}/keys`)).status).toBe(200);
    expect((await member.request('GET', `/w/${member.workspaceId}/keys`)).status).toBe(200);
    // Listed first, the organization that shuts them out is not where the dashboard's root sends them.
    await env.DB.prepare("UPDATE memberships SET created_at = '2999-01-01T00:00:00.000Z' WHERE organization_id = ? AND user_id = ?").bind(member.organizationId, member.account.user.id).run();
    expect((await member.request('GET', '/')).headers.get('location')).toBe(`/w/${member.workspaceId}/keys`);
    // Still listed, and marked: in /api/me, the switcher, and the consent page, which offers only the workspaces it may use.
    const me = await member.json('GET', '/api/me');
    expect(me.body.data.organizations.map((one: { id: string; twoFactorRequired: boolean }) => [one.id, one.twoFactorRequired])).toEqual([
      [owner.organizationId, true],
      [member.organizationId, false],
    ]);
    expect(await (await member.request('GET', `/w/${member.workspaceId}/keys`)).text()).toContain('(two-factor sign-in required)');
    const consentPage = async () => {
      const authorized = await authorizeRequest({ client_id: await registerClient(), code_challenge: (await pkce()).challenge });
      return (await member.request('GET', new URL(authorized.headers.get('location')!).pathname + new URL(authorized.headers.get('location')!).search)).text();
    };
    const offered = (html: string) => [...html.matchAll(/<option value="([^"]+)"/g)].map((match) => match[1]);
    const shutOutConsent = await consentPage();
    expect(shutOutConsent).toContain('requires two-factor sign-in</strong> of its members, and yours is off');
    expect(shutOutConsent).toContain(`name="workspaceId" value="${member.workspaceId}"`);
    expect(shutOutConsent).not.toContain(`value="${owner.workspaceId}"`);
    await turnOnTwoFactor(member);
    expect(offered(await consentPage())).toEqual([owner.workspaceId, member.workspaceId]);
    expect((await member.request('GET', '/')).headers.get('location')).toBe(`/w/${owner.workspaceId}/keys`);
    const listed = await member.json('GET', `/api/organizations/${owner.organizationId}/members`);
    expect(listed.body.data.members.every((one: Record<string, unknown>) => !('twoFactor' in one))).toBe(true);
  });
});
