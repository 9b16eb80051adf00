import { nowIso } from '../core/clock';
import type { Env } from '../core/config';
import { ApiError } from '../core/errors';
import { findAgent, stopAgent } from './agents';
import { deleteDatabase } from './databases';
import { gateOf } from './gate';
import { cancelWorkspaceJobs } from './jobs/cancel';
import { deleteEndpoint } from './webhooks/endpoints';

/** The organization keeps one workspace at least: its pages, its first key and its MCP clients all start from one. */
const LAST_WORKSPACE = 'An organization keeps at least one workspace: create another before deleting this one.';

/**
 * Deletes a workspace, for an owner or admin of its organization, so that nothing of it works or waits from the
 * answer on, and its place under the plan's caps is free (the spec's way out of PLAN_LIMIT_REACHED: "upgrade or
 * delete").
 *
 * 1. One guarded statement marks the row deleted, unless it is the organization's last live workspace (409). From
 *    then it reads as missing everywhere, nothing can be made in it (`workspaceIsLive`, live-workspaces.ts), its keys' principals read as
 *    revoked, and it no longer counts against the caps.
 * 2. What it held goes (`letGoOf`), its gate first.
 *
 * Its usage rows and the organization's ledger stay: they are the organization's bill. A deletion whose sweep fails
 * part way is finished by asking again, or by the nightly run (`finishDeletedWorkspaces`).
 */
export async function deleteWorkspace(env: Env, organizationId: string, workspaceId: string): Promise<void> {
  const marked = await env.DB.prepare(
    `UPDATE workspaces SET deleted_at = COALESCE(deleted_at, ?1)
      WHERE id = ?2 AND organization_id = ?3
        AND (deleted_at IS NOT NULL OR (SELECT COUNT(*) FROM workspaces WHERE organization_id = ?3 AND deleted_at IS NULL) > 1)`,
  )
    .bind(nowIso(), workspaceId, organizationId)
    .run();
  if (marked.meta.changes !== 1) throw ApiError.conflict(LAST_WORKSPACE);
  await letGoOf(env, workspaceId);
}

/**
 * Deletes every workspace of an organization that has closed (app/account-deletion.ts): the rule that one stays does
 * not hold for an organization nobody belongs to. Marked in one statement, then each let go of as `deleteWorkspace`
 * does; a sweep cut short is finished by the nightly run.
 */
export async function deleteEveryWorkspaceOf(env: Env, organizationId: string): Promise<void> {
  const { results } = await env.DB.prepare(
    `UPDATE workspaces SET deleted_at = ?1
      WHERE organization_id = ?2 AND deleted_at IS NULL AND EXISTS (SELECT 1 FROM organizations WHERE id = ?2 AND closed_at IS NOT NULL)
      RETURNING id`,
  )
    .bind(nowIso(), organizationId)
    .all<{ id: string }>();
  for (const { id } of results) await letGoOf(env, id);
}

/**
 * What a deleted workspace held, each part safe to run again:
 * - its gate revokes every key of it, for good, before anything else: API keys, MCP tokens, sandbox, agent and job
 *   keys, and OAuth grants (whose calls carry the grant's id to the same gate), so no isolate's memory of a key is
 *   served again;
 * - unfinished data jobs are cancelled in one statement (items in flight finish, billed only if they succeed);
 * - its ways out closed (`closeWaysOut`: agents stopped, webhook endpoints and vendor connections deleted), and its
 *   databases' data destroyed (each bounded by the plan's caps);
 * - keys and OAuth grants are marked revoked and the grants' tokens deleted; the workspace's MCP servers deleted.
 */
async function letGoOf(env: Env, workspaceId: string): Promise<void> {
  await gateOf(env, workspaceId).revokeAll();
  await cancelWorkspaceJobs(env, workspaceId);
  await closeWaysOut(env, workspaceId);
  for (const id of await idsIn(env, 'SELECT id FROM workspace_databases WHERE workspace_id = ?', workspaceId)) await deleteDatabase(env, workspaceId, id);

  const now = nowIso();
  await env.DB.batch([
    env.DB.prepare('UPDATE api_keys SET revoked_at = ? WHERE workspace_id = ? AND revoked_at IS NULL').bind(now, workspaceId),
    env.DB.prepare("UPDATE oauth_grants SET revoked_at = ?, revoked_reason = 'workspace deleted' WHERE workspace_id = ? AND revoked_at IS NULL").bind(now, workspaceId),
    env.DB.prepare('DELETE FROM oauth_tokens WHERE grant_id IN (SELECT id FROM oauth_grants WHERE workspace_id = ?)').bind(workspaceId),
    env.DB.prepare('DELETE FROM mcp_servers WHERE workspace_id = ?').bind(workspaceId),
  ]);
}

/**
 * What carries a workspace's data outward, ended, each part safe to run again: its deployed agents stopped (their
 * keys revoked), its webhook endpoints deleted with their waiting deliveries, its vendor connections (their
 * encrypted secrets) deleted. A deleted workspace lets go of them (`letGoOf`); so does the reset of an account whose
 * address was never confirmed, in the organizations it alone belongs to (app/password-changes.ts).
 */
export async function closeWaysOut(env: Env, workspaceId: string): Promise<void> {
  for (const id of await idsIn(env, "SELECT id FROM agents WHERE workspace_id = ? AND status = 'deployed'", workspaceId)) {
    const agent = await findAgent(env.DB, id);
    if (agent) await stopAgent(env, agent);
  }
  for (const id of await idsIn(env, 'SELECT id FROM webhook_endpoints WHERE workspace_id = ?', workspaceId)) await deleteEndpoint(env, workspaceId, id);
  await env.DB.prepare('DELETE FROM connections WHERE workspace_id = ?').bind(workspaceId).run();
}

/** The ids a query of one workspace answers. */
async function idsIn(env: Env, sql: string, workspaceId: string): Promise<string[]> {
  return (await env.DB.prepare(sql).bind(workspaceId).all<{ id: string }>()).results.map((row) => row.id);
}

/** What a deleted workspace may still hold when its sweep was cut short. */
const LEFT_BEHIND = `
  EXISTS (SELECT 1 FROM api_keys k WHERE k.workspace_id = w.id AND k.revoked_at IS NULL)
  OR EXISTS (SELECT 1 FROM oauth_grants g WHERE g.workspace_id = w.id AND g.revoked_at IS NULL)
  OR EXISTS (SELECT 1 FROM agents a WHERE a.workspace_id = w.id AND a.status = 'deployed')
  OR EXISTS (SELECT 1 FROM data_jobs j WHERE j.workspace_id = w.id AND j.status IN ('queued', 'running', 'waiting_for_credits'))
  OR EXISTS (SELECT 1 FROM workspace_databases d WHERE d.workspace_id = w.id)
  OR EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.workspace_id = w.id)
  OR EXISTS (SELECT 1 FROM connections c WHERE c.workspace_id = w.id)
  OR EXISTS (SELECT 1 FROM mcp_servers s WHERE s.workspace_id = w.id)`;

/** Deleted workspaces finished in one nightly run; the rest wait for the next night. */
export const DELETIONS_FINISHED_A_NIGHT = 20;

/**
 * The nightly run's part: finishes the deletions a failure cut short (an object unreachable while the sweep ran),
 * so a deleted workspace never keeps a secret, an endpoint or an unrevoked key past a night. A workspace that fails
 * again is logged and tried the next night. Answers how many were finished.
 */
export async function finishDeletedWorkspaces(env: Env, limit = DELETIONS_FINISHED_A_NIGHT): Promise<number> {
  const { results } = await env.DB.prepare(`SELECT w.id FROM workspaces w WHERE w.deleted_at IS NOT NULL AND (${LEFT_BEHIND}) ORDER BY w.deleted_at LIMIT ?`)
    .bind(limit)
    .all<{ id: string }>();
  let finished = 0;
  for (const { id } of results) {
    try {
      await letGoOf(env, id);
      finished += 1;
    } catch (error) {
      console.error(JSON.stringify({ level: 'error', note: 'deleted workspace not finished; tried again tomorrow', workspaceId: id, error: String(error) }));
    }
  }
  return finished;
}
