import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { success } from '../../core/envelope';
import { CAP_NAMES, PLAN_TABLE, PLANS } from '../../core/plans';
import type { AppEnv } from '../../core/context';
import { errorResponses, jsonContent, NoParameters, successEnvelope } from '../../core/schemas';

const Caps = z.object(Object.fromEntries(CAP_NAMES.map((name) => [name, z.number().int()])) as Record<(typeof CAP_NAMES)[number], z.ZodNumber>);

const PlanSchema = z
  .object({
    id: z.enum(PLANS),
    name: z.string(),
    priceCents: z.number().int().openapi({ description: 'Monthly price in cents; 0 for pay as you go.' }),
    allowanceCents: z.number().int().openapi({ description: 'Subscription allowance granted each month, spent before purchased balance.' }),
    requestsPerMinute: z.number().int().openapi({ description: 'Per workspace, shared by all its keys.' }),
    connectionFeeCents: z.number().openapi({
      description: "The platform fee per successful call through a connection (/v1/connections/{id}/data/...: the workspace's own vendor account), charged instead of the operation's price; 0 means none.",
    }),
    caps: Caps.openapi({ description: 'Workspaces, seats (members plus pending invitations), agents, databases, webhook events a month, runtime hours a month.' }),
  })
  .openapi('Plan');

const route = createRoute({
  method: 'get',
  path: '/v1/plans',
  tags: ['Discovery'],
  summary: 'The plans, with their prices, allowances, rate ceilings and caps',
  operationId: 'listPlans',
  security: [],
  request: { query: NoParameters },
  responses: {
    200: jsonContent(successEnvelope(z.object({ plans: z.array(PlanSchema) })), 'Every plan.', { example: success({ plans: planList() }) }),
    ...errorResponses(400),
  },
});

/** Public and not rate limited: a person choosing a plan has no key yet. */
export function planList() {
  return PLANS.map((id) => {
    const { name, priceCents, allowanceCents, rpm, connectionFeeCents, caps } = PLAN_TABLE[id];
    return { id, name, priceCents, allowanceCents, requestsPerMinute: rpm, connectionFeeCents, caps: { ...caps } };
  });
}

export function registerPlans(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, (c) => c.json(success({ plans: planList() }), 200, { 'cache-control': 'public, max-age=300' }));
}
