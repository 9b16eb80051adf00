import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { errorResponses, jsonContent, successEnvelope } from '../../core/schemas';
import { publicUrls } from '../../core/config';
import { success } from '../../core/envelope';
import { ApiError } from '../../core/errors';
import { PLAN_TABLE, PLANS } from '../../core/plans';
import { checkoutForPlan, checkoutForTopUp, currentSubscription, handleStripeWebhook, setRenewal, stripeOf, TOP_UP } from '../billing';
import type { DashboardEnv } from '../context';
import { organizationAccess, requireManager } from '../members';
import { jsonBody, organizationIdParam } from './schemas';

export const STRIPE_WEBHOOK_PATH = '/api/billing/stripe-webhook';

const Checkout = z.object({ url: z.string().openapi({ description: 'Stripe Checkout page to send the browser to.' }) }).openapi('Checkout');

const routes = {
  plan: createRoute({
    method: 'post',
    path: '/api/organizations/{organizationId}/billing/checkout',
    tags: ['Billing'],
    summary: "Pay for a plan's monthly subscription through Stripe Checkout (owners and admins)",
    description:
      "An organization that pays by a subscription already changes plan: once the new one is paid, the old one is cancelled with its unused days credited by Stripe, and the new plan's allowance for its first period is its allowance less what the period before had spent. 409 for the plan it pays for already.",
    operationId: 'checkoutPlan',
    request: { params: organizationIdParam, body: jsonBody(z.strictObject({ plan: z.enum(PLANS).exclude(['payg']).openapi({ description: 'Pay as you go has no subscription: buy credit instead.' }) })) },
    responses: { 200: jsonContent(successEnvelope(Checkout), 'Where to pay.'), ...errorResponses(400, 401, 403, 404, 409, 502, 503) },
  }),
  topUp: createRoute({
    method: 'post',
    path: '/api/organizations/{organizationId}/billing/top-up',
    tags: ['Billing'],
    summary: 'Buy credit through Stripe Checkout (owners and admins)',
    operationId: 'checkoutTopUp',
    request: { params: organizationIdParam, body: jsonBody(z.strictObject({ amountCents: z.coerce.number().int().min(TOP_UP.minCents).max(TOP_UP.maxCents) })) },
    responses: { 200: jsonContent(successEnvelope(Checkout), 'Where to pay.'), ...errorResponses(400, 401, 403, 404, 502, 503) },
  }),
  renewal: createRoute({
    method: 'put',
    path: '/api/organizations/{organizationId}/billing/renewal',
    tags: ['Billing'],
    summary: "Cancel the plan at the end of the month paid for, or keep it renewing (owners and admins)",
    description:
      'With `{"renews": false}` the subscription stops renewing: the plan and its allowance stay until the end of the period paid for, then end (metered calls then need a plan again). `{"renews": true}` undoes that before the end. 409 when the organization pays by no subscription (a plan the operator set, or the free trial, which ends by itself).',
    operationId: 'setPlanRenewal',
    request: { params: organizationIdParam, body: jsonBody(z.strictObject({ renews: z.boolean() })) },
    responses: {
      200: jsonContent(
        successEnvelope(z.object({ renews: z.boolean(), endsAt: z.string().nullable().openapi({ description: 'When the plan ends, when it does not renew; null while it renews.' }) })),
        'Set.',
      ),
      ...errorResponses(400, 401, 403, 404, 409, 502, 503),
    },
  }),
  webhook: createRoute({
    method: 'post',
    path: STRIPE_WEBHOOK_PATH,
    tags: ['Billing'],
    summary: "Stripe's webhook: signed events that set plans and credit wallets, each applied once",
    operationId: 'stripeWebhook',
    security: [],
    responses: { 200: jsonContent(successEnvelope(z.object({ applied: z.boolean(), note: z.string() })), 'Received.'), ...errorResponses(400, 503) },
  }),
};

function requireStripe(env: DashboardEnv['Bindings']) {
  const stripe = stripeOf(env);
  if (!stripe) throw new ApiError('PROVIDER_UNAVAILABLE', 'Billing is not configured on this installation (STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET); an operator sets plans and credit.', { retryAfter: 3600 });
  return stripe;
}

/** A Stripe refusal or outage is the payment provider's failure, not ours: 502, with the detail logged. */
async function viaStripe<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    console.error(JSON.stringify({ level: 'error', note: 'Stripe call failed', error: String(error) }));
    throw new ApiError('PROVIDER_ERROR', 'The payment provider did not answer as expected; nothing was charged. Try again shortly.', { status: 502 });
  }
}

export function registerBilling(app: OpenAPIHono<DashboardEnv>) {
  app.openapi(routes.plan, async (c) => {
    const stripe = requireStripe(c.env);
    const access = await organizationAccess(c.env.DB, c.get('session').user.id, c.req.valid('param').organizationId);
    requireManager(access, 'change the plan');
    const { plan } = c.req.valid('json');
    const replacing = await viaStripe(() => currentSubscription(c.env, stripe, access.organization.id));
    if (replacing && access.organization.plan === plan) {
      throw ApiError.conflict(`${access.organization.name} pays for the ${PLAN_TABLE[plan].name} plan already; its allowance refills at each renewal. Choose another plan to change it.`);
    }
    const url = await viaStripe(() =>
      checkoutForPlan(stripe, { organizationId: access.organization.id, plan, email: c.get('session').user.email, returnUrl: `${publicUrls(c.env).app}/`, replacing }),
    );
    return c.json(success({ url }), 200);
  });

  app.openapi(routes.topUp, async (c) => {
    const stripe = requireStripe(c.env);
    const access = await organizationAccess(c.env.DB, c.get('session').user.id, c.req.valid('param').organizationId);
    requireManager(access, 'buy credit');
    const url = await viaStripe(() =>
      checkoutForTopUp(stripe, { organizationId: access.organization.id, amountCents: c.req.valid('json').amountCents, email: c.get('session').user.email, returnUrl: `${publicUrls(c.env).app}/` }),
    );
    return c.json(success({ url }), 200);
  });

  app.openapi(routes.renewal, async (c) => {
    const stripe = requireStripe(c.env);
    const access = await organizationAccess(c.env.DB, c.get('session').user.id, c.req.valid('param').organizationId);
    requireManager(access, 'cancel or keep the plan');
    const { renews } = c.req.valid('json');
    const subscription = await viaStripe(() => currentSubscription(c.env, stripe, access.organization.id));
    if (!subscription) {
      throw ApiError.conflict(`${access.organization.name} pays by no subscription: its plan was set by the operator, or is the free trial, which ends by itself. Ask the operator to change it.`);
    }
    const endsAt = await viaStripe(() => setRenewal(c.env, stripe, subscription.id, access.organization.id, renews));
    return c.json(success({ renews: endsAt === null, endsAt }), 200);
  });

  app.openapi(routes.webhook, async (c) => {
    const stripe = requireStripe(c.env);
    const outcome = await handleStripeWebhook(c.env, stripe, await c.req.text(), c.req.header('stripe-signature'));
    if (outcome.status === 400) throw ApiError.validation([{ field: 'stripe-signature', location: 'body', message: outcome.note }], outcome.note);
    return c.json(success({ applied: outcome.applied, note: outcome.note }), 200);
  });
}
