import { createRoute } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { revokedKeyError } from '../../services/auth';
import { success } from '../../core/envelope';
import { gateOf } from '../../services/gate';
import { planInForce } from '../../core/protocols/lease';
import { clock } from '../../core/clock';
import { balanceInCents } from '../../services/wallet';
import type { AppEnv } from '../../core/context';
import { Credits, errorResponses, jsonContent, NoParameters, successEnvelope } from '../../core/schemas';


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
    const plan = planInForce(credits.terms, clock.now());
    return c.json(success({ organizationId: principal.organizationId, plan, ...balanceInCents(credits.balance) }), 200);
  });
}
