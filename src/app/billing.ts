import Stripe from 'stripe';
import { getOrganization, setPlan } from '../services/accounts';
import { clock } from '../core/clock';
import type { Env } from '../core/config';
import { centsFromUnits, unitsFromCents } from '../core/money';
import { type Plan, PLAN_TABLE, PLANS } from '../core/plans';
import { creditWallet, hasCredit, returnPayment } from '../services/wallet';
import { recordChange } from './activity';

/**
 * Paying through Stripe Checkout with the official `stripe` package (its fetch client and WebCrypto
 * provider run in workerd). Enabled only when both the secret key and the webhook secret are set; without
 * them the dashboard says billing is not configured and plans are set by the operator.
 */
export function stripeOf(env: Env): Stripe | null {
  if (!env.STRIPE_SECRET_KEY || !env.STRIPE_WEBHOOK_SECRET) return null;
  const base = env.STRIPE_BASE_URL ? new URL(env.STRIPE_BASE_URL) : undefined;
  return new Stripe(env.STRIPE_SECRET_KEY, {
    httpClient: Stripe.createFetchHttpClient(),
    maxNetworkRetries: 1,
    ...(base ? { host: base.hostname, port: base.port || (base.protocol === 'https:' ? 443 : 80), protocol: base.protocol === 'https:' ? 'https' : 'http' } : {}),
  });
}

const cryptoProvider = Stripe.createSubtleCryptoProvider();

export const TOP_UP = { minCents: 500, maxCents: 100_000 } as const;

/** The subscription an organization pays by now, and the Stripe customer paying it; null when it pays by none (or Stripe no longer has it). */
export async function currentSubscription(env: Env, stripe: Stripe, organizationId: string): Promise<{ id: string; customer: string } | null> {
  const row = await env.DB.prepare('SELECT stripe_subscription_id AS id FROM organizations WHERE id = ?').bind(organizationId).first<{ id: string | null }>();
  if (!row?.id) return null;
  try {
    const subscription = await stripe.subscriptions.retrieve(row.id);
    if (subscription.status === 'canceled') return null;
    return { id: subscription.id, customer: typeof subscription.customer === 'string' ? subscription.customer : subscription.customer.id };
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

/**
 * A Checkout page for a plan's monthly subscription; the webhook sets the plan once Stripe says it is paid. An
 * organization that pays by a subscription already (`replacing`) checks out as the same Stripe customer, and the
 * webhook cancels the old subscription once the new one is paid, its unused days credited to that customer's
 * balance (the new subscription's invoices spend it): a change of plan never leaves two subscriptions billing.
 */
export async function checkoutForPlan(
  stripe: Stripe,
  input: { organizationId: string; plan: Exclude<Plan, 'payg'>; email: string; returnUrl: string; replacing: { id: string; customer: string } | null },
): Promise<string> {
  const terms = PLAN_TABLE[input.plan];
  const replaces: Record<string, string> = input.replacing ? { replaces: input.replacing.id } : {};
  const session = await stripe.checkout.sessions.create({
    mode: 'subscription',
    client_reference_id: input.organizationId,
    ...(input.replacing ? { customer: input.replacing.customer } : { customer_email: input.email }),
    line_items: [{ quantity: 1, price_data: { currency: 'usd', unit_amount: terms.priceCents, recurring: { interval: 'month' }, product_data: { name: `Sluice ${terms.name}` } } }],
    metadata: { organizationId: input.organizationId, kind: 'plan', plan: input.plan, ...replaces },
    subscription_data: { metadata: { organizationId: input.organizationId, plan: input.plan } },
    success_url: `${input.returnUrl}?checkout=done`,
    cancel_url: `${input.returnUrl}?checkout=cancelled`,
  });
  return session.url!;
}

/** A Checkout page for a one-time credit purchase; the webhook credits the wallet once Stripe says it is paid. */
export async function checkoutForTopUp(stripe: Stripe, input: { organizationId: string; amountCents: number; email: string; returnUrl: string }): Promise<string> {
  const session = await stripe.checkout.sessions.create({
    mode: 'payment',
    client_reference_id: input.organizationId,
    customer_email: input.email,
    line_items: [{ quantity: 1, price_data: { currency: 'usd', unit_amount: input.amountCents, product_data: { name: 'Sluice credit' } } }],
    metadata: { organizationId: input.organizationId, kind: 'top_up', cents: String(input.amountCents) },
    success_url: `${input.returnUrl}?checkout=done`,
    cancel_url: `${input.returnUrl}?checkout=cancelled`,
  });
  return session.url!;
}

export type WebhookOutcome = { status: 200; applied: boolean; note: string } | { status: 400; note: string };

/**
 * Verifies and applies one webhook delivery, exactly once per event id. Every step of applying is itself
 * idempotent by the event id (the wallet applies a credit or plan carrying it once), so the event is
 * applied first and recorded in D1 (`stripe_events`) after: a delivery that died in between, or failed,
 * is applied again by Stripe's retry without crediting twice, and a delivery already recorded is skipped.
 */
export async function handleStripeWebhook(env: Env, stripe: Stripe, rawBody: string, signature: string | undefined): Promise<WebhookOutcome> {
  let event: Stripe.Event;
  try {
    event = await stripe.webhooks.constructEventAsync(rawBody, signature ?? '', env.STRIPE_WEBHOOK_SECRET!, 300, cryptoProvider, Math.floor(clock.now() / 1000));
  } catch (error) {
    return { status: 400, note: `Signature check failed: ${error instanceof Error ? error.message : String(error)}` };
  }
  const organizationId = organizationOf(event) ?? (await organizationOfPayment(env.DB, event));
  const appliedBefore = () => ({ status: 200 as const, applied: false, note: `Event ${event.id} was applied before.` });
  if (await env.DB.prepare('SELECT 1 FROM stripe_events WHERE id = ?').bind(event.id).first()) return appliedBefore();
  const { note, change } = await apply(env, stripe, event, organizationId);
  const recorded = await env.DB.prepare('INSERT OR IGNORE INTO stripe_events (id, type, organization_id, received_at) VALUES (?, ?, ?, ?)')
    .bind(event.id, event.type, organizationId, new Date(clock.now()).toISOString())
    .run();
  // Two deliveries of one event at once both apply it (the wallet takes it once); one of them records it, and its change.
  if (recorded.meta.changes !== 1) return appliedBefore();
  if (change && organizationId) {
    await recordChange(env.DB, { organizationId, actorUserId: null, ...change }).catch((error: unknown) => {
      console.error(JSON.stringify({ level: 'error', note: 'activity not recorded', eventId: event.id, error: String(error) }));
    });
  }
  return { status: 200, applied: true, note };
}

function organizationOf(event: Stripe.Event): string | null {
  const object = event.data.object as { metadata?: Record<string, string> | null; client_reference_id?: string | null };
  return object.metadata?.organizationId ?? object.client_reference_id ?? null;
}

/** The organization a refunded or disputed payment credited (its events name the payment only): null for one that credited none. */
async function organizationOfPayment(db: D1Database, event: Stripe.Event): Promise<string | null> {
  if (!event.type.startsWith('charge.')) return null;
  const paymentIntent = idOf((event.data.object as { payment_intent?: string | { id: string } | null }).payment_intent);
  if (!paymentIntent) return null;
  return (await db.prepare('SELECT organization_id AS id FROM stripe_payments WHERE payment_intent = ?').bind(paymentIntent).first<{ id: string }>())?.id ?? null;
}

/** The id of a field Stripe answers as an id or, expanded, as the object. */
function idOf(field: string | { id: string } | null | undefined): string | null {
  return typeof field === 'string' ? field : (field?.id ?? null);
}

/** A top-up's refund as applied: its change recorded only when money went back (a checkout discounted to zero took none). */
const refundedTopUp = (note: string, change: { action: string; detail: string }): Applied => (note.startsWith('Refunded ') ? { note, change } : { note });

/** What applying an event said, and the change it made to the organization, for its activity (as Stripe's, no person's). */
interface Applied {
  note: string;
  change?: { action: string; detail?: string };
}

async function apply(env: Env, stripe: Stripe, event: Stripe.Event, organizationId: string | null): Promise<Applied> {
  if (!organizationId) return { note: `Event ${event.type} names no organization; ignored.` };
  switch (event.type) {
    case 'checkout.session.completed': {
      const session = event.data.object;
      if (session.payment_status !== 'paid') return { note: 'Checkout completed without payment yet; waiting for the payment.' };
      if (session.metadata?.kind === 'top_up') {
        const cents = session.amount_total ?? Number(session.metadata.cents);
        const refunded = { action: 'billing.payment_refunded', detail: `${cents} cents: the organization had closed` };
        const closed = await env.DB.prepare('SELECT closed_at AS closedAt FROM organizations WHERE id = ?').bind(organizationId).first<{ closedAt: string | null }>();
        if (closed?.closedAt) {
          // A delivery again of a payment credited before the close (a later step had failed): the credit stands, and the
          // organization's deletion dealt with it; refunding now would pay back credit that may have been spent.
          if (await hasCredit(env, organizationId, event.id)) return { note: `Credited ${cents} cents by an earlier delivery, before the organization closed.` };
          return refundedTopUp(await refundTopUp(stripe, session, organizationId, event.id), refunded);
        }
        const organization = await getOrganization(env.DB, organizationId);
        const credited = await creditWallet(env, organizationId, { purchasedUnits: unitsFromCents(cents) }, event.id);
        // The close landed between the check above and the credit: the wallet refused it.
        if (credited.closed) return refundedTopUp(await refundTopUp(stripe, session, organizationId, event.id), refunded);
        // Credit needs a plan to be spent: a top-up puts an organization without one on pay as you go.
        if (!organization.plan) await applyPlan(env, organizationId, 'payg', `${event.id}:payg`);
        const change = { action: 'billing.credit_bought', detail: `${cents} cents` };
        const note = credited.applied ? `Credited ${cents} cents.` : `Credited ${cents} cents (by an earlier delivery of this event).`;
        const paymentIntent = idOf(session.payment_intent);
        return paymentIntent ? { note: note + (await rememberPayment(env, stripe, organizationId, paymentIntent, cents)), change } : { note, change };
      }
      const plan = session.metadata?.plan;
      if (!isPlan(plan)) return { note: `Checkout for an unknown plan ${String(plan)}; ignored.` };
      const subscription = idOf(session.subscription);
      const replaces = session.metadata?.replaces ?? null;
      // Read from Stripe: its end may have been delivered first (Stripe keeps no order, and retries a failed delivery
      // for days), and a plan set for a subscription that no longer pays would run with nothing to end it.
      if (!subscription) return { note: 'Subscription (none) is missing, not paying: the plan was not set.' };
      const status = await statusOf(stripe, subscription);
      if (!PAYING.has(status)) {
        await cancelNow(stripe, subscription, { prorate: false });
        return { note: `Subscription ${subscription} is ${status}, not paying: the plan was not set.` };
      }
      // The organization pays by this subscription only while it is open and pays by none, by this one (a delivery
      // again) or by the one this checkout replaces: one statement, so a close or a newer checkout cannot slip between.
      const took = await env.DB.prepare(
        `UPDATE organizations SET stripe_subscription_id = ?1, plan_cancels_at = NULL
          WHERE id = ?2 AND closed_at IS NULL AND (stripe_subscription_id IS NULL OR stripe_subscription_id = ?1 OR stripe_subscription_id = ?3)`,
      )
        .bind(subscription, organizationId, replaces)
        .run();
      if (took.meta.changes !== 1) {
        // Paid for an organization that closed meanwhile, or overtaken by another plan's checkout paid at once: this
        // subscription never set a plan, so it is cancelled and its payment refunded whole (a credit for unused days
        // would go to a customer nothing may invoice again). The one it replaced, no longer the organization's, is
        // cancelled too: prorated while the organization is open (its customer pays on), not once it closed.
        const closed = await env.DB.prepare('SELECT 1 FROM organizations WHERE id = ? AND closed_at IS NOT NULL').bind(organizationId).first();
        const refund = await refundPlanCheckout(stripe, session, organizationId, event.id);
        await cancelNow(stripe, subscription, { prorate: false });
        if (replaces && replaces !== subscription) await cancelNow(stripe, replaces, { prorate: !closed });
        console.error(JSON.stringify({ level: 'error', note: 'a paid plan checkout was not applied; its subscription was cancelled and refunded', organizationId, subscription, replaces, eventId: event.id }));
        return {
          note: `Subscription ${subscription} cancelled at once${refund}: the organization closed, or pays by another subscription since this checkout began.${replaces && replaces !== subscription ? ` The subscription it replaced, ${replaces}, is cancelled too.` : ''}`,
        };
      }
      // Replacing a paid subscription, whose unused days Stripe credits back: the period's spending carries over, or
      // switching plans (or buying the same one again) would buy its allowance anew for the price of a few days.
      await applyPlan(env, organizationId, plan, event.id, { keepUsage: replaces !== null });
      if (replaces && replaces !== subscription) await cancelNow(stripe, replaces, { prorate: true });
      return {
        note: `Plan set to ${plan}.${replaces && replaces !== subscription ? ` Replaced subscription ${replaces} cancelled, its unused days credited.` : ''}`,
        change: { action: 'billing.plan_paid', detail: PLAN_TABLE[plan].name },
      };
    }
    case 'customer.subscription.updated': {
      // Read from Stripe, not the event: two changes (cancel, then keep) may be delivered in either order.
      const subscription = await stripe.subscriptions.retrieve(event.data.object.id);
      // A renewal never paid, where the account's setting for failed payments marks it unpaid rather than cancelling
      // it: the plan ends as it would at a cancellation (a subscription past due is still being retried, and keeps it).
      // Cancelled in Stripe too: an invoice paid later would revive a subscription whose plan is gone.
      if (ENDED.has(subscription.status)) {
        await cancelNow(stripe, subscription.id, { prorate: false });
        return endPlan(env, organizationId, subscription.id, event.id, `Subscription ${subscription.status}`);
      }
      const { endsAt, recorded, changed } = await recordPlanEnd(env, organizationId, subscription);
      if (!recorded) return { note: 'A subscription the organization no longer pays with changed; nothing changes.' };
      const note = endsAt ? `The subscription ends on ${endsAt.slice(0, 10)}.` : 'The subscription renews.';
      return changed ? { note, change: { action: 'billing.renewal_changed', detail: endsAt ? `ends ${endsAt.slice(0, 10)}` : 'renews' } } : { note };
    }
    case 'customer.subscription.deleted':
      return endPlan(env, organizationId, event.data.object.id, event.id, 'Subscription ended');
    case 'charge.refunded': {
      const charge = event.data.object;
      const payment = await paymentOf(env.DB, organizationId, idOf(charge.payment_intent));
      if (!payment) return { note: 'A refund of a payment that bought no credit here (a plan, or a top-up refunded because its organization had closed); nothing to take back.' };
      return takeBackRefund(env, organizationId, payment, charge.amount_refunded);
    }
    // Money a dispute withdrew from the payment, or gave back when the dispute was won (an inquiry withdraws none).
    case 'charge.dispute.funds_withdrawn':
    case 'charge.dispute.funds_reinstated': {
      const dispute = event.data.object;
      const payment = await paymentOf(env.DB, organizationId, idOf(dispute.payment_intent));
      if (!payment) return { note: 'A dispute of a payment that bought no credit here; nothing to take back.' };
      const reinstated = event.type === 'charge.dispute.funds_reinstated';
      const moved = await returnPayment(env, organizationId, { kind: 'dispute', dispute: dispute.id, payment: payment.id, paidUnits: unitsFromCents(payment.cents), units: unitsFromCents(dispute.amount), reinstated });
      if (reinstated) {
        if (moved.givenBackUnits === 0) return { note: `Dispute ${dispute.id}'s money was reinstated; it had taken no credit back.` };
        const cents = centsFromUnits(moved.givenBackUnits);
        // A refund told while the dispute held the payment is taken now, from what came back.
        const refund = moved.askedUnits > 0 ? `; ${takenBack(organizationId, centsFromUnits(moved.askedUnits), moved.takenUnits, `refund of ${payment.id}`)} for the payment's refund` : '';
        return { note: `Dispute won: ${cents} cents credited again${refund}.`, change: { action: 'billing.dispute_won', detail: `${cents} cents credited again${refund}` } };
      }
      if (moved.askedUnits === 0) return { note: `Dispute ${dispute.id} took back nothing more: the payment's credit was taken back already.` };
      const what = takenBack(organizationId, centsFromUnits(moved.askedUnits), moved.takenUnits, `disputed payment ${payment.id}`);
      return { note: `Payment disputed: ${what}.`, change: { action: 'billing.payment_disputed', detail: what } };
    }
    default:
      return { note: `Event ${event.type} is not used.` };
  }
}

/** A subscription's states in which it pays (Stripe's `status`), and those in which it never will again. */
const PAYING = new Set(['active', 'trialing']);
const ENDED = new Set(['canceled', 'unpaid', 'incomplete_expired']);

/** A subscription's status as Stripe has it now; `missing` when Stripe has no such subscription. */
async function statusOf(stripe: Stripe, subscriptionId: string): Promise<string> {
  try {
    return (await stripe.subscriptions.retrieve(subscriptionId)).status;
  } catch (error) {
    if (isMissing(error)) return 'missing';
    throw error;
  }
}

/** The organization's plan ends with the subscription it pays by (one it no longer pays by changes nothing). */
async function endPlan(env: Env, organizationId: string, subscriptionId: string, eventId: string, what: string): Promise<Applied> {
  const current = await env.DB.prepare('SELECT stripe_subscription_id AS id FROM organizations WHERE id = ?').bind(organizationId).first<{ id: string | null }>();
  if (current?.id !== subscriptionId) return { note: `${what}, a subscription the organization no longer pays with; nothing changes.` };
  await applyPlan(env, organizationId, null, eventId);
  await env.DB.prepare('UPDATE organizations SET stripe_subscription_id = NULL, plan_cancels_at = NULL WHERE id = ? AND stripe_subscription_id = ?').bind(organizationId, subscriptionId).run();
  return { note: `${what}; the organization has no plan now.`, change: { action: 'billing.plan_ended' } };
}

/** A payment that bought credit for the organization, as the top-up's checkout recorded it. */
interface Payment {
  id: string;
  cents: number;
}

async function paymentOf(db: D1Database, organizationId: string, paymentIntent: string | null): Promise<Payment | null> {
  if (!paymentIntent) return null;
  return db.prepare('SELECT payment_intent AS id, cents FROM stripe_payments WHERE payment_intent = ? AND organization_id = ?').bind(paymentIntent, organizationId).first<Payment>();
}

/**
 * A top-up refunded in Stripe (its dashboard, or a support decision): the credit it bought is taken back, as much as
 * was refunded and not spent. `charge.refunded` carries the running total of a payment's refunds; the wallet takes what
 * a total adds to the totals it was told before, so deliveries again, at once or out of order, take nothing more.
 */
async function takeBackRefund(env: Env, organizationId: string, payment: Payment, refundedCents: number): Promise<Applied> {
  const moved = await returnPayment(env, organizationId, { kind: 'refund', payment: payment.id, paidUnits: unitsFromCents(payment.cents), totalUnits: unitsFromCents(refundedCents) });
  if (moved.askedUnits === 0) return { note: `Refunds of ${payment.id} up to ${refundedCents} cents were taken back already.` };
  const asked = centsFromUnits(moved.askedUnits);
  const what = takenBack(organizationId, asked, moved.takenUnits, `refund of ${payment.id}`);
  return { note: `Refunded ${asked} cents of a top-up: ${what}.`, change: { action: 'billing.credit_taken_back', detail: `${what}: the payment was refunded` } };
}

/**
 * Records which organization a top-up's payment credited (its refund or dispute events name only the payment), after
 * the credit, so a payment the wallet refused is never recorded. A refund Stripe reported before this checkout arrived
 * (Stripe keeps no order) found no payment and took nothing: the payment's refunds are read now and taken back.
 * Answers what to add to the note.
 */
async function rememberPayment(env: Env, stripe: Stripe, organizationId: string, paymentIntent: string, cents: number): Promise<string> {
  await env.DB.prepare('INSERT OR IGNORE INTO stripe_payments (payment_intent, organization_id, cents, created_at) VALUES (?, ?, ?, ?)')
    .bind(paymentIntent, organizationId, cents, new Date(clock.now()).toISOString())
    .run();
  let refundedCents = 0;
  try {
    const charge = (await stripe.paymentIntents.retrieve(paymentIntent, { expand: ['latest_charge'] })).latest_charge;
    refundedCents = typeof charge === 'object' && charge ? charge.amount_refunded : 0;
  } catch (error) {
    // Only an early refund needs this read: the credit stands and is recorded whatever Stripe answers, rather than the
    // delivery failing for days (and a failing endpoint being disabled by Stripe).
    console.error(JSON.stringify({ level: 'warn', note: "a top-up's refunds could not be read at its checkout; a refund made before it is not taken back", organizationId, paymentIntent, error: String(error) }));
    return '';
  }
  if (refundedCents === 0) return '';
  return ` ${(await takeBackRefund(env, organizationId, { id: paymentIntent, cents }, refundedCents)).note}`;
}

/** What a withdrawal took of the cents asked, said for the note and the activity; what it could not take is logged for the operator. */
function takenBack(organizationId: string, askedCents: number, takenUnits: number, what: string): string {
  const taken = centsFromUnits(takenUnits);
  if (taken >= askedCents) return `${askedCents} cents taken back`;
  console.error(JSON.stringify({ level: 'warn', note: `credit of a ${what} spent before it was taken back`, organizationId, askedCents, takenCents: taken }));
  return `${taken} of ${askedCents} cents taken back (the rest was spent)`;
}

/**
 * Credit paid for an organization that closed since its Checkout began (its last member deleted their account):
 * nothing could ever spend it, so the payment is refunded whole instead. One refund per event, whatever the number of
 * deliveries (Stripe's idempotency key); a payment Stripe already refunded answers its error, which the delivery's
 * retry then reports.
 */
async function refundTopUp(stripe: Stripe, session: Stripe.Checkout.Session, organizationId: string, eventId: string): Promise<string> {
  const paymentIntent = idOf(session.payment_intent);
  const logged = (note: string, extra: Record<string, unknown> = {}) => {
    console.error(JSON.stringify({ level: 'warn', note, organizationId, paymentIntent, eventId, ...extra }));
    return note;
  };
  // Nothing was taken (a checkout discounted to zero), so there is nothing to give back.
  if (!paymentIntent || !session.amount_total) return logged('A top-up paid after its organization closed took no payment to refund; nothing credited.');
  const refund = await refundWhole(stripe, paymentIntent, { organizationId, reason: 'organization closed' }, `refund-${eventId}`);
  if (!refund) return logged('A top-up paid after its organization closed was refunded already.');
  return logged(`Refunded ${session.amount_total} cents (${refund}): the organization closed before the payment arrived.`, { refund });
}

/**
 * Refunds a payment whole, once per idempotency key (a delivery again answers the same refund); null when Stripe says
 * it was refunded already (a delivery again after Stripe forgot the key, a day on): done either way.
 */
async function refundWhole(stripe: Stripe, paymentIntent: string, metadata: Record<string, string>, idempotencyKey: string): Promise<string | null> {
  try {
    return (await stripe.refunds.create({ payment_intent: paymentIntent, reason: 'requested_by_customer', metadata }, { idempotencyKey })).id;
  } catch (error) {
    if (error instanceof Stripe.errors.StripeInvalidRequestError && error.code === 'charge_already_refunded') return null;
    throw error;
  }
}

/**
 * The payment of a plan checkout that set no plan, refunded whole: what its first invoice was paid with. One refund per
 * payment and event, however often delivered (Stripe's idempotency key); one refunded already is done. Answers what to
 * add to the note.
 */
async function refundPlanCheckout(stripe: Stripe, session: Stripe.Checkout.Session, organizationId: string, eventId: string): Promise<string> {
  const invoice = idOf(session.invoice);
  if (!invoice || !session.amount_total) return '';
  const payments = await stripe.invoicePayments.list({ invoice, status: 'paid' });
  let refunded = 0;
  for (const { payment, amount_paid: paid } of payments.data) {
    const paymentIntent = idOf(payment.payment_intent);
    if (!paymentIntent) continue;
    await refundWhole(stripe, paymentIntent, { organizationId, reason: 'plan not set' }, `refund-${eventId}-${paymentIntent}`);
    refunded += paid ?? 0;
  }
  return refunded > 0 ? `, its payment of ${refunded} cents refunded` : '';
}

/** Stripe has no such object (a subscription already gone): what a cancellation wanted. */
export function isMissing(error: unknown): boolean {
  return error instanceof Stripe.errors.StripeInvalidRequestError && error.code === 'resource_missing';
}

/**
 * Ends a subscription at once. With `prorate`, a final invoice is made now (`invoice_now`) whose credit for the unused
 * days goes to the customer's balance, which their next invoices spend; without, nothing more is invoiced. One Stripe
 * no longer has, or has cancelled already, has ended already.
 */
export async function cancelNow(stripe: Stripe, subscriptionId: string, options: { prorate: boolean }): Promise<void> {
  try {
    const subscription = await stripe.subscriptions.retrieve(subscriptionId);
    if (subscription.status === 'canceled') return;
    await stripe.subscriptions.cancel(subscriptionId, options.prorate ? { prorate: true, invoice_now: true } : { prorate: false });
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
}

/**
 * The organization's subscription stops renewing (`cancel`: the plan stays until the end of the period paid for, then
 * Stripe ends it and the webhook ends the plan) or renews again; answers when it ends, null when it renews.
 */
export async function setRenewal(env: Env, stripe: Stripe, subscriptionId: string, organizationId: string, renew: boolean): Promise<string | null> {
  // Renewing also clears an end date set in Stripe's own dashboard (`cancel_at`), which cancel_at_period_end leaves.
  const subscription = await stripe.subscriptions.update(subscriptionId, renew ? { cancel_at_period_end: false, cancel_at: '' } : { cancel_at_period_end: true });
  return (await recordPlanEnd(env, organizationId, subscription)).endsAt;
}

/**
 * When the subscription ends (Stripe's `cancel_at`, null while it renews), kept as the organization's plan end while
 * the organization still pays by this subscription (`recorded`).
 */
async function recordPlanEnd(env: Env, organizationId: string, subscription: Stripe.Subscription): Promise<{ endsAt: string | null; recorded: boolean; changed: boolean }> {
  const endsAt = subscription.cancel_at ? new Date(subscription.cancel_at * 1000).toISOString() : null;
  const written = await env.DB.prepare('UPDATE organizations SET plan_cancels_at = ?1 WHERE id = ?2 AND stripe_subscription_id = ?3 AND plan_cancels_at IS NOT ?1')
    .bind(endsAt, organizationId, subscription.id)
    .run();
  if (written.meta.changes === 1) return { endsAt, recorded: true, changed: true };
  // The same end already (the echo of a change made in the dashboard, a period rolled, a card changed): nothing moved.
  const pays = await env.DB.prepare('SELECT 1 FROM organizations WHERE id = ? AND stripe_subscription_id = ?').bind(organizationId, subscription.id).first();
  return { endsAt, recorded: pays !== null, changed: false };
}

/**
 * Sets the plan as the operator's plan set does (a new period with the plan's allowance, every gate
 * told), the custom ceiling kept; once per event, however often it is delivered.
 */
async function applyPlan(env: Env, organizationId: string, plan: Plan | null, eventId: string, options: { keepUsage?: boolean } = {}): Promise<void> {
  const organization = await getOrganization(env.DB, organizationId);
  await setPlan(env, organizationId, { plan, rpm: organization.rpmOverride }, eventId, options);
}

function isPlan(value: unknown): value is Plan {
  return typeof value === 'string' && (PLANS as readonly string[]).includes(value);
}
