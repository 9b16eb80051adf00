import { nowIso } from '../core/clock';
import type { Env } from '../core/config';
import { ApiError } from '../core/errors';
import { stopAgent, findAgent } from './agents';
import { deleteDatabase } from './databases';
import { gateOf } from './gate';
import { cancelJob } from './jobs/cancel';
import { findJob } from './jobs/store';
import { deleteEndpoint } from './webhooks/endpoints';

/** The organization keeps one workspace at least: its pages, its first key and its MCP clients all start from one. */
const LAST_WORKSPACE = 'An organization keeps at least one workspace: create another before deleting this one.';

/**
 * Deletes a workspace, for an owner or admin of its organization, so that nothing of it works or waits from the
 * answer on, and its place under the plan's cap is free (the spec's way out of PLAN_LIMIT_REACHED: "upgrade or
 * delete").
 *
 * 1. Its gate revokes every key of it first (API keys, MCP tokens, sandbox, agent and job keys, and OAuth
 *    grants, whose calls carry the grant's id to the same gate), for good, so no isolate's memory of a key and no
 *    key made while this runs is served again.
 * 2. The row is marked deleted, unless it is the organization's last live workspace (409, and the gate's
 *    revocation is undone). From then it reads as missing everywhere, its keys' principals read as revoked, and it
 *    no longer counts against the cap.
 * 3. What it held goes: unfinished data jobs are cancelled (items in flight finish, billed only if they succeed),
 *    agents stopped, keys and OAuth grants marked revoked, databases' data destroyed, vendor connections' secrets,
 *    webhook endpoints with their waiting deliveries, and its own MCP servers deleted.
 *
 * Its usage rows and the organization's ledger stay: they are the organization's bill. A deletion that fails part
 * way through step 3 is finished by asking again, which an already deleted workspace allows.
 */
export async function deleteWorkspace(env: Env, organizationId: string, workspaceId: string): Promise<void> {
  const gate = gateOf(env, workspaceId);
  await gate.revokeAll();
  const marked = await env.DB.prepare(
    `UPDATE workspaces SET deleted_at = COALESCE(deleted_at, ?1)
      WHERE id = ?2 AND organization_id = ?3
        AND (deleted_at IS NOT NULL OR (SELECT COUNT(*) FROM workspaces WHERE organization_id = ?3 AND deleted_at IS NULL) > 1)`,
  )
    .bind(nowIso(), workspaceId, organizationId)
    .run();
  if (marked.meta.changes !== 1) {
    await gate.restoreAll();
    throw ApiError.conflict(LAST_WORKSPACE);
  }
  await letGoOf(env, workspaceId);
}

/** Step 3: what a deleted workspace held. Each part is safe to run again. */
async function letGoOf(env: Env, workspaceId: string): Promise<void> {
  const ids = async (sql: string) => (await env.DB.prepare(sql).bind(workspaceId).all<{ id: string }>()).results.map((row) => row.id);

  for (const id of await ids("SELECT id FROM data_jobs WHERE workspace_id = ? AND status IN ('queued', 'running', 'waiting_for_credits')")) {
    const job = await findJob(env.DB, id);
    if (job) await cancelJob(env, job);
  }
  for (const id of await ids("SELECT id FROM agents WHERE workspace_id = ? AND status = 'deployed'")) {
    const agent = await findAgent(env.DB, id);
    if (agent) await stopAgent(env, agent);
  }
  for (const id of await ids('SELECT id FROM workspace_databases WHERE workspace_id = ?')) await deleteDatabase(env, workspaceId, id);
  for (const id of await ids('SELECT id FROM webhook_endpoints WHERE workspace_id = ?')) await deleteEndpoint(env, workspaceId, id);

  const now = nowIso();
  await env.DB.batch([
    env.DB.prepare('UPDATE api_keys SET revoked_at = ? WHERE workspace_id = ? AND revoked_at IS NULL').bind(now, workspaceId),
    env.DB.prepare("UPDATE oauth_grants SET revoked_at = ?, revoked_reason = 'workspace deleted' WHERE workspace_id = ? AND revoked_at IS NULL").bind(now, workspaceId),
    env.DB.prepare(`DELETE FROM oauth_tokens WHERE grant_id IN (SELECT id FROM oauth_grants WHERE workspace_id = ?)`).bind(workspaceId),
    env.DB.prepare('DELETE FROM connections WHERE workspace_id = ?').bind(workspaceId),
    env.DB.prepare('DELETE FROM mcp_servers WHERE workspace_id = ?').bind(workspaceId),
  ]);
}
