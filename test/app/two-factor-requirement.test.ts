import { env } from 'cloudflare:workers';
import { Secret, TOTP } from 'otpauth';
import { describe, expect, it } from 'vitest';
import { clock } from '../../src/core/clock';
import { type Person, signUp } from '../support/dashboard';
import { connect, listTools } from '../mcp-oauth/support';
import { bearer, call } from '../support/api';

const PASSWORD = 'a long enough passphrase';

async function join(person: Person, organizationId: string, role: 'owner' | 'admin' | 'member') {
  await env.DB.prepare('INSERT INTO memberships (organization_id, user_id, role, created_at) VALUES (?, ?, ?, ?)').bind(organizationId, person.account.user.id, role, new Date().toISOString()).run();
}

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

  it("leaves the member's other organizations alone, and a member's list without the column", async () => {
    const owner = await signUp();
    const member = await signUp();
    await join(member, owner.organizationId, 'member');
    await turnOnTwoFactor(owner);
    await requirement(owner, owner.organizationId, true);
    expect((await member.json('GET', `/api/workspaces/${member.workspaceId}/keys`)).status).toBe(200);
    expect((await member.request('GET', `/w/${member.workspaceId}/keys`)).status).toBe(200);
    await turnOnTwoFactor(member);
    const listed = await member.json('GET', `/api/organizations/${owner.organizationId}/members`);
    expect(listed.body.data.members.every((one: Record<string, unknown>) => !('twoFactor' in one))).toBe(true);
  });
});
