import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { revokedKeyError } from '../../services/auth';
import { success } from '../../core/envelope';
import { gateOf } from '../../services/gate';
import { planInForce } from '../../core/protocols/lease';
import { clock } from '../../core/clock';
import { PLANS } from '../../core/plans';
import { balanceInCents } from '../../services/wallet';
import type { AppEnv } from '../../services/context';
import { errorResponses, jsonContent, NoParameters, successEnvelope } from '../../core/schemas';

export const Credits = z
  .object({
    organizationId: z.string(),
    plan: z.enum(PLANS).nullable().openapi({ description: 'null when the organization has no plan: metered routes answer 402 SUBSCRIPTION_REQUIRED.' }),
    purchasedBalanceCents: z.number().openapi({ description: 'Top-ups; never expire.' }),
    subscriptionRemainingCents: z.number().openapi({ description: "What is left of this period's allowance; spent before purchased balance." }),
    subscriptionAllowanceCents: z.number().openapi({ description: "The plan's allowance per period." }),
    heldCents: z.number().openapi({ description: "Set aside for this organization's workspaces (calls in flight and the short leases they spend from); part of the balances above, not taken out of them." }),
    availableCents: z.number().openapi({ description: 'purchasedBalanceCents + subscriptionRemainingCents.' }),
    periodEnd: z.string().nullable().openapi({ description: 'When the subscription allowance resets (ISO 8601), null without a plan.' }),
  })
  .openapi('Credits');

const route = createRoute({
  method: 'get',
  path: '/v1/credits',
  tags: ['Account'],
  summary: "The organization's credit balance",
  operationId: 'getCredits',
  request: { query: NoParameters },
  responses: { 200: jsonContent(successEnvelope(Credits), 'Balances of the organization that pays for this workspace.', {
      example: success({
        organizationId: 'org_5f1c2a9b7d3e4f6a8b0c1d2e',
        plan: 'solo' as const,
        purchasedBalanceCents: 480.5,
        subscriptionRemainingCents: 912.25,
        subscriptionAllowanceCents: 1000,
        heldCents: 1,
        availableCents: 1392.75,
        periodEnd: '2026-12-01T00:00:00.000Z',
      }),
    }), ...errorResponses(400, 401, 403) },
});

export function registerCredits(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const principal = c.get('principal');
    // One message to the workspace's gate: it checks the key, reports this workspace's spending, reads the wallet.
    const credits = await gateOf(c.env, principal.workspaceId).credits(principal.keyId, principal);
    if (credits.revoked) throw revokedKeyError(c.env);
    const plan = credits.terms ? planInForce(credits.terms, clock.now()) : principal.plan;
    return c.json(success({ organizationId: principal.organizationId, plan, ...balanceInCents(credits.balance) }), 200);
  });
}
