import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import type { OrgWallet } from '../../durable-objects/org-wallet';
import { setPlan } from '../../src/services/accounts';
import { walletOf } from '../../src/services/wallet';
import { clock } from '../../src/core/clock';
import { PLAN_TABLE } from '../../src/core/plans';
import { TRIAL } from '../../src/app/trial';
import { hashPlainTrialInboxes } from '../../src/services/trial-inboxes';
import { companyByDomain, json, ops } from '../support/api';
import { type Person, signUp } from '../support/dashboard';
import { interceptedDb } from '../support/intercepted-db';

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

const DAY = 24 * 60 * 60 * 1000;

function startTrial(person: Person, organizationId = person.organizationId) {
  return person.json('POST', `/api/organizations/${organizationId}/trial`);
}

async function keyOf(person: Person) {
  return (await person.json('POST', `/api/workspaces/${person.workspaceId}/keys`, { name: 'trial' })).body.data.key as string;
}

describe('the free trial', () => {
  it('puts a new organization on the trial plan for 14 days: the very next metered call works, and the call after its end is 402', async () => {
    const owner = await signUp();
    const key = await keyOf(owner);
    expect((await companyByDomain(key, 'example.com')).status).toBe(402);

    // A clock that moves a millisecond at every read: the trial's start and end are one instant apart by its days, however time passes meanwhile.
    let now = Date.now();
    clock.now = () => now++;
    const started = await startTrial(owner);
    clock.now = realNow;
    expect(started.status).toBe(201);
    expect(started.body.data).toMatchObject({ plan: TRIAL.plan, allowanceCents: PLAN_TABLE[TRIAL.plan].allowanceCents });
    expect(Date.parse(started.body.data.endsAt) - Date.parse(started.body.data.startedAt)).toBe(14 * DAY);

    const call = await companyByDomain(key, 'example.com');
    expect(call.status).toBe(200);
    expect(((await call.json()) as any).meta.subscriptionRemainingCents).toBe(PLAN_TABLE[TRIAL.plan].allowanceCents - 1);
    expect((await owner.json('GET', '/api/me')).body.data.organizations[0].plan).toBe(TRIAL.plan);

    clock.now = () => realNow() + 14 * DAY + 1000;
    const after = await companyByDomain(key, 'other.example.com');
    expect(after.status).toBe(402);
    expect(((await after.json()) as any).error.code).toBe('SUBSCRIPTION_REQUIRED');
    expect((await owner.json('GET', '/api/me')).body.data.organizations[0].plan).toBeNull();
  });

  it('is used once, ever: a second attempt, during it, after it and after a plan change, is 409 TRIAL_ALREADY_USED', async () => {
    const owner = await signUp();
    expect((await startTrial(owner)).status).toBe(201);
    const during = await startTrial(owner);
    expect([during.status, during.body.error.code]).toEqual([409, 'TRIAL_ALREADY_USED']);

    clock.now = () => realNow() + 15 * DAY;
    expect((await startTrial(owner)).body.error.code).toBe('TRIAL_ALREADY_USED');

    await ops('PUT', `/organizations/${owner.organizationId}/plan`, { plan: null });
    expect((await startTrial(owner)).body.error.code).toBe('TRIAL_ALREADY_USED');
  });

  it('starts once when many attempts arrive together', async () => {
    const owner = await signUp();
    const answers = await Promise.all(Array.from({ length: 5 }, () => startTrial(owner)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409, 409, 409, 409]);
  });

  it.each(['before', 'after'] as const)(
    "keeps a plan bought while the trial was starting (Stripe's webhook %s the trial's claim): 409, and the plan paid for stays, in D1 and in the wallet",
    async (when) => {
      const owner = await signUp();
      const bought = () => setPlan(env, owner.organizationId, { plan: 'team' }, `evt_${when}_${owner.organizationId}`);
      const db = interceptedDb(
        (query) => query.startsWith('UPDATE organizations SET trial_started_at'),
        (bound) => ({
          run: async () => {
            if (when === 'before') await bought();
            const answer = await bound.run();
            if (when === 'after') await bought();
            return answer;
          },
        }),
      );
      const answer = await owner.json('POST', `/api/organizations/${owner.organizationId}/trial`, undefined, { bindings: { DB: db } });
      expect([answer.status, answer.body.error?.code]).toEqual([409, 'CONFLICT']);
      const row = await env.DB.prepare('SELECT plan, trial_ends_at AS trialEndsAt FROM organizations WHERE id = ?').bind(owner.organizationId).first();
      expect(row).toEqual({ plan: 'team', trialEndsAt: null });
      const terms = await runInDurableObject(walletOf(env, owner.organizationId), (wallet) => (wallet as unknown as OrgWallet).terms());
      expect(terms).toMatchObject({ plan: 'team', planEndsAt: null });
    },
  );

  it('is not for an organization already on a plan (409 CONFLICT), and only owners and admins start it', async () => {
    const paying = await signUp();
    await ops('PUT', `/organizations/${paying.organizationId}/plan`, { plan: 'team' });
    const refused = await startTrial(paying);
    expect([refused.status, refused.body.error.code]).toEqual([409, 'CONFLICT']);

    const owner = await signUp();
    await ops('PUT', `/organizations/${owner.organizationId}/plan`, { plan: 'team' });
    const invitee = await signUp();
    const invitation = await owner.json('POST', `/api/organizations/${owner.organizationId}/invitations`, { email: invitee.account.user.email });
    await invitee.json('POST', `/api/invitations/${invitation.body.data.token}/accept`);
    await ops('PUT', `/organizations/${owner.organizationId}/plan`, { plan: null });
    const byMember = await startTrial(invitee, owner.organizationId);
    expect([byMember.status, byMember.body.error.code]).toEqual([403, 'UNAUTHORIZED']);
  });

  it('ends early when a plan is bought: the plan no longer lapses at the trial\'s end', async () => {
    const owner = await signUp();
    const key = await keyOf(owner);
    await startTrial(owner);
    await ops('PUT', `/organizations/${owner.organizationId}/plan`, { plan: 'team' });
    clock.now = () => realNow() + 20 * DAY;
    expect((await companyByDomain(key, 'later.example.com')).status).toBe(200);
  });

  it('is offered on the Plans page, where every SUBSCRIPTION_REQUIRED points: a button for the owner, its end once started', async () => {
    const owner = await signUp();
    const plans = async () => (await owner.request('GET', `/w/${owner.workspaceId}/plans`)).text();
    const refusal = await companyByDomain(await keyOf(owner), 'no-plan.example.com');
    expect(refusal.status).toBe(402);
    expect((await json(refusal)).error.message).toContain(`/w/${owner.workspaceId}/plans`);

    expect(await plans()).toMatch(/<button[^>]*data-api="\/api\/organizations\/[^"]+\/trial"[^>]*>\s*Start free trial/);

    expect((await startTrial(owner)).status).toBe(201);
    const during = await plans();
    expect(during).not.toContain('Start free trial');
    expect(during).toContain(`Free trial</strong> until ${new Date(realNow() + TRIAL.days * DAY).toISOString().slice(0, 10)}`);
  });
});

describe('trial inboxes kept as addresses before digests were', () => {
  it('become their digests in the nightly run, so the inbox still cannot start a second trial; one whose digest another holds is let go', async () => {
    const [old, collided] = [await signUp(), await signUp()];
    const inbox = `plain-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const taken = `taken-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const setInbox = (person: Person, value: string) => env.DB.prepare('UPDATE organizations SET trial_inbox = ? WHERE id = ?').bind(value, person.organizationId).run();
    await setInbox(old, inbox);
    await setInbox(collided, taken);
    // A second trial from `taken` was started after digests were kept: its digest is held by another organization.
    const second = await signUp();
    await setInbox(second, `sha256:${[...new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(taken)))].map((byte) => byte.toString(16).padStart(2, '0')).join('')}`);

    expect(await hashPlainTrialInboxes(env.DB)).toBeGreaterThanOrEqual(2);
    const inboxOf = async (person: Person) => (await env.DB.prepare('SELECT trial_inbox AS inbox FROM organizations WHERE id = ?').bind(person.organizationId).first<{ inbox: string | null }>())!.inbox;
    expect(await inboxOf(old)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await inboxOf(collided)).toBeNull();
    // The inbox's owner, signed up anew, is refused the trial its address started before.
    const again = await signUp({ email: inbox });
    expect((await startTrial(again)).body.error.code).toBe('TRIAL_ALREADY_USED');
    expect(await hashPlainTrialInboxes(env.DB)).toBe(0);
  });
});
