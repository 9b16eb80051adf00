import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { clock } from '../../src/core/clock';
import { PLAN_TABLE } from '../../src/core/plans';
import { FAKE_RESEND } from '../fakes/resend';
import { INVITATIONS_PER_INBOX, INVITATIONS_PER_INBOX_IN_ALL, INVITATIONS_PER_ORGANIZATION } from '../../src/app/invitations';
import { call, ops } from '../support/api';
import { dashboard, type Person, signUp } from '../support/dashboard';

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

function setPlan(person: Person, body: Record<string, unknown>) {
  return ops('PUT', `/organizations/${person.organizationId}/plan`, body);
}

function invite(person: Person, email: string, role = 'member', bindings?: Record<string, unknown>) {
  return person.json('POST', `/api/organizations/${person.organizationId}/invitations`, { email, role }, { bindings });
}

async function inviteeFor(owner: Person, role = 'member') {
  const invitee = await signUp();
  const invitation = await invite(owner, invitee.account.user.email, role);
  expect(invitation.status).toBe(201);
  return { invitee, invitation: invitation.body.data };
}

describe('GET /v1/plans', () => {
  it('lists the six plans with the spec\'s requests per minute, and needs no key', async () => {
    const response = await call('/v1/plans');
    expect(response.status).toBe(200);
    const { plans } = ((await response.json()) as any).data;
    expect(Object.fromEntries(plans.map((plan: any) => [plan.id, plan.requestsPerMinute]))).toEqual({ payg: 60, solo: 120, toolkit: 300, team: 300, toolkit_all_access: 600, business: 600 });
    for (const plan of plans) expect(Object.keys(plan.caps).sort()).toEqual(['agents', 'databases', 'runtimeHours', 'seats', 'webhookEvents', 'workspaces']);
  });

  it('is not rate limited: 80 calls in a minute all answer 200 with no RateLimit headers', async () => {
    const responses = await Promise.all(Array.from({ length: 80 }, () => call('/v1/plans')));
    expect(responses.map((response) => response.status)).toEqual(Array(80).fill(200));
    expect(responses[0]!.headers.get('ratelimit-limit')).toBeNull();
  });
});

describe('workspace caps', () => {
  it('needs a plan for a second workspace: 402 SUBSCRIPTION_REQUIRED', async () => {
    const owner = await signUp();
    const refused = await owner.json('POST', `/api/organizations/${owner.organizationId}/workspaces`, { name: 'Second' });
    expect(refused.status).toBe(402);
    expect(refused.body.error.code).toBe('SUBSCRIPTION_REQUIRED');
  });

  it('refuses a workspace past the plan\'s cap with 402 PLAN_LIMIT_REACHED naming the resource and used/limit; an operator override lifts it', async () => {
    const owner = await signUp();
    await setPlan(owner, { plan: 'payg' });
    const limit = PLAN_TABLE.payg.caps.workspaces;
    for (let index = 1; index < limit; index++) expect((await owner.json('POST', `/api/organizations/${owner.organizationId}/workspaces`, { name: `W${index}` })).status).toBe(201);
    const refused = await owner.json('POST', `/api/organizations/${owner.organizationId}/workspaces`, { name: 'One too many' });
    expect(refused.status).toBe(402);
    expect(refused.body.error.code).toBe('PLAN_LIMIT_REACHED');
    expect(refused.body.error.message).toContain(`${limit} workspaces`);
    expect(refused.body.error.message).toContain(`${limit} of ${limit}`);

    const overridden = await setPlan(owner, { plan: 'payg', caps: { workspaces: limit + 1 } });
    expect(overridden.body.data.caps.workspaces).toBe(limit + 1);
    expect((await owner.json('POST', `/api/organizations/${owner.organizationId}/workspaces`, { name: 'Allowed now' })).status).toBe(201);
  });

  it('holds the cap when workspaces are created at once', async () => {
    const owner = await signUp();
    await setPlan(owner, { plan: 'solo' });
    const answers = await Promise.all(Array.from({ length: 6 }, (_, index) => owner.json('POST', `/api/organizations/${owner.organizationId}/workspaces`, { name: `Race ${index}` })));
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(PLAN_TABLE.solo.caps.workspaces - 1);
    const count = await env.DB.prepare('SELECT COUNT(*) AS n FROM workspaces WHERE organization_id = ?').bind(owner.organizationId).first<{ n: number }>();
    expect(count!.n).toBe(PLAN_TABLE.solo.caps.workspaces);
  });
});

describe('seats and invitations', () => {
  it('invites by email with a link to copy, and the invitee joins and sees the workspace', async () => {
    const owner = await signUp();
    await setPlan(owner, { plan: 'team' });
    const { invitee, invitation } = await inviteeFor(owner, 'admin');
    expect(invitation).toMatchObject({ email: invitee.account.user.email, role: 'admin', status: 'pending', emailed: 'nowhere' });
    expect(invitation.acceptUrl).toBe(`${env.APP_URL}/invitations/${invitation.token}`);

    const accepted = await invitee.json('POST', `/api/invitations/${invitation.token}/accept`);
    expect(accepted.status).toBe(200);
    expect(accepted.body.data).toMatchObject({ organizationId: owner.organizationId, role: 'admin' });
    const me = await invitee.json('GET', '/api/me');
    expect(me.body.data.organizations).toContainEqual(expect.objectContaining({ id: owner.organizationId, role: 'admin', workspaces: [expect.objectContaining({ id: owner.workspaceId })] }));
    expect((await invitee.json('GET', `/api/workspaces/${owner.workspaceId}/keys`)).status).toBe(200);
  });

  it('refuses an invitation past the seats (members plus pending invitations) with 402 SEAT_LIMIT_REACHED', async () => {
    const owner = await signUp();
    await setPlan(owner, { plan: 'payg' });
    const seats = PLAN_TABLE.payg.caps.seats;
    for (let index = 1; index < seats; index++) expect((await invite(owner, `seat${index}-${crypto.randomUUID()}@example.com`)).status).toBe(201);
    const refused = await invite(owner, `one-more-${crypto.randomUUID()}@example.com`);
    expect(refused.status).toBe(402);
    expect(refused.body.error.code).toBe('SEAT_LIMIT_REACHED');
    expect(refused.body.error.message).toContain(`${seats} of ${seats}`);
    const members = await owner.json('GET', `/api/organizations/${owner.organizationId}/members`);
    expect(members.body.data.seats).toEqual({ used: seats, limit: seats });
  });

  it(`sends at most ${INVITATIONS_PER_INBOX.limit} invitations a day from one organization to one inbox and ${INVITATIONS_PER_ORGANIZATION.limit} in all, withdrawn ones counted: 429 with Retry-After`, { timeout: 60_000 }, async () => {
    const owner = await signUp();
    await setPlan(owner, { plan: 'payg' });
    const withdrawn = async (email: string) => {
      const sent = await invite(owner, email);
      expect(sent.status).toBe(201);
      expect((await owner.json('POST', `/api/organizations/${owner.organizationId}/invitations/${sent.body.data.id}/revoke`)).status).toBe(200);
    };
    // Invite, withdraw (the seat comes back), invite again: the same inbox.
    const inbox = `inbox-${crypto.randomUUID()}@example.com`;
    for (let round = 0; round < INVITATIONS_PER_INBOX.limit; round++) await withdrawn(inbox);
    const refused = await invite(owner, inbox);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'RATE_LIMITED', message: expect.stringContaining('invitations this organization sent to this address today') });
    expect(refused.body.error.retryAfter).toBeGreaterThan(23 * 3600);
    // Other inboxes, until the organization's day is used.
    for (let sent = INVITATIONS_PER_INBOX.limit; sent < INVITATIONS_PER_ORGANIZATION.limit; sent++) await withdrawn(`other-${sent}-${crypto.randomUUID()}@example.com`);
    const past = await invite(owner, `one-more-${crypto.randomUUID()}@example.com`);
    expect(past.status).toBe(429);
    expect(past.body.error.message).toContain('invitations sent by this organization today');
    // Another organization invites as before, the same inbox too, and a day later this one does again.
    const other = await signUp();
    await setPlan(other, { plan: 'payg' });
    expect((await invite(other, inbox)).status).toBe(201);
    clock.now = () => realNow() + INVITATIONS_PER_ORGANIZATION.windowMs + 1000;
    expect((await invite(owner, `next-day-${crypto.randomUUID()}@example.com`)).status).toBe(201);
  });

  it(`sends at most ${INVITATIONS_PER_INBOX_IN_ALL.limit} invitations a day to one inbox from all organizations together`, { timeout: 60_000 }, async () => {
    const inbox = `popular-${crypto.randomUUID()}@example.com`;
    const organizations = INVITATIONS_PER_INBOX_IN_ALL.limit / INVITATIONS_PER_INBOX.limit;
    for (let index = 0; index < organizations; index++) {
      const owner = await signUp();
      await setPlan(owner, { plan: 'payg' });
      for (let round = 0; round < INVITATIONS_PER_INBOX.limit; round++) {
        const sent = await invite(owner, inbox);
        expect(sent.status).toBe(201);
        expect((await owner.json('POST', `/api/organizations/${owner.organizationId}/invitations/${sent.body.data.id}/revoke`)).status).toBe(200);
      }
    }
    const late = await signUp();
    await setPlan(late, { plan: 'payg' });
    const refused = await invite(late, inbox);
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toContain('invitations sent to this address today');
  });

  it('frees the seat of a withdrawn invitation, whose link no longer works', async () => {
    const owner = await signUp();
    await setPlan(owner, { plan: 'solo', caps: { seats: 2 } });
    const { invitee, invitation } = await inviteeFor(owner);
    expect((await invite(owner, `blocked-${crypto.randomUUID()}@example.com`)).body.error.code).toBe('SEAT_LIMIT_REACHED');
    const withdrawn = await owner.json('POST', `/api/organizations/${owner.organizationId}/invitations/${invitation.id}/revoke`);
    expect(withdrawn.body.data.status).toBe('revoked');
    const refused = await invitee.json('POST', `/api/invitations/${invitation.token}/accept`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('CONFLICT');
    expect((await invite(owner, `now-room-${crypto.randomUUID()}@example.com`)).status).toBe(201);
  });

  it('ends the invitations of an admin made member or removed, so a link they kept lets nobody in after them', async () => {
    const owner = await signUp();
    await setPlan(owner, { plan: 'team' });
    const inviteAs = async (admin: Person) => {
      const invitee = await signUp();
      const sent = await admin.json('POST', `/api/organizations/${owner.organizationId}/invitations`, { email: invitee.account.user.email, role: 'admin' });
      expect(sent.status).toBe(201);
      return { invitee, token: sent.body.data.token as string, id: sent.body.data.id as string };
    };
    const accept = (invited: { invitee: Person; token: string }) => invited.invitee.json('POST', `/api/invitations/${invited.token}/accept`);
    const status = async (id: string) =>
      ((await owner.json('GET', `/api/organizations/${owner.organizationId}/members`)).body.data.invitations as { id: string; status: string }[]).find((invitation) => invitation.id === id)?.status;

    const demoted = await inviteeFor(owner, 'admin');
    expect((await demoted.invitee.json('POST', `/api/invitations/${demoted.invitation.token}/accept`)).status).toBe(200);
    const keptByDemoted = await inviteAs(demoted.invitee);
    expect((await owner.json('PATCH', `/api/organizations/${owner.organizationId}/members/${demoted.invitee.account.user.id}`, { role: 'member' })).status).toBe(200);
    expect(await status(keptByDemoted.id)).toBe('revoked');
    expect((await accept(keptByDemoted)).status).toBe(409);

    const removed = await inviteeFor(owner, 'admin');
    expect((await removed.invitee.json('POST', `/api/invitations/${removed.invitation.token}/accept`)).status).toBe(200);
    const keptByRemoved = await inviteAs(removed.invitee);
    expect((await owner.json('DELETE', `/api/organizations/${owner.organizationId}/members/${removed.invitee.account.user.id}`)).status).toBe(200);
    expect(await status(keptByRemoved.id)).toBe('revoked');
    expect((await accept(keptByRemoved)).status).toBe(409);

    // Accepted while the sender's role changes: the acceptance itself asks whether the sender may still invite.
    const racing = await inviteeFor(owner, 'admin');
    expect((await racing.invitee.json('POST', `/api/invitations/${racing.invitation.token}/accept`)).status).toBe(200);
    const keptByRacing = await inviteAs(racing.invitee);
    await env.DB.prepare("UPDATE memberships SET role = 'member' WHERE organization_id = ? AND user_id = ?").bind(owner.organizationId, racing.invitee.account.user.id).run();
    const refused = await accept(keptByRacing);
    expect([refused.status, refused.body.error.message]).toEqual([409, expect.stringContaining('can no longer invite')]);
    expect((await keptByRacing.invitee.json('GET', `/api/workspaces/${owner.workspaceId}/keys`)).status).toBe(404);
  });

  it('refuses the invitation to anyone signed in as another address: 403 INVITATION_EMAIL_MISMATCH', async () => {
    const owner = await signUp();
    await setPlan(owner, { plan: 'team' });
    const { invitation } = await inviteeFor(owner);
    const someoneElse = await signUp();
    const refused = await someoneElse.json('POST', `/api/invitations/${invitation.token}/accept`);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('INVITATION_EMAIL_MISMATCH');
    expect(refused.body.error.message).toContain(invitation.email);
    expect((await someoneElse.json('GET', `/api/workspaces/${owner.workspaceId}/keys`)).status).toBe(404);
  });

  it('lets an invitation be used once, and not after a week', async () => {
    const owner = await signUp();
    await setPlan(owner, { plan: 'team' });
    const first = await inviteeFor(owner);
    expect((await first.invitee.json('POST', `/api/invitations/${first.invitation.token}/accept`)).status).toBe(200);
    const again = await first.invitee.json('POST', `/api/invitations/${first.invitation.token}/accept`);
    expect([again.status, again.body.error.code]).toEqual([409, 'CONFLICT']);

    const late = await inviteeFor(owner);
    clock.now = () => realNow() + 7 * 24 * 3600_000 + 1000;
    const expired = await late.invitee.json('POST', `/api/invitations/${late.invitation.token}/accept`);
    expect([expired.status, expired.body.error.code]).toEqual([409, 'CONFLICT']);
    expect(expired.body.error.message).toContain('expired');
  });

  it('needs a plan to invite, and an owner or admin to do it', async () => {
    const owner = await signUp();
    const noPlan = await invite(owner, 'someone@example.com');
    expect([noPlan.status, noPlan.body.error.code]).toEqual([402, 'SUBSCRIPTION_REQUIRED']);
    await setPlan(owner, { plan: 'team' });
    const { invitee, invitation } = await inviteeFor(owner, 'member');
    await invitee.json('POST', `/api/invitations/${invitation.token}/accept`);
    const byMember = await invitee.json('POST', `/api/organizations/${owner.organizationId}/invitations`, { email: 'friend@example.com' });
    expect([byMember.status, byMember.body.error.code]).toEqual([403, 'UNAUTHORIZED']);
  });

  it('refuses a duplicate pending invitation and an invitation to a member with 409 CONFLICT', async () => {
    const owner = await signUp();
    await setPlan(owner, { plan: 'team' });
    const { invitation } = await inviteeFor(owner);
    expect((await invite(owner, invitation.email)).status).toBe(409);
    expect((await invite(owner, owner.account.user.email)).status).toBe(409);
  });

  it('sends the invitation through Resend when it is configured', async () => {
    const owner = await signUp();
    await setPlan(owner, { plan: 'team' });
    const address = `mailed-${crypto.randomUUID()}@example.com`;
    const invitation = await invite(owner, address, 'member', { RESEND_API_KEY: FAKE_RESEND.key, RESEND_BASE_URL: FAKE_RESEND.baseUrl });
    expect(invitation.body.data.emailed).toBe('provider');
    const sent = (await (await fetch(`${FAKE_RESEND.baseUrl}/test/sent?to=${encodeURIComponent(address)}`)).json()) as { subject: string; text: string }[];
    expect(sent).toHaveLength(1);
    expect(sent[0]!.text).toContain(invitation.body.data.acceptUrl);
  });

  it('keeps the message in the development outbox when DEV_OUTBOX=1, and shows it there', async () => {
    const owner = await signUp();
    await setPlan(owner, { plan: 'team' });
    const address = `outbox-${crypto.randomUUID()}@example.com`;
    const invitation = await invite(owner, address, 'member', { DEV_OUTBOX: '1' });
    expect(invitation.body.data.emailed).toBe('outbox');
    const page = await dashboard('/dev/outbox', {}, { DEV_OUTBOX: '1' });
    // The link is one to follow, not text to copy out of the message.
    expect(await page.text()).toContain(`<a href="${invitation.body.data.acceptUrl}">${invitation.body.data.acceptUrl}</a>`);
    expect((await dashboard('/dev/outbox')).status).toBe(404);
  });
});

describe('members', () => {
  it('lets owners and admins change roles and remove members, but never the last owner', async () => {
    const owner = await signUp();
    await setPlan(owner, { plan: 'team' });
    const admin = await inviteeFor(owner, 'admin');
    await admin.invitee.json('POST', `/api/invitations/${admin.invitation.token}/accept`);
    const member = await inviteeFor(owner, 'member');
    await member.invitee.json('POST', `/api/invitations/${member.invitation.token}/accept`);
    const base = `/api/organizations/${owner.organizationId}/members`;

    expect((await admin.invitee.json('PATCH', `${base}/${member.invitee.account.user.id}`, { role: 'admin' })).body.data.role).toBe('admin');
    const adminOnOwner = await admin.invitee.json('DELETE', `${base}/${owner.account.user.id}`);
    expect([adminOnOwner.status, adminOnOwner.body.error.code]).toEqual([403, 'UNAUTHORIZED']);
    const lastOwner = await owner.json('PATCH', `${base}/${owner.account.user.id}`, { role: 'member' });
    expect([lastOwner.status, lastOwner.body.error.code]).toEqual([409, 'CONFLICT']);

    expect((await owner.json('DELETE', `${base}/${member.invitee.account.user.id}`)).status).toBe(200);
    expect((await member.invitee.json('GET', `/api/workspaces/${owner.workspaceId}/keys`)).status).toBe(404);
  });
});
