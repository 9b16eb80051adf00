
import { env } from 'cloudflare:workers';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { PLAN_TABLE } from '../../src/core/plans';
import { FAKE_STRIPE } from '../fakes/stripe';
import { companyByDomain, ops, wallet } from '../support/api';
import { dashboard, type Person, signUp } from '../support/dashboard';
import { interceptedDb } from '../support/intercepted-db';

const STRIPE = { STRIPE_SECRET_KEY: FAKE_STRIPE.secretKey, STRIPE_WEBHOOK_SECRET: FAKE_STRIPE.webhookSecret, STRIPE_BASE_URL: FAKE_STRIPE.baseUrl };
const stripe = new Stripe('sk_test_unused', { httpClient: Stripe.createFetchHttpClient() });
const cryptoProvider = Stripe.createSubtleCryptoProvider();

/** A webhook delivery as Stripe makes it: the event JSON and its signature header, from the package's own helper. */
async function deliver(event: Record<string, unknown>, options: { secret?: string; tamper?: boolean; bindings?: Record<string, unknown> } = {}) {
  const payload = JSON.stringify({ object: 'event', api_version: '2026-01-01', created: Math.floor(Date.now() / 1000), ...event });
  const header = await stripe.webhooks.generateTestHeaderStringAsync({ payload, secret: options.secret ?? FAKE_STRIPE.webhookSecret, cryptoProvider });
  const body = options.tamper ? payload.replace('"amount_total":', '"amount_total":9') : payload;
  const response = await dashboard('/api/billing/stripe-webhook', { method: 'POST', headers: { 'stripe-signature': header, 'content-type': 'application/json' }, body }, { ...STRIPE, ...options.bindings });
  return { status: response.status, body: (await response.json()) as any };
}

/** A database binding that fails where the webhook records an event, as a worker dying at that step would leave things. */
const dyingBeforeRecording = new Proxy(env.DB, {
  get(target, property) {
    if (property === 'prepare') {
      return (query: string) => {
        if (query.startsWith('INSERT OR IGNORE INTO stripe_events')) throw new Error('the worker died here');
        return target.prepare(query);
      };
    }
    const value = Reflect.get(target, property);
    return typeof value === 'function' ? value.bind(target) : value;
  },
});

function completedCheckout(person: Person, session: Record<string, unknown>) {
  return deliver({
    id: `evt_${crypto.randomUUID().replaceAll('-', '')}`,
    type: 'checkout.session.completed',
    data: { object: { id: 'cs_test_1', object: 'checkout.session', payment_status: 'paid', client_reference_id: person.organizationId, ...session } },
  });
}

describe('billing through Stripe', () => {
  it('says billing is not configured without the Stripe settings: 503 PROVIDER_UNAVAILABLE naming them', async () => {
    const owner = await signUp();
    const response = await owner.json('POST', `/api/organizations/${owner.organizationId}/billing/checkout`, { plan: 'team' });
    expect(response.status).toBe(503);
    expect(response.body.error).toMatchObject({ code: 'PROVIDER_UNAVAILABLE', message: expect.stringContaining('STRIPE_SECRET_KEY') });
  });

  it('shows, without Stripe, the operator command that sets the plan, told where the API is when that is not the CLI default', async () => {
    const owner = await signUp();
    const page = async (bindings: Record<string, unknown>) => (await owner.request('GET', `/w/${owner.workspaceId}/plans`, undefined, { bindings })).text();
    const command = `npm run -s ops -- plan set --org ${owner.organizationId} --plan team`;
    expect(await page({ BASE_URL: 'http://127.0.0.1:8787' })).toContain(`<code>${command}</code>`);
    expect(await page({ BASE_URL: 'http://127.0.0.1:38787' })).toContain(`<code>SLUICE_OPS_URL=http://127.0.0.1:38787 ${command}</code>`);
  });

  it("opens a Checkout for a plan's monthly price, and for a top-up, for owners and admins only", async () => {
    const owner = await signUp();
    const plan = await owner.json('POST', `/api/organizations/${owner.organizationId}/billing/checkout`, { plan: 'team' }, { bindings: STRIPE });
    expect(plan.status).toBe(200);
    expect(plan.body.data.url).toMatch(/^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_/);
    const topUp = await owner.json('POST', `/api/organizations/${owner.organizationId}/billing/top-up`, { amountCents: 2000 }, { bindings: STRIPE });
    expect(topUp.status).toBe(200);

    const made = ((await (await fetch(`${FAKE_STRIPE.baseUrl}/test/sessions`)).json()) as any[]).filter((session) => session.client_reference_id === owner.organizationId);
    expect(made).toEqual([
      expect.objectContaining({ mode: 'subscription', amount_total: PLAN_TABLE.team.priceCents, recurring_interval: 'month', metadata: { organizationId: owner.organizationId, kind: 'plan', plan: 'team' } }),
      expect.objectContaining({ mode: 'payment', amount_total: 2000, metadata: { organizationId: owner.organizationId, kind: 'top_up', cents: '2000' } }),
    ]);

    const tooSmall = await owner.json('POST', `/api/organizations/${owner.organizationId}/billing/top-up`, { amountCents: 1 }, { bindings: STRIPE });
    expect(tooSmall.body.error.details).toEqual([{ field: 'amountCents', location: 'body', message: expect.any(String) }]);
    const payg = await owner.json('POST', `/api/organizations/${owner.organizationId}/billing/checkout`, { plan: 'payg' }, { bindings: STRIPE });
    expect(payg.status).toBe(400);
  });

  it('credits a paid top-up exactly once, however often Stripe delivers the event', async () => {
    const owner = await signUp();
    const event = {
      id: `evt_${crypto.randomUUID().replaceAll('-', '')}`,
      type: 'checkout.session.completed',
      data: { object: { id: 'cs_test_topup', object: 'checkout.session', mode: 'payment', payment_status: 'paid', amount_total: 2500, metadata: { organizationId: owner.organizationId, kind: 'top_up', cents: '2500' } } },
    };
    const first = await deliver(event);
    expect(first).toMatchObject({ status: 200, body: { data: { applied: true } } });
    const replay = await deliver(event);
    expect(replay).toMatchObject({ status: 200, body: { data: { applied: false } } });
    const balance = await wallet(owner.organizationId);
    expect(balance.purchasedBalanceCents).toBe(2500);
    expect(balance.ledger.filter((entry: { kind: string }) => entry.kind === 'credit')).toHaveLength(1);
    // Credit needs a plan to be spent: the top-up put the organization on pay as you go.
    expect((await owner.json('GET', '/api/me')).body.data.organizations[0].plan).toBe('payg');
    // The activity has it once, as Stripe's: no person is named, and the page says who.
    const events = (await owner.json('GET', `/api/organizations/${owner.organizationId}/activity`)).body.data.events;
    expect(events.filter((one: { action: string }) => one.action.startsWith('billing.'))).toEqual([expect.objectContaining({ action: 'billing.credit_bought', actor: null, detail: '2500 cents' })]);
    expect(await (await owner.request('GET', `/w/${owner.workspaceId}/activity`)).text()).toContain('Stripe (billing)');
  });

  it('takes back the credit of a refunded top-up, as much as was refunded and not spent, once per running total', async () => {
    const owner = await signUp();
    const key = (await owner.json('POST', `/api/workspaces/${owner.workspaceId}/keys`, { name: 'paid' })).body.data.key;
    const paymentIntent = await topUp(owner, 1000);
    for (let call = 0; call < 3; call += 1) expect((await companyByDomain(key, `refund${call}.example`)).status).toBe(200);
    const refunded = (amountRefunded: number) =>
      ({ id: `evt_${crypto.randomUUID().replaceAll('-', '')}`, type: 'charge.refunded', data: { object: { id: 'ch_1', object: 'charge', payment_intent: paymentIntent, amount: 1000, amount_refunded: amountRefunded } } });

    // 400 cents refunded, delivered twice: taken once.
    const partly = refunded(400);
    expect((await deliver(partly)).body.data.note).toContain('Refunded 400 cents of a top-up');
    expect((await deliver(partly)).body.data.applied).toBe(false);
    expect((await wallet(owner.organizationId)).purchasedBalanceCents).toBe(1000 - 3 - 400);
    // The rest later: its running total asks 600 more, of which the 3 cents spent cannot come back; an older total
    // delivered late takes nothing.
    expect((await deliver(refunded(1000))).body.data.note).toBe('Refunded 600 cents of a top-up: 597 of 600 cents taken back (the rest was spent).');
    expect((await deliver(refunded(400))).body.data.note).toContain('taken back already');
    expect((await wallet(owner.organizationId)).purchasedBalanceCents).toBe(0);
    expect((await companyByDomain(key, 'after-refund.example')).status).toBe(402);
    const events = (await owner.json('GET', `/api/organizations/${owner.organizationId}/activity`)).body.data.events;
    expect(events.filter((one: { action: string }) => one.action === 'billing.credit_taken_back').map((one: { detail: string }) => one.detail)).toEqual([
      '597 of 600 cents taken back (the rest was spent): the payment was refunded',
      '400 cents taken back: the payment was refunded',
    ]);
  });

  it('takes back a disputed top-up while its money is withdrawn, never past what the payment bought; an inquiry takes nothing', async () => {
    const owner = await signUp();
    const paymentIntent = await topUp(owner, 2000);
    const other = await topUp(owner, 1000);
    const dispute = (type: string, id: string, payment: string, amount: number) => ({
      id: `evt_${crypto.randomUUID().replaceAll('-', '')}`,
      type,
      data: { object: { id, object: 'dispute', charge: 'ch_2', payment_intent: payment, amount, status: 'needs_response' } },
    });
    // An inquiry (or any dispute, when opened) withdraws no money: nothing is taken until Stripe withdraws it.
    expect((await deliver(dispute('charge.dispute.created', 'dp_1', paymentIntent, 2000))).body.data.note).toBe('Event charge.dispute.created is not used.');
    const withdrawn = dispute('charge.dispute.funds_withdrawn', 'dp_1', paymentIntent, 2000);
    expect((await deliver(withdrawn)).body.data.note).toBe('Payment disputed: 2000 cents taken back.');
    expect((await deliver({ ...withdrawn, id: `evt_${crypto.randomUUID().replaceAll('-', '')}` })).body.data.note).toContain('took back nothing more');
    expect((await wallet(owner.organizationId)).purchasedBalanceCents).toBe(1000);
    // Refunded on top of the dispute (Stripe's way to settle an inquiry): the payment's credit is taken once, not twice.
    const refund = { id: `evt_${crypto.randomUUID().replaceAll('-', '')}`, type: 'charge.refunded', data: { object: { id: 'ch_2', object: 'charge', payment_intent: paymentIntent, amount: 2000, amount_refunded: 2000 } } };
    expect((await deliver(refund)).body.data.note).toContain('taken back already');
    expect((await wallet(owner.organizationId)).purchasedBalanceCents).toBe(1000);
    // The dispute won: what it took comes back, and the refund told meanwhile takes it, so the payment's credit is gone once.
    expect((await deliver(dispute('charge.dispute.funds_reinstated', 'dp_1', paymentIntent, 2000))).body.data.note).toBe(
      "Dispute won: 2000 cents credited again; 2000 cents taken back for the payment's refund.",
    );
    expect((await wallet(owner.organizationId)).purchasedBalanceCents).toBe(1000);
    // Won without a refund: the credit comes back.
    const won = dispute('charge.dispute.funds_withdrawn', 'dp_2', other, 1000);
    expect((await deliver(won)).body.data.note).toBe('Payment disputed: 1000 cents taken back.');
    expect((await deliver(dispute('charge.dispute.funds_reinstated', 'dp_2', other, 1000))).body.data.note).toBe('Dispute won: 1000 cents credited again.');
    expect((await wallet(owner.organizationId)).purchasedBalanceCents).toBe(1000);

    const elsewhere = await deliver({ id: `evt_${crypto.randomUUID().replaceAll('-', '')}`, type: 'charge.refunded', data: { object: { id: 'ch_3', object: 'charge', payment_intent: 'pi_not_a_top_up', amount: 500, amount_refunded: 500 } } });
    expect(elsewhere.body.data.note).toContain('names no organization');
    expect((await wallet(owner.organizationId)).purchasedBalanceCents).toBe(1000);
  });

  it('takes a refund once when its totals arrive at once, and one reported before its checkout when the checkout arrives', async () => {
    const owner = await signUp();
    const paymentIntent = await topUp(owner, 1000);
    await topUp(owner, 1000);
    const refunded = (amountRefunded: number) => deliver({ id: `evt_${crypto.randomUUID().replaceAll('-', '')}`, type: 'charge.refunded', data: { object: { id: 'ch_4', object: 'charge', payment_intent: paymentIntent, amount: 1000, amount_refunded: amountRefunded } } });
    await Promise.all([refunded(400), refunded(1000)]);
    expect((await wallet(owner.organizationId)).purchasedBalanceCents).toBe(1000);

    // Refunded in Stripe before its checkout's event arrived: the refund names a payment not known yet, the checkout reads it.
    const early = await stripePayment(700, 700);
    expect((await refundedEarly(early)).body.data.note).toContain('names no organization');
    await topUp(owner, 700, { paymentIntent: early });
    expect((await wallet(owner.organizationId)).purchasedBalanceCents).toBe(1000);
    // A payment Stripe will not show (a key without the right to read it): the credit stands and the event is recorded.
    const unreadable = await topUp(owner, 300, { paymentIntent: `pi_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}` });
    expect(await env.DB.prepare('SELECT 1 AS known FROM stripe_payments WHERE payment_intent = ?').bind(unreadable).first()).toEqual({ known: 1 });
    expect((await wallet(owner.organizationId)).purchasedBalanceCents).toBe(1300);
  });

  it('does not refund a top-up credited before its organization closed when Stripe delivers it again after the close', async () => {
    const owner = await signUp();
    const paymentIntent = await stripePayment(800);
    const event = checkoutEvent(owner, { mode: 'payment', amount_total: 800, payment_intent: paymentIntent, metadata: { organizationId: owner.organizationId, kind: 'top_up', cents: '800' } });
    expect((await deliver(event, { bindings: { DB: dyingBeforeRecording } })).status).toBe(500);
    expect((await owner.json('DELETE', '/api/me', { currentPassword: 'a long enough passphrase' }, { bindings: STRIPE })).status).toBe(200);
    expect((await deliver(event)).body.data.note).toBe('Credited 800 cents by an earlier delivery, before the organization closed.');
    const refunds = ((await (await fetch(`${FAKE_STRIPE.baseUrl}/test/refunds`)).json()) as { payment_intent: string }[]).filter((refund) => refund.payment_intent === paymentIntent);
    expect(refunds).toEqual([]);
  });

  it('credits once when the worker died after crediting and before recording the event, and Stripe delivers it again', async () => {
    const owner = await signUp();
    const event = {
      id: `evt_${crypto.randomUUID().replaceAll('-', '')}`,
      type: 'checkout.session.completed',
      data: { object: { id: 'cs_test_crash', object: 'checkout.session', mode: 'payment', payment_status: 'paid', amount_total: 1500, metadata: { organizationId: owner.organizationId, kind: 'top_up', cents: '1500' } } },
    };
    // The first delivery's worker dies at the last step, before the event is recorded.
    const crashed = await deliver(event, { bindings: { DB: dyingBeforeRecording } });
    expect(crashed.status).toBe(500);
    expect((await wallet(owner.organizationId)).purchasedBalanceCents).toBe(1500);

    // Stripe retries: the credit is not given again, and the event is now recorded.
    const retried = await deliver(event);
    expect(retried).toMatchObject({ status: 200, body: { data: { applied: true, note: 'Credited 1500 cents (by an earlier delivery of this event).' } } });
    expect(await deliver(event)).toMatchObject({ status: 200, body: { data: { applied: false } } });
    const after = await wallet(owner.organizationId);
    expect(after.purchasedBalanceCents).toBe(1500);
    expect(after.ledger.filter((entry: { kind: string }) => entry.kind === 'credit')).toHaveLength(1);
    expect((await owner.json('GET', '/api/me')).body.data.organizations[0].plan).toBe('payg');
  });

  it('grants a paid plan its allowance once when a delivery died before recording the event and is delivered again', async () => {
    const owner = await signUp();
    const key = (await owner.json('POST', `/api/workspaces/${owner.workspaceId}/keys`, { name: 'paid' })).body.data.key;
    const event = {
      id: `evt_${crypto.randomUUID().replaceAll('-', '')}`,
      type: 'checkout.session.completed',
      data: { object: { id: 'cs_test_plan', object: 'checkout.session', mode: 'subscription', payment_status: 'paid', subscription: await stripeSubscription(), client_reference_id: owner.organizationId, metadata: { organizationId: owner.organizationId, kind: 'plan', plan: 'solo' } } },
    };
    expect((await deliver(event, { bindings: { DB: dyingBeforeRecording } })).status).toBe(500);
    // A call spends from the allowance the plan gave; a second grant of the allowance would refill it.
    expect((await companyByDomain(key, 'example.com')).status).toBe(200);
    expect((await deliver(event)).body.data.applied).toBe(true);
    const after = await wallet(owner.organizationId);
    expect(after.subscriptionRemainingCents).toBe(PLAN_TABLE.solo.allowanceCents - 1);
    expect(after.ledger.filter((entry: { kind: string }) => entry.kind === 'plan')).toHaveLength(1);
    expect((await ops('GET', `/organizations/${owner.organizationId}`)).body.data.plan).toBe('solo');
  });

  it('refuses a tampered or wrongly signed delivery with 400 and changes nothing', async () => {
    const owner = await signUp();
    const object = { id: 'cs_test_x', object: 'checkout.session', payment_status: 'paid', amount_total: 1000, metadata: { organizationId: owner.organizationId, kind: 'top_up', cents: '1000' } };
    const tampered = await deliver({ id: 'evt_tampered_1', type: 'checkout.session.completed', data: { object } }, { tamper: true });
    expect(tampered.status).toBe(400);
    expect(tampered.body.error.code).toBe('VALIDATION_ERROR');
    const wrongSecret = await deliver({ id: 'evt_tampered_2', type: 'checkout.session.completed', data: { object } }, { secret: 'whsec_someone_else' });
    expect(wrongSecret.status).toBe(400);
    expect((await wallet(owner.organizationId)).purchasedBalanceCents).toBe(0);
  });

  it('sets the plan when a subscription is paid, so the very next metered call works, and ends it when the subscription is deleted', async () => {
    const owner = await signUp();
    const key = (await owner.json('POST', `/api/workspaces/${owner.workspaceId}/keys`, { name: 'paid' })).body.data.key;
    expect((await companyByDomain(key, 'example.com')).status).toBe(402);

    const paying = await stripeSubscription();
    const paid = await completedCheckout(owner, { mode: 'subscription', subscription: paying, metadata: { organizationId: owner.organizationId, kind: 'plan', plan: 'team' } });
    expect(paid.body.data).toMatchObject({ applied: true, note: 'Plan set to team.' });
    expect((await ops('GET', `/organizations/${owner.organizationId}`)).body.data.plan).toBe('team');
    expect((await wallet(owner.organizationId)).subscriptionRemainingCents).toBe(PLAN_TABLE.team.allowanceCents);
    expect((await companyByDomain(key, 'example.com')).status).toBe(200);

    const ended = await deliver({
      id: `evt_${crypto.randomUUID().replaceAll('-', '')}`,
      type: 'customer.subscription.deleted',
      data: { object: { id: paying, object: 'subscription', metadata: { organizationId: owner.organizationId, plan: 'team' } } },
    });
    expect(ended.body.data.applied).toBe(true);
    expect((await ops('GET', `/organizations/${owner.organizationId}`)).body.data.plan).toBeNull();
    expect((await companyByDomain(key, 'example.com')).status).toBe(402);
  });

  it("sets no plan for a subscription that no longer pays when its checkout arrives (Stripe keeps no order), and ends the plan of one left unpaid", async () => {
    const owner = await signUp();
    const ended = await stripeSubscription('canceled');
    const late = await completedCheckout(owner, { mode: 'subscription', subscription: ended, metadata: { organizationId: owner.organizationId, kind: 'plan', plan: 'business' } });
    expect(late.body.data.note).toBe(`Subscription ${ended} is canceled, not paying: the plan was not set.`);
    expect(await env.DB.prepare('SELECT plan, stripe_subscription_id AS id FROM organizations WHERE id = ?').bind(owner.organizationId).first()).toEqual({ plan: null, id: null });

    // Paid, then its renewal never paid, where Stripe is set to mark it unpaid rather than cancel it.
    const { old } = await paying(owner, 'team');
    await fetch(`${FAKE_STRIPE.baseUrl}/test/subscriptions`, { method: 'POST', body: JSON.stringify({ id: old, status: 'unpaid' }) });
    const unpaid = await deliver({ id: `evt_${crypto.randomUUID().replaceAll('-', '')}`, type: 'customer.subscription.updated', data: { object: { id: old, object: 'subscription', metadata: { organizationId: owner.organizationId } } } });
    expect(unpaid.body.data).toMatchObject({ applied: true, note: 'Subscription unpaid; the organization has no plan now.' });
    expect(await env.DB.prepare('SELECT plan, stripe_subscription_id AS id FROM organizations WHERE id = ?').bind(owner.organizationId).first()).toEqual({ plan: null, id: null });
    // Cancelled in Stripe too, so a late payment of its invoice cannot revive it for nothing.
    expect(await subscription(old)).toMatchObject({ status: 'canceled', cancelled_with: { prorate: false } });
  });

  it('changes plans without two subscriptions billing: the checkout is as the same customer, and once paid the old subscription is cancelled, its unused days credited', async () => {
    const owner = await signUp();
    const { old, customer } = await paying(owner, 'solo');

    const checkout = await owner.json('POST', `/api/organizations/${owner.organizationId}/billing/checkout`, { plan: 'business' }, { bindings: STRIPE });
    expect(checkout.status).toBe(200);
    const session = (await lastSession())!;
    expect(session).toMatchObject({ customer, customer_email: null, metadata: { plan: 'business', replaces: old } });

    // The first delivery finds Stripe down: it fails (Stripe delivers again), the old subscription still active.
    const event = checkoutEvent(owner, { subscription: await stripeSubscription(), metadata: session.metadata });
    expect((await deliver(event, { bindings: { STRIPE_BASE_URL: 'https://stripe-down.fake' } })).status).toBe(500);
    expect(await subscription(old)).toMatchObject({ status: 'active' });
    // Delivered again: the old one is cancelled, prorated, though the organization already names the new one.
    const again = await deliver(event);
    expect(again.body.data).toMatchObject({ applied: true, note: expect.stringContaining(`Replaced subscription ${old} cancelled`) });
    expect(await subscription(old)).toMatchObject({ status: 'canceled', cancelled_with: { prorate: true, invoice_now: true } });
    expect((await ops('GET', `/organizations/${owner.organizationId}`)).body.data.plan).toBe('business');

    // The old subscription's end, when Stripe reports it, ends nothing: the organization pays by the new one.
    const oldEnded = await deliver({ id: `evt_${crypto.randomUUID().replaceAll('-', '')}`, type: 'customer.subscription.deleted', data: { object: { id: old, object: 'subscription', metadata: { organizationId: owner.organizationId } } } });
    expect(oldEnded.body.data.note).toContain('no longer pays with');
    expect((await ops('GET', `/organizations/${owner.organizationId}`)).body.data.plan).toBe('business');
  });

  it("counts what the period spent against a plan bought in place of a paid one, so switching buys no allowance again, and refuses buying the plan paid for", async () => {
    const owner = await signUp();
    const key = (await owner.json('POST', `/api/workspaces/${owner.workspaceId}/keys`, { name: 'paid' })).body.data.key;
    const { old } = await paying(owner, 'solo');
    for (let call = 0; call < 3; call += 1) expect((await companyByDomain(key, `spent${call}.example`)).status).toBe(200);
    expect((await wallet(owner.organizationId)).subscriptionRemainingCents).toBe(PLAN_TABLE.solo.allowanceCents - 3);

    const same = await owner.json('POST', `/api/organizations/${owner.organizationId}/billing/checkout`, { plan: 'solo' }, { bindings: STRIPE });
    expect(same).toMatchObject({ status: 409, body: { error: { message: expect.stringContaining('pays for the Solo plan already') } } });

    // Toolkit in place of Solo: its allowance less the 3 cents this period spent.
    const toolkit = await deliver(checkoutEvent(owner, { subscription: await stripeSubscription(), metadata: { organizationId: owner.organizationId, kind: 'plan', plan: 'toolkit', replaces: old } }));
    expect(toolkit.body.data.note).toContain('Plan set to toolkit.');
    expect(await subscription(old)).toMatchObject({ status: 'canceled', cancelled_with: { prorate: true } });
    expect((await wallet(owner.organizationId)).subscriptionRemainingCents).toBe(PLAN_TABLE.toolkit.allowanceCents - 3);
  });

  it('cancels a checkout overtaken by a newer one, and the subscription it replaced, rather than record a subscription that no longer pays', async () => {
    const owner = await signUp();
    const { old } = await paying(owner, 'solo');
    const [a, b] = [`sub_a_${crypto.randomUUID().slice(0, 8)}`, `sub_b_${crypto.randomUUID().slice(0, 8)}`];
    for (const id of [a, b]) await fetch(`${FAKE_STRIPE.baseUrl}/test/subscriptions`, { method: 'POST', body: JSON.stringify({ id }) });
    // A's first delivery records A and dies before recording the event; B, bought after A, replaces A.
    const first = checkoutEvent(owner, { subscription: a, metadata: { organizationId: owner.organizationId, kind: 'plan', plan: 'team', replaces: old } });
    expect((await deliver(first, { bindings: { DB: dyingBeforeRecording } })).status).toBe(500);
    const second = await deliver(checkoutEvent(owner, { subscription: b, metadata: { organizationId: owner.organizationId, kind: 'plan', plan: 'business', replaces: a } }));
    expect(second.body.data.note).toContain(`Replaced subscription ${a} cancelled`);
    // A delivered again finds A cancelled by then: it sets nothing, B's plan stays.
    const again = await deliver(first);
    expect(again.body.data.note).toBe(`Subscription ${a} is canceled, not paying: the plan was not set.`);
    expect([(await subscription(old))!.status, (await subscription(a))!.status, (await subscription(b))!.status]).toEqual(['canceled', 'canceled', 'active']);
    const organization = await env.DB.prepare('SELECT plan, stripe_subscription_id AS id FROM organizations WHERE id = ?').bind(owner.organizationId).first();
    expect(organization).toEqual({ plan: 'business', id: b });
  });

  it('cancels and refunds a plan checkout paid after its organization closed with its account', async () => {
    const owner = await signUp();
    const late = `sub_late_${crypto.randomUUID().slice(0, 8)}`;
    await fetch(`${FAKE_STRIPE.baseUrl}/test/subscriptions`, { method: 'POST', body: JSON.stringify({ id: late }) });
    const [invoice, paymentIntent] = [`in_${crypto.randomUUID().slice(0, 8)}`, `pi_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`];
    await fetch(`${FAKE_STRIPE.baseUrl}/test/invoices`, { method: 'POST', body: JSON.stringify({ id: invoice, payment_intent: paymentIntent, amount: PLAN_TABLE.team.priceCents }) });
    expect((await owner.json('DELETE', '/api/me', { currentPassword: 'a long enough passphrase' }, { bindings: STRIPE })).status).toBe(200);
    const event = checkoutEvent(owner, { subscription: late, invoice, amount_total: PLAN_TABLE.team.priceCents, metadata: { organizationId: owner.organizationId, kind: 'plan', plan: 'team' } });
    const paid = await deliver(event);
    expect(paid.body.data.note).toBe(`Subscription ${late} cancelled at once, its payment of ${PLAN_TABLE.team.priceCents} cents refunded: the organization closed, or pays by another subscription since this checkout began.`);
    // Its whole payment back, not a credit for unused days to a customer nothing will invoice again; once, however often delivered.
    expect(await subscription(late)).toMatchObject({ status: 'canceled', cancelled_with: { prorate: false } });
    await deliver({ ...event, id: `evt_${crypto.randomUUID().replaceAll('-', '')}` });
    const refunds = ((await (await fetch(`${FAKE_STRIPE.baseUrl}/test/refunds`)).json()) as { payment_intent: string }[]).filter((refund) => refund.payment_intent === paymentIntent);
    expect(refunds).toHaveLength(1);
    expect(await env.DB.prepare('SELECT plan, stripe_subscription_id AS id FROM organizations WHERE id = ?').bind(owner.organizationId).first()).toEqual({ plan: null, id: null });
  });

  it('refunds, rather than credits, a top-up paid after its organization closed, once however often Stripe delivers it', async () => {
    const owner = await signUp();
    expect((await owner.json('DELETE', '/api/me', { currentPassword: 'a long enough passphrase' }, { bindings: STRIPE })).status).toBe(200);
    const paymentIntent = `pi_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`;
    const event = {
      id: `evt_${crypto.randomUUID().replaceAll('-', '')}`,
      type: 'checkout.session.completed',
      data: { object: { id: 'cs_test_late_topup', object: 'checkout.session', mode: 'payment', payment_status: 'paid', payment_intent: paymentIntent, amount_total: 2000, metadata: { organizationId: owner.organizationId, kind: 'top_up', cents: '2000' } } },
    };
    // The worker died after refunding and before recording the event: Stripe delivers it again, and again a day later.
    expect((await deliver(event, { bindings: { DB: dyingBeforeRecording } })).status).toBe(500);
    const paid = await deliver(event);
    expect(paid.body.data.note).toContain('Refunded 2000 cents');
    // The closed organization's activity says so, as Stripe's doing, once.
    const activity = await env.DB.prepare('SELECT actor_user_id AS actor, action, detail FROM activity WHERE organization_id = ?').bind(owner.organizationId).all();
    expect(activity.results.filter((row) => String(row.action).startsWith('billing.'))).toEqual([{ actor: null, action: 'billing.payment_refunded', detail: '2000 cents: the organization had closed' }]);
    const late = await deliver({ ...event, id: `${event.id}_late` });
    expect(late).toMatchObject({ status: 200, body: { data: { note: expect.stringContaining('refunded already') } } });
    const refunds = ((await (await fetch(`${FAKE_STRIPE.baseUrl}/test/refunds`)).json()) as { payment_intent: string }[]).filter((refund) => refund.payment_intent === paymentIntent);
    expect(refunds).toEqual([expect.objectContaining({ payment_intent: paymentIntent, status: 'succeeded', metadata: { organizationId: owner.organizationId, reason: 'organization closed' } })]);
    expect((await wallet(owner.organizationId)).purchasedBalanceCents).toBe(0);
  });

  it('refunds a top-up whose organization closes between the webhook finding it open and the credit', async () => {
    const owner = await signUp();
    const close = () => owner.json('DELETE', '/api/me', { currentPassword: 'a long enough passphrase' }, { bindings: STRIPE });
    // The webhook reads the organization open; the account's deletion then runs to its end before the credit is given.
    const closingAfterTheCheck = interceptedDb(
      (query) => query.startsWith('SELECT closed_at'),
      (bound) => ({
        first: async () => {
          const open = await bound.first();
          expect((await close()).status).toBe(200);
          return open;
        },
      }),
    );
    const paymentIntent = `pi_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`;
    const event = {
      id: `evt_${crypto.randomUUID().replaceAll('-', '')}`,
      type: 'checkout.session.completed',
      data: { object: { id: 'cs_test_racing_topup', object: 'checkout.session', mode: 'payment', payment_status: 'paid', payment_intent: paymentIntent, amount_total: 1500, metadata: { organizationId: owner.organizationId, kind: 'top_up', cents: '1500' } } },
    };
    const paid = await deliver(event, { bindings: { DB: closingAfterTheCheck } });
    expect(paid).toMatchObject({ status: 200, body: { data: { note: expect.stringContaining('Refunded 1500 cents') } } });
    const refunds = ((await (await fetch(`${FAKE_STRIPE.baseUrl}/test/refunds`)).json()) as { payment_intent: string }[]).filter((refund) => refund.payment_intent === paymentIntent);
    expect(refunds).toHaveLength(1);
    expect((await wallet(owner.organizationId)).purchasedBalanceCents).toBe(0);
    // Its payment bought nothing, so its refund's own event will take nothing (of credit another payment bought).
    expect(await env.DB.prepare('SELECT 1 FROM stripe_payments WHERE payment_intent = ?').bind(paymentIntent).first()).toBeNull();
    // Nor can the operator put credit where nothing can spend it.
    const credited = await ops('POST', `/organizations/${owner.organizationId}/wallet/credit`, { purchasedCents: 500 });
    expect(credited).toMatchObject({ status: 409, body: { error: { message: expect.stringContaining('is closed') } } });
  });

  it('cancels the plan at the end of the month paid for, keeps it on request, and ends it when Stripe ends the subscription', async () => {
    const owner = await signUp();
    const { old } = await paying(owner, 'team');
    const renewal = (renews: boolean, person: Person = owner) => person.json('PUT', `/api/organizations/${owner.organizationId}/billing/renewal`, { renews }, { bindings: STRIPE });

    const cancelled = await renewal(false);
    expect(cancelled.status).toBe(200);
    const { cancel_at: cancelAt } = (await subscription(old))!;
    expect(cancelled.body.data).toEqual({ renews: false, endsAt: new Date(cancelAt! * 1000).toISOString() });
    // The plan and its calls go on meanwhile; the Plans page says until when, with the way back.
    expect((await ops('GET', `/organizations/${owner.organizationId}`)).body.data.plan).toBe('team');
    const page = await (await owner.request('GET', `/w/${owner.workspaceId}/plans`, undefined, { bindings: STRIPE })).text();
    expect(page).toContain(`ends on ${cancelled.body.data.endsAt.slice(0, 10)}`);
    expect(page).toContain('Keep Team');
    // Stripe's echo of that change moves nothing more, and is not a second entry of the activity.
    const echo = await deliver({ id: `evt_${crypto.randomUUID().replaceAll('-', '')}`, type: 'customer.subscription.updated', data: { object: { id: old, object: 'subscription', metadata: { organizationId: owner.organizationId } } } });
    expect(echo.body.data.note).toBe(`The subscription ends on ${cancelled.body.data.endsAt.slice(0, 10)}.`);

    expect((await renewal(true)).body.data).toEqual({ renews: true, endsAt: null });
    expect(await subscription(old)).toMatchObject({ cancel_at_period_end: false, cancel_at: null });
    expect(await (await owner.request('GET', `/w/${owner.workspaceId}/plans`, undefined, { bindings: STRIPE })).text()).toContain('Cancel plan');

    // Cancelled in Stripe's own dashboard, at a date of its own: the webhook says so here too (as Stripe has it, not as
    // the event says: deliveries may come in any order), and Keep clears that date as well.
    const endsAt = Math.floor(Date.now() / 1000) + 3600;
    await stripeDashboard(old, { cancel_at: String(endsAt) });
    const stale = await deliver({ id: `evt_${crypto.randomUUID().replaceAll('-', '')}`, type: 'customer.subscription.updated', data: { object: { id: old, object: 'subscription', cancel_at: null, metadata: { organizationId: owner.organizationId } } } });
    expect(stale.body.data.note).toBe(`The subscription ends on ${new Date(endsAt * 1000).toISOString().slice(0, 10)}.`);
    expect((await renewal(true)).body.data).toEqual({ renews: true, endsAt: null });
    await stripeDashboard(old, { cancel_at: String(endsAt) });
    // Then Stripe ends it, and the plan ends.
    const updated = await deliver({ id: `evt_${crypto.randomUUID().replaceAll('-', '')}`, type: 'customer.subscription.updated', data: { object: { id: old, object: 'subscription', cancel_at: endsAt, metadata: { organizationId: owner.organizationId } } } });
    expect(updated.body.data.note).toBe(`The subscription ends on ${new Date(endsAt * 1000).toISOString().slice(0, 10)}.`);
    await deliver({ id: `evt_${crypto.randomUUID().replaceAll('-', '')}`, type: 'customer.subscription.deleted', data: { object: { id: old, object: 'subscription', metadata: { organizationId: owner.organizationId } } } });
    const ended = await env.DB.prepare('SELECT plan, stripe_subscription_id AS id, plan_cancels_at AS endsAt FROM organizations WHERE id = ?').bind(owner.organizationId).first();
    expect(ended).toEqual({ plan: null, id: null, endsAt: null });
    // The activity: each change once, the person's as theirs, Stripe's as Stripe's (the second "ends" was Stripe's own
    // date again after a Keep).
    const { results } = await env.DB.prepare("SELECT action, actor_user_id IS NULL AS stripe FROM activity WHERE organization_id = ? AND (action LIKE 'billing.%' OR action LIKE 'plan.%') ORDER BY id")
      .bind(owner.organizationId)
      .all<{ action: string; stripe: number }>();
    expect(results.map((row) => `${row.action}${row.stripe ? ' (Stripe)' : ''}`)).toEqual([
      'billing.plan_paid (Stripe)',
      'plan.renewal_changed',
      'plan.renewal_changed',
      'billing.renewal_changed (Stripe)',
      'plan.renewal_changed',
      'billing.renewal_changed (Stripe)',
      'billing.plan_ended (Stripe)',
    ]);
  });

  it('refuses to cancel a plan no subscription pays for (409), and a member (403)', async () => {
    const owner = await signUp();
    expect((await ops('PUT', `/organizations/${owner.organizationId}/plan`, { plan: 'team' })).status).toBe(200);
    const refused = await owner.json('PUT', `/api/organizations/${owner.organizationId}/billing/renewal`, { renews: false }, { bindings: STRIPE });
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain('pays by no subscription');
    const member = await signUp();
    const invitation = await owner.json('POST', `/api/organizations/${owner.organizationId}/invitations`, { email: member.account.user.email, role: 'member' });
    await member.json('POST', `/api/invitations/${invitation.body.data.token}/accept`);
    expect((await member.json('PUT', `/api/organizations/${owner.organizationId}/billing/renewal`, { renews: false }, { bindings: STRIPE })).status).toBe(403);
  });
});

/** `person`'s organization paying for `plan` by a subscription the fake Stripe has, recorded as its paid checkout records it. */
async function paying(person: Person, plan: string): Promise<{ old: string; customer: string }> {
  const old = `sub_${crypto.randomUUID().replaceAll('-', '')}`;
  const customer = `cus_${crypto.randomUUID().replaceAll('-', '').slice(0, 14)}`;
  await fetch(`${FAKE_STRIPE.baseUrl}/test/subscriptions`, { method: 'POST', body: JSON.stringify({ id: old, customer }) });
  const paid = await completedCheckout(person, { mode: 'subscription', subscription: old, metadata: { organizationId: person.organizationId, kind: 'plan', plan } });
  expect(paid.body.data.applied).toBe(true);
  return { old, customer };
}

function checkoutEvent(person: Person, session: Record<string, unknown>) {
  return {
    id: `evt_${crypto.randomUUID().replaceAll('-', '')}`,
    type: 'checkout.session.completed',
    data: { object: { id: 'cs_test_2', object: 'checkout.session', mode: 'subscription', payment_status: 'paid', client_reference_id: person.organizationId, ...session } },
  };
}

/** Stripe's `charge.refunded` of the whole of a 700-cent payment (it names the payment only, not the organization). */
function refundedEarly(paymentIntent: string) {
  return deliver({ id: `evt_${crypto.randomUUID().replaceAll('-', '')}`, type: 'charge.refunded', data: { object: { id: 'ch_early', object: 'charge', payment_intent: paymentIntent, amount: 700, amount_refunded: 700 } } });
}

/** A paid top-up's checkout delivered for `person`'s organization; answers its payment intent. */
async function topUp(person: Person, cents: number, options: { paymentIntent?: string } = {}): Promise<string> {
  const paymentIntent = options.paymentIntent ?? (await stripePayment(cents));
  const paid = await completedCheckout(person, { mode: 'payment', amount_total: cents, payment_intent: paymentIntent, metadata: { organizationId: person.organizationId, kind: 'top_up', cents: String(cents) } });
  expect(paid.body.data.applied).toBe(true);
  return paymentIntent;
}

/** A payment Stripe took (at the fake), `refundedCents` of it refunded already; answers its payment intent. */
async function stripePayment(cents: number, refundedCents = 0): Promise<string> {
  const id = `pi_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`;
  await fetch(`${FAKE_STRIPE.baseUrl}/test/payment_intents`, { method: 'POST', body: JSON.stringify({ id, amount: cents, amount_refunded: refundedCents }) });
  return id;
}

/** A subscription Stripe has (at the fake), in `status`; answers its id. */
async function stripeSubscription(status = 'active'): Promise<string> {
  const id = `sub_${crypto.randomUUID().replaceAll('-', '')}`;
  await fetch(`${FAKE_STRIPE.baseUrl}/test/subscriptions`, { method: 'POST', body: JSON.stringify({ id, status }) });
  return id;
}

async function subscription(id: string): Promise<{ status: string; cancel_at: number | null; cancel_at_period_end: boolean; cancelled_with?: { prorate: boolean; invoice_now: boolean } } | undefined> {
  const all = (await (await fetch(`${FAKE_STRIPE.baseUrl}/test/subscriptions`)).json()) as { id: string }[];
  return all.find((one) => one.id === id) as never;
}

/** A change made in Stripe's own dashboard: the subscription's fields set at the fake, as Stripe's API would. */
async function stripeDashboard(id: string, fields: Record<string, string>): Promise<void> {
  await fetch(`${FAKE_STRIPE.baseUrl}/v1/subscriptions/${id}`, { method: 'POST', headers: { authorization: `Bearer ${FAKE_STRIPE.secretKey}` }, body: new URLSearchParams(fields) });
}

async function lastSession(): Promise<Record<string, any> | undefined> {
  const all = (await (await fetch(`${FAKE_STRIPE.baseUrl}/test/sessions`)).json()) as Record<string, any>[];
  return all.at(-1);
}
