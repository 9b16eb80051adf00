import { z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import { nowIso } from '../core/clock';
import type { DashboardEnv } from './context';

/**
 * The organization's activity: what its people changed through the dashboard, for its owners and admins to read (who
 * made that key, who removed that member, who cancelled the plan). One middleware records every change the table
 * below names once it has succeeded, from the route it took: the organization from the path (or the path's
 * workspace), the person from the session, the target from the path (or, for what a route creates, the answer's id).
 * A route not in the table records nothing; reads never do.
 */
interface Audited {
  action: string;
  /** The path parameter naming what was changed; `created`: the id in the answer. */
  target?: string | 'created';
  /** A short word on the change, from the answer's data (a new key's name, a role). */
  detail?: (data: Record<string, unknown>) => unknown;
}

const named = (data: Record<string, unknown>) => data.name;
const expiryDetail = (data: Record<string, unknown>) => (typeof data.expiresAt === 'string' ? `expires ${data.expiresAt.slice(0, 16).replace('T', ' ')} UTC` : 'never expires');
const hostOf = (url: unknown) => {
  try {
    return typeof url === 'string' ? new URL(url).host : undefined;
  } catch {
    return undefined;
  }
};

export const AUDITED: Record<string, Audited> = {
  'POST /api/workspaces/:workspaceId/keys': { action: 'key.created', target: 'created', detail: named },
  'POST /api/workspaces/:workspaceId/keys/:keyId/reveal': { action: 'key.revealed', target: 'keyId' },
  'POST /api/workspaces/:workspaceId/keys/:keyId/revoke': { action: 'key.revoked', target: 'keyId' },
  'PUT /api/workspaces/:workspaceId/keys/:keyId/limit': { action: 'key.limit_changed', target: 'keyId', detail: (data) => (data.monthlyLimitCents === null ? 'no limit' : `${String(data.monthlyLimitCents)} cents a month`) },
  'PUT /api/workspaces/:workspaceId/keys/:keyId/expiry': { action: 'key.expiry_changed', target: 'keyId', detail: (data) => expiryDetail(data) },
  'PUT /api/organizations/:organizationId/two-factor-requirement': { action: 'organization.two_factor_requirement_changed', detail: (data) => (data.required ? 'required of every member' : 'not required') },
  'POST /api/workspaces/:workspaceId/mcp-tokens': { action: 'mcp_token.created', target: 'created', detail: named },
  'PUT /api/workspaces/:workspaceId/mcp-tokens/:tokenId/expiry': { action: 'mcp_token.expiry_changed', target: 'tokenId', detail: (data) => expiryDetail(data) },
  'POST /api/workspaces/:workspaceId/mcp-tokens/:tokenId/revoke': { action: 'mcp_token.revoked', target: 'tokenId' },
  'POST /api/workspaces/:workspaceId/sandbox-keys': { action: 'sandbox_key.created', target: 'created', detail: named },
  'POST /api/workspaces/:workspaceId/sandbox-keys/:keyId/revoke': { action: 'sandbox_key.revoked', target: 'keyId' },
  'POST /api/workspaces/:workspaceId/oauth-clients/:grantId/revoke': { action: 'oauth_grant.revoked', target: 'grantId' },
  'POST /api/workspaces/:workspaceId/mcp-servers': { action: 'mcp_server.created', target: 'created', detail: named },
  'POST /api/workspaces/:workspaceId/mcp-servers/:serverId/default': { action: 'mcp_server.made_default', target: 'serverId' },
  'DELETE /api/workspaces/:workspaceId/mcp-servers/:serverId': { action: 'mcp_server.deleted', target: 'serverId' },
  'POST /api/workspaces/:workspaceId/vendor-connections': { action: 'vendor_connection.added', target: 'created', detail: (data) => data.vendor },
  'DELETE /api/workspaces/:workspaceId/vendor-connections/:connectionId': { action: 'vendor_connection.removed', target: 'connectionId' },
  // The host only: some endpoints' URLs are themselves a credential (a chat app's incoming hook).
  'POST /api/workspaces/:workspaceId/webhook-endpoints': { action: 'webhook_endpoint.added', target: 'created', detail: (data) => hostOf(data.url) },
  'DELETE /api/workspaces/:workspaceId/webhook-endpoints/:endpointId': { action: 'webhook_endpoint.removed', target: 'endpointId' },
  'POST /api/workspaces/:workspaceId/webhook-endpoints/:endpointId/rotate-secret': { action: 'webhook_endpoint.secret_rotated', target: 'endpointId' },
  'POST /api/workspaces/:workspaceId/jobs': { action: 'job.submitted', target: 'created', detail: (data) => `${String(data.operation)}, ${String(data.items)} item${data.items === 1 ? '' : 's'}` },
  'POST /api/workspaces/:workspaceId/jobs/:jobId/cancel': { action: 'job.cancelled', target: 'jobId' },
  'POST /api/workspaces/:workspaceId/databases': { action: 'database.created', target: 'created', detail: named },
  'DELETE /api/workspaces/:workspaceId/databases/:databaseId': { action: 'database.deleted', target: 'databaseId' },
  'POST /api/workspaces/:workspaceId/agents': { action: 'agent.deployed', target: 'created', detail: named },
  'POST /api/agents/:agentId/stop': { action: 'agent.stopped', target: 'agentId', detail: named },
  'POST /api/agents/:agentId/deploy': { action: 'agent.redeployed', target: 'agentId', detail: named },
  'PATCH /api/workspaces/:workspaceId': { action: 'workspace.renamed', target: 'workspaceId', detail: named },
  'DELETE /api/workspaces/:workspaceId': { action: 'workspace.deleted', target: 'workspaceId' },
  'POST /api/organizations/:organizationId/workspaces': { action: 'workspace.created', target: 'created', detail: named },
  'PATCH /api/organizations/:organizationId': { action: 'organization.renamed', detail: named },
  'POST /api/organizations/:organizationId/trial': { action: 'trial.started' },
  'PUT /api/organizations/:organizationId/billing/renewal': { action: 'plan.renewal_changed', detail: (data) => (data.renews ? 'renews' : `ends ${String(data.endsAt ?? '').slice(0, 10)}`) },
  'POST /api/organizations/:organizationId/invitations': { action: 'member.invited', target: 'created', detail: (data) => data.email },
  'POST /api/organizations/:organizationId/invitations/:invitationId/revoke': { action: 'invitation.revoked', target: 'invitationId' },
  'PATCH /api/organizations/:organizationId/members/:userId': { action: 'member.role_changed', target: 'userId', detail: (data) => data.role },
  'DELETE /api/organizations/:organizationId/members/:userId': { action: 'member.removed', target: 'userId' },
  // The organization is the answer's: the path names only the invitation's token (never recorded).
  'POST /api/invitations/:token/accept': { action: 'member.joined', detail: (data) => data.role },
};

/** The values of a route pattern's parameters in a path (`/api/workspaces/:workspaceId` and its path). */
function paramsOf(pattern: string, path: string): Record<string, string> {
  const names = pattern.split('/');
  const values = path.split('/');
  return Object.fromEntries(names.flatMap((name, index) => (name.startsWith(':') && values[index] ? [[name.slice(1), decodeURIComponent(values[index])]] : [])));
}

/** Records each audited change that succeeded; a failure to record is logged, never the request's. */
export function recordActivity(): MiddlewareHandler<DashboardEnv> {
  return async (c, next) => {
    await next();
    if (c.req.method === 'GET' || c.res.status >= 300 || c.get('unchanged')) return;
    const pattern = routePath(c, -1);
    const audited = AUDITED[`${c.req.method} ${pattern}`];
    const session = c.get('session');
    if (!audited || !session) return;
    try {
      const params = paramsOf(pattern, c.req.path);
      const needsAnswer = audited.target === 'created' || audited.detail;
      const data = needsAnswer ? (((await c.res.clone().json()) as { data?: Record<string, unknown> }).data ?? {}) : {};
      const target = audited.target === 'created' ? data.id : audited.target ? params[audited.target] : undefined;
      const detail = audited.detail?.(data);
      const organizationId = params.organizationId ?? (typeof data.organizationId === 'string' ? data.organizationId : null);
      await recordChange(c.env.DB, {
        organizationId,
        workspaceId: params.workspaceId ?? null,
        agentId: params.agentId ?? null,
        actorUserId: session.user.id,
        action: audited.action,
        target: typeof target === 'string' ? target : null,
        detail: typeof detail === 'string' ? detail : null,
      });
    } catch (error) {
      console.error(JSON.stringify({ level: 'error', note: 'activity not recorded', route: `${c.req.method} ${pattern}`, error: String(error) }));
    }
  };
}

/**
 * Writes one change to the organization's activity: its organization given, or the workspace's (the agent's, when only
 * an agent is named). What the middleware records, and what a handler records itself when its path names no
 * workspace (an MCP client's consent names it in the body).
 */
export async function recordChange(
  db: D1Database,
  change: { organizationId?: string | null; workspaceId?: string | null; agentId?: string | null; actorUserId: string | null; action: string; target?: string | null; detail?: string | null },
): Promise<void> {
  await db
    .prepare(
      `INSERT INTO activity (organization_id, workspace_id, actor_user_id, action, target, detail, created_at)
       SELECT COALESCE(?1, w.organization_id), w.id, ?3, ?4, ?5, ?6, ?7
         FROM (SELECT 1) LEFT JOIN workspaces w ON w.id = COALESCE(?2, (SELECT workspace_id FROM agents WHERE id = ?8))
        WHERE COALESCE(?1, w.organization_id) IS NOT NULL`,
    )
    .bind(change.organizationId ?? null, change.workspaceId ?? null, change.actorUserId, change.action, change.target ?? null, change.detail?.slice(0, 200) ?? null, nowIso(), change.agentId ?? null)
    .run();
}

export const ActivityEvent = z
  .object({
    id: z.number().int(),
    at: z.string(),
    action: z.string().openapi({ description: 'What was done, as `object.verb`: key.created, member.removed, plan.renewal_changed…', example: 'key.revoked' }),
    actor: z
      .object({ id: z.string(), name: z.string(), email: z.string() })
      .nullable()
      .openapi({ description: "Who did it; null for an account deleted since, and for what Stripe's webhook applied (the `billing.*` actions: a payment, a plan paid for, renewed or ended)." }),
    workspace: z.object({ id: z.string(), name: z.string() }).nullable(),
    target: z.string().nullable().openapi({ description: 'The id of what was changed.' }),
    detail: z.string().nullable(),
  })
  .openapi('ActivityEvent');
export type ActivityEvent = z.infer<typeof ActivityEvent>;

export const ActivityQuery = z.strictObject({
  before: z.coerce.number().int().positive().optional().openapi({ description: 'Events older than this id (the `nextBefore` of the page before).' }),
  limit: z.coerce.number().int().min(1).max(100).default(50),
});

export const ActivityPage = z.object({ events: z.array(ActivityEvent), nextBefore: z.number().int().nullable() }).openapi('ActivityPage');

/** A page of the organization's activity, newest first. */
export async function activityOf(db: D1Database, organizationId: string, { before, limit }: z.infer<typeof ActivityQuery>): Promise<z.infer<typeof ActivityPage>> {
  const { results } = await db
    .prepare(
      `SELECT a.id, a.created_at AS at, a.action, a.target, a.detail, a.actor_user_id AS actorId, u.name AS actorName, u.email AS actorEmail, u.deleted_at AS actorDeletedAt,
              a.workspace_id AS workspaceId, w.name AS workspaceName
         FROM activity a LEFT JOIN users u ON u.id = a.actor_user_id LEFT JOIN workspaces w ON w.id = a.workspace_id
        WHERE a.organization_id = ?1 AND a.id < ?2
        ORDER BY a.id DESC LIMIT ?3`,
    )
    .bind(organizationId, before ?? Number.MAX_SAFE_INTEGER, limit + 1)
    .all<{ id: number; at: string; action: string; target: string | null; detail: string | null; actorId: string | null; actorName: string | null; actorEmail: string | null; actorDeletedAt: string | null; workspaceId: string | null; workspaceName: string | null }>();
  const events = results.slice(0, limit).map((row) => ({
    id: row.id,
    at: row.at,
    action: row.action,
    actor: row.actorId && row.actorEmail && !row.actorDeletedAt ? { id: row.actorId, name: row.actorName ?? '', email: row.actorEmail } : null,
    workspace: row.workspaceId && row.workspaceName !== null ? { id: row.workspaceId, name: row.workspaceName } : null,
    target: row.target,
    detail: row.detail,
  }));
  return { events, nextBefore: results.length > limit ? events.at(-1)!.id : null };
}
