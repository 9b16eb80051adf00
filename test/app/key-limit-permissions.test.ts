import { describe, expect, it } from 'vitest';
import { companyByDomain, credit, ops } from '../support/api';
import { dashboard, type Person, join, signUp } from '../support/dashboard';

// Issue 32 item 4: a member lifted the monthly limit an owner had set on the member's key, because the
// check was "made by me". A key's limit is a ceiling its owners and admins set; its maker may only tighten it.

/** An owner with a funded organization, an admin and a member, and a key the member made. */
async function organization() {
  const [owner, admin, member] = await Promise.all([signUp(), signUp(), signUp()]);
  await ops('PUT', `/organizations/${owner.organizationId}/plan`, { plan: 'business' });
  await credit(owner.organizationId, { purchasedCents: 100 });
  await join(admin, owner.organizationId, 'admin');
  await join(member, owner.organizationId, 'member');
  const base = `/api/workspaces/${owner.workspaceId}/keys`;
  const key = (await member.json('POST', base, { name: "member's" })).body.data as { id: string; key: string };
  const limit = (person: Person, monthlyLimitCents: number | string | null) => person.json('PUT', `${base}/${key.id}/limit`, { monthlyLimitCents });
  const limitNow = async () => (await owner.json('GET', base)).body.data.keys.find((listed: { id: string }) => listed.id === key.id).monthlyLimitCents;
  return { owner, admin, member, key, limit, limitNow };
}

describe("who may change a key's monthly limit", () => {
  it('lets a member set a limit on their own key and lower it; the very next call follows it', async () => {
    const { member, key, limit, limitNow } = await organization();
    expect((await limit(member, 50)).body.data.monthlyLimitCents).toBe(50);
    expect((await limit(member, '20')).body.data.monthlyLimitCents).toBe(20);
    expect((await limit(member, 20)).status).toBe(200);
    const closed = await limit(member, 0);
    expect([closed.status, closed.body.data.monthlyLimitCents]).toEqual([200, 0]);
    expect(await limitNow()).toBe(0);
    expect((await companyByDomain(key.key, 'one.example.com')).status).toBe(402);
  });

  it("refuses a member raising or removing their own key's limit with 403, naming the rule and the limit in force", async () => {
    const { owner, member, limit, limitNow } = await organization();
    expect((await limit(owner, 10)).status).toBe(200);

    const raised = await limit(member, 100);
    expect(raised.status).toBe(403);
    expect(raised.body.error.code).toBe('UNAUTHORIZED');
    expect(raised.body.error.message).toMatch(/^Only owners and admins can raise a key's monthly limit; you can set a limit on your own key or lower it \(now 10 cents\)\. Your role in .+ is member\.$/);

    const removed = await limit(member, null);
    expect(removed.status).toBe(403);
    expect(removed.body.error.message).toContain("Only owners and admins can remove a key's monthly limit");
    expect((await limit(member, '')).status).toBe(403);
    expect(await limitNow()).toBe(10);

    // The keys page asks the member for a figure no higher than the limit in force, and the owner for any.
    const field = async (person: Person) => {
      const html = await (await dashboard(`/w/${owner.workspaceId}/keys`, { headers: { cookie: `sluice_session=${person.cookie}` } })).text();
      return /<input id="limit-[^>]*>/.exec(html)![0];
    };
    expect(await field(member)).toMatch(/ required="" max="10"/);
    expect(await field(owner)).not.toMatch(/required|max=/);
  });

  it("lets an admin or owner raise and remove any key's limit", async () => {
    const { owner, admin, member, limit, limitNow } = await organization();
    expect((await limit(member, 5)).status).toBe(200);
    const raised = await limit(admin, 500);
    expect([raised.status, raised.body.data.monthlyLimitCents]).toEqual([200, 500]);
    expect((await limit(owner, null)).body.data.monthlyLimitCents).toBeNull();
    expect(await limitNow()).toBeNull();
  });

  it("still refuses a member another person's key, and any change to a revoked key's limit with 409", async () => {
    const { owner, member, key, limit } = await organization();
    const ownersKey = (await owner.json('POST', `/api/workspaces/${owner.workspaceId}/keys`, { name: "owner's" })).body.data;
    const others = await member.json('PUT', `/api/workspaces/${owner.workspaceId}/keys/${ownersKey.id}/limit`, { monthlyLimitCents: 1 });
    expect(others.status).toBe(403);
    expect(others.body.error.message).toContain('Only owners, admins and the person who made it');

    await member.json('POST', `/api/workspaces/${owner.workspaceId}/keys/${key.id}/revoke`);
    const revoked = await limit(member, 1);
    expect([revoked.status, revoked.body.error.code]).toEqual([409, 'CONFLICT']);
  });
});
