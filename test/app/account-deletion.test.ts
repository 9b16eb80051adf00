import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { bearer, call, ops } from '../support/api';
import { join, Person, sessionCookie, setCookies, signInFresh, signUp } from '../support/dashboard';
import { FAKE_STRIPE } from '../fakes/stripe';

const PASSWORD = 'a long enough passphrase';
const STRIPE = { STRIPE_SECRET_KEY: FAKE_STRIPE.secretKey, STRIPE_WEBHOOK_SECRET: FAKE_STRIPE.webhookSecret, STRIPE_BASE_URL: FAKE_STRIPE.baseUrl };

const deleteAccount = (person: Person, currentPassword = PASSWORD, bindings: Record<string, unknown> = STRIPE) =>
  person.json('DELETE', '/api/me', { currentPassword }, { bindings: { DEV_OUTBOX: '1', ...bindings } });
const newKey = async (person: Person, path = 'keys') => (await person.json('POST', `/api/workspaces/${person.workspaceId}/${path}`, { name: 'made' })).body.data.key as string;
const credits = (key: string) => call('/v1/credits', bearer(key));
const sandboxCall = (key: string) => call('/runtime/data/linkedin/get-company-by-domain?domain=acme.example', bearer(key));

const signIn = (email: string, password = PASSWORD, headers: Record<string, string> = {}) => signInFresh(email, password, headers);

/** Someone alone in their organization, which pays by a Stripe subscription (as the checkout webhook records it), with a key that works. */
async function payingAlone() {
  const person = await signUp();
  expect((await ops('PUT', `/organizations/${person.organizationId}/plan`, { plan: 'team' })).status).toBe(200);
  const subscription = `sub_${crypto.randomUUID().replaceAll('-', '')}`;
  await fetch(`${FAKE_STRIPE.baseUrl}/test/subscriptions`, { method: 'POST', body: JSON.stringify({ id: subscription }) });
  await env.DB.prepare('UPDATE organizations SET stripe_subscription_id = ? WHERE id = ?').bind(subscription, person.organizationId).run();
  const key = await newKey(person);
  expect((await credits(key)).status).toBe(200);
  return { person, subscription, key };
}

async function subscriptionStatus(id: string): Promise<string | undefined> {
  const all = (await (await fetch(`${FAKE_STRIPE.baseUrl}/test/subscriptions`)).json()) as { id: string; status: string }[];
  return all.find((subscription) => subscription.id === id)?.status;
}

/** An owner on a plan with seats, and a member who accepted an invitation into the owner's organization. */
async function ownerAndMember(): Promise<{ owner: Person; member: Person }> {
  const owner = await signUp();
  await ops('PUT', `/organizations/${owner.organizationId}/plan`, { plan: 'team' });
  const member = await signUp();
  const invitation = await owner.json('POST', `/api/organizations/${owner.organizationId}/invitations`, { email: member.account.user.email, role: 'member' });
  expect((await member.json('POST', `/api/invitations/${invitation.body.data.token}/accept`)).status).toBe(200);
  return { owner, member };
}

/**
 * The tests' D1, where `joiner` becomes a member of `organizationId` just before the first batch after a statement
 * beginning with `prefix` is prepared runs: an invitation accepted at that moment of a deletion.
 */
function joiningBefore(prefix: string, joiner: Person, organizationId: string): D1Database {
  let armed = false;
  return new Proxy(env.DB, {
    get(target, property) {
      if (property === 'prepare') {
        return (query: string) => {
          if (query.startsWith(prefix)) armed = true;
          return target.prepare(query);
        };
      }
      if (property === 'batch') {
        return async (statements: D1PreparedStatement[]) => {
          if (armed) {
            armed = false;
            await join(joiner, organizationId, 'member');
          }
          return target.batch(statements);
        };
      }
      const value = Reflect.get(target, property);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('deleting an account', () => {
  it('closes the organization its person was alone in: the subscription cancelled, keys refused, the address erased and free again', async () => {
    const { person, subscription, key } = await payingAlone();
    const email = person.account.user.email;
    const invited = await person.json('POST', `/api/organizations/${person.organizationId}/invitations`, { email: `later-${crypto.randomUUID().slice(0, 8)}@example.com`, role: 'member' });
    // Another browser signed in, and a reset link on its way: neither outlives the account.
    const elsewhere = await signIn(email);
    expect(elsewhere.status).toBe(200);
    const otherBrowser = sessionCookie(elsewhere)!;
    await person.json('POST', '/api/auth/password-reset', { email }, { bindings: { DEV_OUTBOX: '1' } });
    const resetLink = await env.DB.prepare("SELECT body FROM email_outbox WHERE recipient = ? AND subject LIKE 'Reset your Sluice password%' ORDER BY rowid DESC LIMIT 1").bind(email).first<{ body: string }>();
    const resetToken = /token=([0-9a-f]+)/.exec(resetLink!.body)![1];

    const deleted = await deleteAccount(person);
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toMatchObject({ deleted: true, closed: [{ id: person.organizationId }], left: [] });

    expect(await subscriptionStatus(subscription)).toBe('canceled');
    expect((await credits(key)).status).toBe(401);
    const organization = await env.DB.prepare('SELECT plan, closed_at AS closedAt, stripe_subscription_id AS subscription FROM organizations WHERE id = ?').bind(person.organizationId).first();
    expect(organization).toMatchObject({ plan: null, closedAt: expect.any(String), subscription: null });
    const live = await env.DB.prepare('SELECT COUNT(*) AS n FROM workspaces WHERE organization_id = ? AND deleted_at IS NULL').bind(person.organizationId).first<{ n: number }>();
    expect(live!.n).toBe(0);
    // Its pending invitation opens nothing any more.
    expect(invited.status).toBe(201);
    const newcomer = await signUp({ email: invited.body.data.email });
    expect((await newcomer.json('POST', `/api/invitations/${invited.body.data.token}/accept`)).status).not.toBe(200);

    // Signed out, and the account is no one's: its address and name erased, its password matching nothing.
    expect((await person.json('GET', '/api/me')).status).toBe(401);
    expect((await new Person(otherBrowser, person.account).json('GET', '/api/me')).status).toBe(401);
    expect((await signIn(email)).status).toBe(401);
    const reset = await person.json('POST', '/api/auth/password-reset/confirm', { token: resetToken, password: 'another long passphrase' });
    expect(reset.status).toBe(400);
    // Nothing of the person's name is left on the organization either (sign-up named it after them).
    expect((await env.DB.prepare('SELECT name FROM organizations WHERE id = ?').bind(person.organizationId).first<{ name: string }>())!.name).toBe('Closed organization');
    const row = await env.DB.prepare('SELECT email, name, password_hash AS hash, deleted_at AS deletedAt FROM users WHERE id = ?').bind(person.account.user.id).first();
    expect(row).toMatchObject({ email: `deleted:${person.account.user.id}`, name: '', hash: '', deletedAt: expect.any(String) });
    const farewell = await env.DB.prepare("SELECT body FROM email_outbox WHERE recipient = ? AND subject = 'Your Sluice account was deleted'").bind(email).first<{ body: string }>();
    expect(farewell?.body).toContain('Closed with it');
    // The address can sign up again, as a new account.
    const again = await signUp({ email });
    expect(again.account.user.id).not.toBe(person.account.user.id);
  });

  it('refuses a wrong password with 400 naming currentPassword, and changes nothing', async () => {
    const { person, subscription, key } = await payingAlone();
    const refused = await deleteAccount(person, 'not my password at all');
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [expect.objectContaining({ field: 'currentPassword' })] });
    expect((await person.json('GET', '/api/me')).status).toBe(200);
    expect((await credits(key)).status).toBe(200);
    expect(await subscriptionStatus(subscription)).toBe('active');
  });

  it('deletes nothing when Stripe cannot cancel the subscription: 503, and everything keeps working', async () => {
    const { person, subscription, key } = await payingAlone();
    // An address where no Stripe answers (the test's outbound answers 599 for a host it has no fake for).
    const refused = await deleteAccount(person, PASSWORD, { ...STRIPE, STRIPE_BASE_URL: 'https://stripe-down.fake' });
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatchObject({ code: 'PROVIDER_UNAVAILABLE', message: expect.stringContaining('the account was not deleted') });
    expect((await person.json('GET', '/api/me')).status).toBe(200);
    expect((await credits(key)).status).toBe(200);
    expect(await subscriptionStatus(subscription)).toBe('active');
    // Without Stripe settings at all, the same: the operator is needed.
    const unset = await deleteAccount(person, PASSWORD, { STRIPE_SECRET_KEY: '', STRIPE_WEBHOOK_SECRET: '' });
    expect(unset.status).toBe(503);
    expect(unset.body.error.message).toContain('STRIPE_SECRET_KEY');
    expect((await credits(key)).status).toBe(200);
    // And the organization takes invitations again at once: the closing mark went with the refusal.
    const invitee = await signUp();
    const invitation = await person.json('POST', `/api/organizations/${person.organizationId}/invitations`, { email: invitee.account.user.email, role: 'member' });
    expect((await invitee.json('POST', `/api/invitations/${invitation.body.data.token}/accept`)).status).toBe(200);
  });

  it("refuses the last owner of an organization others belong to; once another is owner, leaves it going on, with the keys the person made still working and their sandbox keys not", async () => {
    const { owner, member } = await ownerAndMember();
    const programKey = await newKey(owner);
    const sandboxKey = await newKey(owner, 'sandbox-keys');
    expect((await sandboxCall(sandboxKey)).status).toBe(200);

    const refused = await deleteAccount(owner);
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toMatch(/last owner of .*1 other member/);
    expect((await owner.json('GET', '/api/me')).status).toBe(200);

    expect((await owner.json('PATCH', `/api/organizations/${owner.organizationId}/members/${member.account.user.id}`, { role: 'owner' })).status).toBe(200);
    const deleted = await deleteAccount(owner);
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toMatchObject({ closed: [], left: [{ id: owner.organizationId }] });

    expect((await credits(programKey)).status).toBe(200);
    expect((await sandboxCall(sandboxKey)).status).toBe(401);
    const members = await member.json('GET', `/api/organizations/${owner.organizationId}/members`);
    expect(members.body.data.members.map((one: { userId: string }) => one.userId)).toEqual([member.account.user.id]);
  });

  it('stops before any money moves when someone joins just before the close begins, and refuses invitations while it closes', async () => {
    const { person, subscription } = await payingAlone();
    const joiner = await signUp();
    // A second organization the person is alone in, which the joiner joins: the first, marked in the same batch, is let go.
    const second = `org_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`;
    const at = new Date().toISOString();
    await env.DB.batch([
      env.DB.prepare("INSERT INTO organizations (id, name, created_at) VALUES (?, 'Second', ?)").bind(second, at),
      env.DB.prepare("INSERT INTO memberships (organization_id, user_id, role, created_at) VALUES (?, ?, 'owner', ?)").bind(second, person.account.user.id, at),
    ]);
    // An invitation accepted a moment before the deletion marks the organization closing.
    const joiningFirst = joiningBefore('UPDATE organizations SET closing_at = ?1', joiner, second);
    const refused = await deleteAccount(person, PASSWORD, { ...STRIPE, DB: joiningFirst });
    expect(refused.body.error.message).toContain('Someone joined Second');
    expect(refused).toMatchObject({ status: 409, body: { error: { message: expect.stringContaining('Nothing was deleted') } } });
    expect(await subscriptionStatus(subscription)).toBe('active');
    // Refused, the deletion left no mark: an invitation is accepted.
    const invitee = await signUp();
    const invitation = await person.json('POST', `/api/organizations/${person.organizationId}/invitations`, { email: invitee.account.user.email, role: 'member' });
    const first = await signUp();
    const firstInvitation = await person.json('POST', `/api/organizations/${person.organizationId}/invitations`, { email: first.account.user.email, role: 'member' });
    expect((await first.json('POST', `/api/invitations/${firstInvitation.body.data.token}/accept`)).status).toBe(200);
    await env.DB.prepare('DELETE FROM memberships WHERE organization_id = ? AND user_id = ?').bind(person.organizationId, first.account.user.id).run();

    // While an organization closes, its invitations are refused; a close abandoned ten minutes ago lets them go.
    await env.DB.prepare('UPDATE organizations SET closing_at = ? WHERE id = ?').bind(new Date(Date.now() - 60_000).toISOString(), person.organizationId).run();
    const accept = () => invitee.json('POST', `/api/invitations/${invitation.body.data.token}/accept`);
    expect(await accept()).toMatchObject({ status: 409, body: { error: { message: expect.stringContaining('is closing') } } });
    await env.DB.prepare('UPDATE organizations SET closing_at = ? WHERE id = ?').bind(new Date(Date.now() - 11 * 60_000).toISOString(), person.organizationId).run();
    expect((await accept()).status).toBe(200);
  });

  it('keeps the organization and its wallet open when someone joins it during the close: 409, and credit is taken again', async () => {
    const person = await signUp();
    const joiner = await signUp();
    // Someone accepts an invitation just before the close marks the organization closed.
    const joiningMidway = joiningBefore('UPDATE organizations SET closed_at', joiner, person.organizationId);
    const refused = await deleteAccount(person, PASSWORD, { ...STRIPE, DB: joiningMidway });
    expect(refused).toMatchObject({ status: 409, body: { error: { message: expect.stringContaining('joined') } } });
    const credited = await ops('POST', `/organizations/${person.organizationId}/wallet/credit`, { purchasedCents: 300 });
    expect(credited).toMatchObject({ status: 200, body: { data: { purchasedBalanceCents: 300 } } });
  });

  it('leaves a browser the deleted account knew unknown to a new account of the same address: it waits with everyone else', async () => {
    const person = await signUp();
    const email = person.account.user.email;
    const device = setCookies(await signIn(email)).find((cookie) => cookie.startsWith('sluice_device='))!.split(';')[0]!;
    expect((await deleteAccount(person)).status).toBe(200);
    await signUp({ email });
    // Guesses from anywhere fill the address's count; the old browser's cookie has no count of its own for the new account.
    for (let guess = 0; guess < 5; guess++) expect((await signIn(email, `wrong guess ${guess}`)).status).toBe(401);
    expect((await signIn(email, PASSWORD, { cookie: device })).status).toBe(429);
  });
});
