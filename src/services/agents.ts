import { z } from '@hono/zod-openapi';
import { issueKey, revokeKey } from './accounts';
import { nowIso } from '../core/clock';
import type { Env } from '../core/config';
import { ApiError } from '../core/errors';
import { isLiveWorkspace, workspaceIsLive } from './live-workspaces';
import { newId } from '../core/ids';
import { type OrganizationTerms, refuseFull, termsOf } from './plan-caps';
import { monthRange, runtimeHoursUsed, runtimeMonth } from './runtime-hours';

export const AGENT_ID = /^agt_[0-9a-f]{24}$/;

/** A deployed (or stopped) agent as the dashboard shows it; its key's secret only in the answer that minted it. */
export const Agent = z
  .object({
    id: z.string().openapi({ example: 'agt_5f1c2a9b7d3e4f6a8b0c1d2e' }),
    workspaceId: z.string(),
    name: z.string().openapi({ example: 'lead researcher' }),
    description: z.string().nullable(),
    status: z.enum(['deployed', 'stopped']).openapi({ description: 'deployed: its key works on /runtime/*; stopped: its key is revoked and it counts against no cap.' }),
    keyId: z.string().nullable().openapi({ description: 'The key (scope agent) of the current or last deployment.' }),
    keyHint: z.string().nullable().openapi({ description: 'That key\'s prefix and last four characters, safe to show.' }),
    createdBy: z.string().nullable(),
    createdAt: z.string(),
    deployedAt: z.string().openapi({ description: 'When it was last deployed.' }),
    stoppedAt: z.string().nullable(),
    runtimeHoursThisMonth: z.number().int().openapi({ description: 'Clock hours (UTC) of this calendar month in which it made a /runtime/data call.' }),
  })
  .openapi('Agent');
export type Agent = z.infer<typeof Agent>;

export const AgentWithKey = Agent.extend({
  key: z.string().openapi({ description: "The agent's key, scope agent, for /runtime/*. Shown this once: to replace it, stop and redeploy the agent." }),
}).openapi('AgentWithKey');

export const DeployAgent = z
  .strictObject({
    name: z.string().trim().min(1, 'Required.').max(100, 'At most 100 characters.').openapi({ description: 'Unique among the workspace\'s deployed agents.', example: 'lead researcher' }),
    description: z
      .string()
      .trim()
      .max(500, 'At most 500 characters.')
      .optional()
      .transform((text) => (text ? text : null))
      .openapi({ description: 'What it does, for the people of the workspace.', example: 'Finds companies and their people every morning.' }),
  })
  .openapi('DeployAgent');

/** What the Agents page says about the organization: deployed agents and runtime hours this month against the caps. */
export const AgentAllowance = z
  .object({
    deployed: z.number().int().openapi({ description: "Deployed agents across the organization's workspaces." }),
    agentsLimit: z.number().int().nullable().openapi({ description: "The plan's agents cap; null without a plan." }),
    runtimeHours: z.number().int().openapi({ description: "The organization's agent-hours this calendar month (UTC)." }),
    runtimeHoursLimit: z.number().int().nullable().openapi({ description: "The plan's runtimeHours cap; null without a plan." }),
    monthEndsAt: z.string().openapi({ description: 'When the runtime hours start again from zero.' }),
  })
  .openapi('AgentAllowance');
export type AgentAllowance = z.infer<typeof AgentAllowance>;

const COLUMNS = `a.id, a.workspace_id AS workspaceId, a.name, a.description, a.status, a.key_id AS keyId, k.key_hint AS keyHint,
  a.created_by AS createdBy, a.created_at AS createdAt, a.deployed_at AS deployedAt, a.stopped_at AS stoppedAt,
  (SELECT COUNT(*) FROM agent_hours h WHERE h.agent_id = a.id AND h.hour >= ?1 AND h.hour < ?2) AS runtimeHoursThisMonth`;
const FROM = 'FROM agents a LEFT JOIN api_keys k ON k.id = a.key_id';

/** An agent with where it lives, for routes that name only the agent. */
export type AgentRecord = Agent & { organizationId: string };

/** The workspace's agents, deployed first, then newest first. */
export async function listAgents(db: D1Database, workspaceId: string): Promise<Agent[]> {
  const { results } = await db
    .prepare(`SELECT ${COLUMNS} ${FROM} WHERE a.workspace_id = ?3 ORDER BY a.status = 'deployed' DESC, a.created_at DESC, a.id DESC`)
    .bind(...monthRange(), workspaceId)
    .all<Agent>();
  return results;
}

/** One agent, whatever its workspace; the caller checks the person may see that workspace. */
export async function findAgent(db: D1Database, id: string): Promise<AgentRecord | null> {
  if (!AGENT_ID.test(id)) return null;
  return db.prepare(`SELECT ${COLUMNS}, a.organization_id AS organizationId ${FROM} WHERE a.id = ?3`).bind(...monthRange(), id).first<AgentRecord>();
}

/** Deployed agents and this month's runtime hours of the organization, against its plan's caps. */
export async function agentAllowance(db: D1Database, organizationId: string, terms?: OrganizationTerms): Promise<AgentAllowance> {
  const [known, deployed, hours] = await Promise.all([terms ?? termsOf(db, organizationId), countDeployed(db, organizationId), runtimeHoursUsed(db, organizationId)]);
  return {
    deployed,
    agentsLimit: known.caps?.agents ?? null,
    runtimeHours: hours,
    runtimeHoursLimit: known.caps?.runtimeHours ?? null,
    monthEndsAt: new Date(runtimeMonth().end).toISOString(),
  };
}

async function countDeployed(db: D1Database, organizationId: string): Promise<number> {
  return (await db.prepare("SELECT COUNT(*) AS n FROM agents WHERE organization_id = ? AND status = 'deployed'").bind(organizationId).first<{ n: number }>())?.n ?? 0;
}

/**
 * The gate before any deployment: a plan in force (the free trial is one). Credits alone do not open it:
 * metered calls need a plan whatever the balance, so an agent without one could not make a single call.
 */
function assertMayDeploy(terms: OrganizationTerms): asserts terms is OrganizationTerms & { caps: NonNullable<OrganizationTerms['caps']> } {
  if (terms.plan && terms.caps) return;
  throw new ApiError(
    'DEPLOY_GATE_FAILED',
    'Deploying an agent needs a plan or the free trial, and this organization has neither. Start the free trial (once per organization, from the API keys page) or subscribe on the Plans page; credits alone cannot be spent without a plan.',
  );
}

/** Refuses one more deployed agent past the cap, with the figures as they are now (the statement that refused saw at least the cap). */
async function refuseAgentsCap(db: D1Database, terms: OrganizationTerms, organizationId: string): Promise<never> {
  return refuseFull(terms, 'agents', await countDeployed(db, organizationId));
}

function nameTaken(name: string): ApiError {
  return ApiError.conflict(`This workspace already has a deployed agent named '${name}'. Choose another name, or stop that agent first.`);
}

const isUniqueViolation = (error: unknown) => /UNIQUE constraint failed/.test(String(error));

/**
 * Deploys an agent: the gate (a plan), then its row, if the organization's `agents` cap has room (the
 * count and the insert are one statement, so deployments at once cannot pass the cap together), then
 * its key, minted with scope agent. Answers the key's secret, the only time it leaves the server.
 */
export async function deployAgent(
  env: Env,
  input: { organizationId: string; workspaceId: string; name: string; description: string | null; createdBy: string | null },
): Promise<Agent & { key: string }> {
  const terms = await termsOf(env.DB, input.organizationId);
  assertMayDeploy(terms);
  const id = newId('agt');
  const now = nowIso();
  let inserted: D1Result;
  try {
    inserted = await env.DB.prepare(
      `INSERT INTO agents (id, organization_id, workspace_id, name, description, status, created_by, created_at, deployed_at)
       SELECT ?1, ?2, ?3, ?4, ?5, 'deployed', ?6, ?7, ?7
        WHERE (SELECT COUNT(*) FROM agents WHERE organization_id = ?2 AND status = 'deployed') < ?8 AND ${workspaceIsLive('?3')}`,
    )
      .bind(id, input.organizationId, input.workspaceId, input.name, input.description, input.createdBy, now, terms.caps.agents)
      .run();
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(input.name);
    throw error;
  }
  if (inserted.meta.changes !== 1 && !(await isLiveWorkspace(env.DB, input.workspaceId))) throw ApiError.notFound(`No workspace ${input.workspaceId}.`);
  if (inserted.meta.changes !== 1) return refuseAgentsCap(env.DB, terms, input.organizationId);
  return withNewKey(env, id, input.createdBy, async () => {
    await env.DB.prepare('DELETE FROM agents WHERE id = ? AND key_id IS NULL').bind(id).run();
  });
}

/**
 * Stops an agent: its key is revoked (the workspace's gate first, so the very next /runtime call is
 * 401), then the row, which frees its place under the cap. Stopping a stopped agent changes nothing.
 * A deployment again that ran meanwhile may have given the row another key since it was read: the
 * stop answers the key the row has, and that one is revoked too (`withNewKey` writes no key on a
 * stopped row, so none comes after).
 */
export async function stopAgent(env: Env, agent: AgentRecord): Promise<Agent> {
  if (agent.keyId) await revokeKey(env, agent.keyId);
  const stopped = await env.DB.prepare("UPDATE agents SET status = 'stopped', stopped_at = ? WHERE id = ? AND status = 'deployed' RETURNING key_id AS keyId")
    .bind(nowIso(), agent.id)
    .first<{ keyId: string | null }>();
  if (stopped?.keyId && stopped.keyId !== agent.keyId) await revokeKey(env, stopped.keyId);
  const { organizationId: _organization, ...now } = (await findAgent(env.DB, agent.id))!;
  return now;
}

/**
 * Deploys a stopped agent again, under the same gate and cap as a first deployment, with a new key; the
 * old one stays revoked. A deployed agent is 409: stop it first.
 */
export async function redeployAgent(env: Env, agent: AgentRecord, by: string | null): Promise<Agent & { key: string }> {
  if (agent.status === 'deployed') throw ApiError.conflict(`Agent ${agent.id} is deployed already. Stop it first to deploy it again with a new key.`);
  const terms = await termsOf(env.DB, agent.organizationId);
  assertMayDeploy(terms);
  let updated: D1Result;
  try {
    updated = await env.DB.prepare(
      `UPDATE agents SET status = 'deployed', deployed_at = ?2, stopped_at = NULL
        WHERE id = ?1 AND status = 'stopped'
          AND (SELECT COUNT(*) FROM agents WHERE organization_id = ?3 AND status = 'deployed') < ?4`,
    )
      .bind(agent.id, nowIso(), agent.organizationId, terms.caps.agents)
      .run();
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(agent.name);
    throw error;
  }
  if (updated.meta.changes !== 1) {
    const now = await findAgent(env.DB, agent.id);
    // Gone meanwhile: the nightly run deletes agents stopped 13 months back (record-retention.ts).
    if (!now) throw ApiError.notFound(`No agent ${agent.id}.`);
    if (now.status === 'deployed') throw ApiError.conflict(`Agent ${agent.id} was deployed again meanwhile.`);
    return refuseAgentsCap(env.DB, terms, agent.organizationId);
  }
  return withNewKey(env, agent.id, by, async () => {
    await env.DB.prepare("UPDATE agents SET status = 'stopped', stopped_at = ? WHERE id = ?").bind(nowIso(), agent.id).run();
  });
}

/** Mints the deployment's key and records it on the row; were minting to fail, `undo` takes the deployment back. */
async function withNewKey(env: Env, agentId: string, by: string | null, undo: () => Promise<void>): Promise<Agent & { key: string }> {
  const row = (await findAgent(env.DB, agentId))!;
  let key: Awaited<ReturnType<typeof issueKey>>;
  try {
    key = await issueKey(env, { workspaceId: row.workspaceId, scope: 'agent', name: `agent: ${row.name}`, createdBy: by });
  } catch (error) {
    await undo();
    throw error;
  }
  // Only on a row still deployed: one stopped meanwhile revoked the key it had, and must not be given a live one.
  const recorded = await env.DB.prepare("UPDATE agents SET key_id = ? WHERE id = ? AND status = 'deployed'").bind(key.id, agentId).run();
  if (recorded.meta.changes !== 1) {
    await revokeKey(env, key.id);
    throw ApiError.conflict(`Agent ${agentId} was stopped while it was being deployed; deploy it again.`);
  }
  const { organizationId: _organization, ...agent } = (await findAgent(env.DB, agentId))!;
  return { ...agent, key: key.key };
}
