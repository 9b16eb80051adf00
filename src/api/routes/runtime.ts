import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { agentAllowance, findAgent } from '../../services/agents';
import { revokedKeyError } from '../../services/auth';
import { success } from '../../core/envelope';
import { ApiError } from '../../core/errors';
import { admitAgentHour } from '../../services/runtime-hours';
import { sandboxAnswer } from '../../services/sandbox';
import type { Call } from '../../services/pipeline';
import { admitJobCall } from '../../services/jobs/runtime';
import { OPERATIONS } from '../../operations';
import { CATALOG } from '../../operations/catalog';
import type { Operation } from '../../core/operation';
import type { AppEnv } from '../../core/context';
import { exampleOf } from '../examples';
import { errorResponses, jsonContent, Meta, meteredErrorResponses, NoParameters, successEnvelope } from '../../core/schemas';
import { dataPathsOf, handle, knownSourceAndOperation } from './data';

/**
 * The runtime surface, for deployed agents: `/runtime/agent` (who am I) and `/runtime/data/<slug>/<operation>`,
 * the operations of /v1/data through the same handler and pipeline (window, wallet, billing, usage rows on
 * the agent's key), with one rule of its own: a call that opens a new agent-hour needs room under the
 * plan's monthly runtime hours.
 */
export const RUNTIME_DATA_PREFIX = '/runtime/data/';

/** `METHOD path` of every runtime data route: its handler checks the key in the gate call it makes anyway. */
export const RUNTIME_DATA_ROUTES = new Set(OPERATIONS.flatMap((operation) => dataPathsOf(operation, RUNTIME_DATA_PREFIX).map((path) => `${operation.method} ${path}`)));

const TAGS = ['Runtime'];
const SECURITY = [{ agentKey: [] }];

const RuntimeAgent = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    workspaceId: z.string(),
    organizationId: z.string(),
    deployedAt: z.string(),
    runtimeHours: z
      .object({
        agent: z.number().int().openapi({ description: "This agent's agent-hours this calendar month (UTC)." }),
        used: z.number().int().openapi({ description: "The organization's runtime hours this month: all its agents' agent-hours." }),
        limit: z.number().int().nullable().openapi({ description: "The plan's monthly runtimeHours cap; null without a plan." }),
        monthEndsAt: z.string().openapi({ description: 'When the count starts again from zero (ISO 8601).' }),
      })
      .openapi({ description: 'An agent-hour is a clock hour (UTC) in which an agent made at least one /runtime/data call.' }),
  })
  .openapi('RuntimeAgent');

const whoAmI = createRoute({
  method: 'get',
  path: '/runtime/agent',
  tags: TAGS,
  summary: 'The deployed agent this key was minted for, and the runtime hours used this month',
  operationId: 'getRuntimeAgent',
  security: SECURITY,
  request: { query: NoParameters },
  responses: {
    200: jsonContent(successEnvelope(RuntimeAgent), 'The agent, its workspace and organization, and runtime hours against the cap.', {
      example: success({
        id: 'agt_5f1c2a9b7d3e4f6a8b0c1d2e',
        name: 'lead researcher',
        description: 'Finds companies and their people every morning.',
        workspaceId: 'ws_0a1b2c3d4e5f6a7b8c9d0e1f',
        organizationId: 'org_3f9a1c2b7d3e4f6a8b0c1d2e',
        deployedAt: '2026-11-23T06:00:00.000Z',
        runtimeHours: { agent: 3, used: 7, limit: 20, monthEndsAt: '2026-12-01T00:00:00.000Z' },
      }),
    }),
    ...errorResponses(400, 401, 403),
  },
});

const RuntimeDataInput = z.record(z.string(), z.unknown()).openapi('RuntimeDataInput', { description: "The operation's input, exactly as on /v1/data/{slug}/{operation}." });

/** The data routes are documented once, generically: each is its /v1/data twin with a deployed agent's key. */
function dataRoute(method: 'get' | 'post', operation: Operation) {
  const example = exampleOf(operation)!;
  const params = z.object({
    slug: z.enum(CATALOG.map((platform) => platform.slug) as [string, ...string[]]).openapi({ param: { name: 'slug', in: 'path' }, example: operation.platform }),
    operation: z.string().openapi({ param: { name: 'operation', in: 'path' }, description: 'An operation of the source, as listed by GET /v1/platforms/{slug}.', example: operation.name }),
  });
  return createRoute({
    method,
    path: '/runtime/data/{slug}/{operation}',
    tags: TAGS,
    summary: method === 'get' ? 'Run a GET data operation as a deployed agent' : 'Run a POST data operation as a deployed agent',
    description:
      `Any operation of \`/v1/data/{slug}/{operation}\` that takes ${method.toUpperCase()} (see GET /v1/platforms), with the same ${method === 'get' ? 'query parameters' : 'JSON body'}, answer, price, ` +
      "rate window and wallet, billed to the agent's organization and recorded in usage on the agent's key. A call that would open a new " +
      "agent-hour (a clock hour, UTC, in which the agent made no call yet) when the organization's runtime hours this month have reached the " +
      "plan's cap is 402 PLAN_LIMIT_REACHED, uncharged; calls within hours already counted go on.",
    operationId: method === 'get' ? 'getRuntimeData' : 'postRuntimeData',
    security: SECURITY,
    request:
      method === 'get'
        ? { params }
        : { params, body: { content: { 'application/json': { schema: RuntimeDataInput, example: example.input } }, required: true } },
    responses: {
      200: jsonContent(z.object({ success: z.literal(true), data: z.unknown(), meta: Meta }), "The operation's payload, with what the call cost and the balances after it.", {
        metered: true,
        example: { success: true, data: example.data, meta: { costCents: 1, purchasedBalanceCents: 499, subscriptionRemainingCents: 0, cached: false, latencyMs: 212 } },
      }),
      ...meteredErrorResponses(400, 401, 402, 403, 404, 409, 422, 429, 502, 503),
    },
  });
}

const operationNamed = (platform: string, name: string) => OPERATIONS.find((operation) => operation.platform === platform && operation.name === name)!;

export function registerRuntime(app: OpenAPIHono<AppEnv>, authenticate: MiddlewareHandler<AppEnv>) {
  app.openAPIRegistry.registerComponent('securitySchemes', 'agentKey', {
    type: 'http',
    scheme: 'bearer',
    description: "A deployed agent's key (scope agent), answered once when the agent is deployed in the dashboard. It works on /runtime/* only; a workspace key works on /v1 only.",
  });
  app.use('/runtime/*', authenticate);
  app.use(`${RUNTIME_DATA_PREFIX}*`, knownSourceAndOperation(RUNTIME_DATA_PREFIX));

  app.openapi(whoAmI, async (c) => {
    const principal = c.get('principal');
    if (principal.scope === 'workspace_dryrun') {
      throw ApiError.forbidden("This key's scope is 'workspace_dryrun': a sandbox key belongs to no agent; it calls /runtime/data, answered with each operation's documented example at no cost.");
    }
    if (principal.scope !== 'agent') throw ApiError.forbidden("This key's scope is 'data_job': /runtime/agent describes a deployed agent's key; a data job's key calls /runtime/data only.");
    const agent = await findAgent(c.env.DB, principal.agentId!);
    // Stopped or redeployed since this isolate remembered the key: the key is dead.
    if (!agent || agent.status !== 'deployed' || agent.keyId !== principal.keyId) throw revokedKeyError(c.env);
    const allowance = await agentAllowance(c.env.DB, agent.organizationId);
    return c.json(
      success({
        id: agent.id,
        name: agent.name,
        description: agent.description,
        workspaceId: agent.workspaceId,
        organizationId: agent.organizationId,
        deployedAt: agent.deployedAt,
        runtimeHours: { agent: agent.runtimeHoursThisMonth, used: allowance.runtimeHours, limit: allowance.runtimeHoursLimit, monthEndsAt: allowance.monthEndsAt },
      }),
      200,
    );
  });

  app.openAPIRegistry.registerPath(dataRoute('get', operationNamed('linkedin', 'get-company-by-domain')));
  app.openAPIRegistry.registerPath(dataRoute('post', operationNamed('web', 'scrape')));
  for (const operation of OPERATIONS) {
    for (const path of dataPathsOf(operation, RUNTIME_DATA_PREFIX)) {
      app.on(operation.method, path, (c) => handle(c, operation, {}, runtimeSurface(c, operation)));
    }
  }
}

/** A deployed agent's call counts agent-hours; a sandbox key's is answered with the operation's example (services/sandbox.ts). */
function runtimeSurface(c: Context<AppEnv>, operation: Operation): Pick<Call, 'admit' | 'instead'> {
  const principal = c.get('principal');
  if (principal.scope === 'workspace_dryrun') return { instead: sandboxAnswer(c.env, principal, operation, exampleOf(operation)) };
  return { admit: () => admitRuntimeCall(c) };
}

/** The runtime's own rule, run by the pipeline once the input is valid: room for a new agent-hour. */
async function admitRuntimeCall(c: Context<AppEnv>): Promise<void> {
  const principal = c.get('principal');
  if (principal.scope === 'data_job') return admitJobCall(c.env, principal);
  const answer = await admitAgentHour(c.env.DB, { agentId: principal.agentId!, keyId: principal.keyId, organizationId: principal.organizationId });
  if (answer === 'stopped') throw revokedKeyError(c.env);
}
