import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { errorResponses, jsonContent, successEnvelope } from '../../core/schemas';
import { Agent, AGENT_ID, AgentAllowance, type AgentRecord, AgentWithKey, agentAllowance, DeployAgent, deployAgent, findAgent, listAgents, redeployAgent, stopAgent } from '../../services/agents';
import { success } from '../../core/envelope';
import { ApiError } from '../../core/errors';
import type { DashboardEnv } from '../context';
import { canManage, type WorkspaceAccess, workspaceAccess } from '../members';
import { jsonBody, workspaceIdParam } from './schemas';
import { countKeyMade } from './keys';

const TAGS = ['Agents'];
const agentIdParam = z.object({
  agentId: z.string().regex(AGENT_ID, 'Expected an agent id (agt_ and 24 hex characters).').openapi({ param: { name: 'agentId', in: 'path' } }),
});

const routes = {
  list: createRoute({
    method: 'get',
    path: '/api/workspaces/{workspaceId}/agents',
    tags: TAGS,
    summary: "The workspace's agents, and the organization's deployed agents and runtime hours this month against the plan's caps",
    operationId: 'listAgents',
    request: { params: workspaceIdParam },
    responses: { 200: jsonContent(successEnvelope(z.object({ agents: z.array(Agent), allowance: AgentAllowance })), 'Deployed agents first, then newest first.'), ...errorResponses(400, 401, 404) },
  }),
  deploy: createRoute({
    method: 'post',
    path: '/api/workspaces/{workspaceId}/agents',
    tags: TAGS,
    summary: "Deploy an agent: needs a plan or the free trial (402 DEPLOY_GATE_FAILED) and room under the plan's agents cap (402 PLAN_LIMIT_REACHED); answers its key, this once",
    operationId: 'deployAgent',
    request: { params: workspaceIdParam, body: jsonBody(DeployAgent) },
    responses: { 201: jsonContent(successEnvelope(AgentWithKey), 'The deployed agent and its key (scope agent), for /runtime/*.'), ...errorResponses(400, 401, 402, 404, 409, 429) },
  }),
  stop: createRoute({
    method: 'post',
    path: '/api/agents/{agentId}/stop',
    tags: TAGS,
    summary: 'Stop an agent: its key is refused from the very next /runtime call, and it no longer counts against the cap (owners, admins, or whoever deployed it)',
    operationId: 'stopAgent',
    request: { params: agentIdParam },
    responses: { 200: jsonContent(successEnvelope(Agent), 'The stopped agent.'), ...errorResponses(400, 401, 403, 404) },
  }),
  redeploy: createRoute({
    method: 'post',
    path: '/api/agents/{agentId}/deploy',
    tags: TAGS,
    summary: 'Deploy a stopped agent again, with a new key (the old one stays revoked); answers the key, this once (owners, admins, or whoever deployed it)',
    operationId: 'redeployAgent',
    request: { params: agentIdParam },
    responses: { 200: jsonContent(successEnvelope(AgentWithKey), 'The deployed agent and its new key.'), ...errorResponses(400, 401, 402, 403, 404, 409, 429) },
  }),
};

/** Members deploy agents, as they make keys; owners and admins also stop and redeploy everybody else's. */
function requireOwnerOrManager(access: WorkspaceAccess, agent: AgentRecord, userId: string, action: string): void {
  if (agent.createdBy === userId || canManage(access.role)) return;
  throw ApiError.forbidden(`Only owners, admins and the person who deployed it can ${action} this agent; your role is ${access.role}.`);
}

export function registerAgents(app: OpenAPIHono<DashboardEnv>) {
  /** The agent and this person's access to its workspace; another organization's agent reads as missing. */
  async function agentAccess(db: D1Database, userId: string, agentId: string): Promise<{ agent: AgentRecord; access: WorkspaceAccess }> {
    const agent = await findAgent(db, agentId);
    const access =
      agent &&
      (await workspaceAccess(db, userId, agent.workspaceId).catch((error: unknown) => {
        // Another organization's reads as missing; any other refusal (a second factor required) is said as it is.
        if (error instanceof ApiError && error.code === 'NOT_FOUND') return undefined;
        throw error;
      }));
    if (!agent || !access) throw ApiError.notFound(`No agent ${agentId}.`);
    return { agent, access };
  }

  app.openapi(routes.list, async (c) => {
    const { workspace, organization } = await workspaceAccess(c.env.DB, c.get('session').user.id, c.req.valid('param').workspaceId);
    const [agents, allowance] = await Promise.all([listAgents(c.env.DB, workspace.id), agentAllowance(c.env.DB, organization.id)]);
    return c.json(success({ agents, allowance }), 200);
  });

  app.openapi(routes.deploy, async (c) => {
    const userId = c.get('session').user.id;
    const { workspace, organization } = await workspaceAccess(c.env.DB, userId, c.req.valid('param').workspaceId);
    const { name, description } = c.req.valid('json');
    await countKeyMade(c.env.DB, userId);
    return c.json(success(await deployAgent(c.env, { organizationId: organization.id, workspaceId: workspace.id, name, description, createdBy: userId })), 201);
  });

  app.openapi(routes.stop, async (c) => {
    const userId = c.get('session').user.id;
    const { agent, access } = await agentAccess(c.env.DB, userId, c.req.valid('param').agentId);
    requireOwnerOrManager(access, agent, userId, 'stop');
    return c.json(success(await stopAgent(c.env, agent)), 200);
  });

  app.openapi(routes.redeploy, async (c) => {
    const userId = c.get('session').user.id;
    const { agent, access } = await agentAccess(c.env.DB, userId, c.req.valid('param').agentId);
    requireOwnerOrManager(access, agent, userId, 'redeploy');
    await countKeyMade(c.env.DB, userId);
    return c.json(success(await redeployAgent(c.env, agent, userId)), 200);
  });
}
