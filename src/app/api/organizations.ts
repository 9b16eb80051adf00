import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { Credits, errorResponses, jsonContent, successEnvelope } from '../../core/schemas';
import { newWorkspace } from '../../services/accounts';
import { type Organization, type Workspace as WorkspaceRecord } from '../../core/records';
import { assertRoomFor, type OrganizationTerms, refuseFull, termsOf } from '../../services/plan-caps';
import { success } from '../../core/envelope';
import { balanceInCents, currentStatement } from '../../services/wallet';
import { PLANS } from '../../core/plans';
import type { DashboardEnv } from '../context';
import { requireVerifiedEmail } from '../email-verification';
import { startTrial } from '../trial';
import { clientAddress, countAttempt, UNATTRIBUTED } from '../../core/throttle';
import { TRIALS_PER_IP } from '../auth/throttle';
import { organizationAccess, requireManager, setTwoFactorRequirement, workspaceAccess } from '../members';
import { ApiError } from '../../core/errors';
import { deleteWorkspace } from '../../services/workspace-deletion';
import { OrganizationUsage, organizationUsage, UsageMonthQuery } from '../../services/usage-report';
import { jsonBody, NameBody, Organization as OrganizationSchema, organizationIdParam, Workspace, workspaceIdParam } from './schemas';

const routes = {
  createWorkspace: createRoute({
    method: 'post',
    path: '/api/organizations/{organizationId}/workspaces',
    tags: ['Organizations'],
    summary: 'Create a workspace (owners and admins)',
    operationId: 'createWorkspace',
    request: { params: organizationIdParam, body: jsonBody(NameBody) },
    responses: { 201: jsonContent(successEnvelope(Workspace), 'The new workspace.'), ...errorResponses(400, 401, 402, 403, 404) },
  }),
  trial: createRoute({
    method: 'post',
    path: '/api/organizations/{organizationId}/trial',
    tags: ['Organizations'],
    summary: 'Start the free trial (owners and admins): the Toolkit plan and its allowance for 14 days, once per organization',
    description:
      'The person starting it must have confirmed their email address by the link sent at sign-up (403 otherwise; POST /api/me/email-verification sends a new one), and one inbox starts one trial (409 TRIAL_ALREADY_USED for a second organization, whatever +tag or Gmail dots tell its address apart). At most three trials a day are started from one client address (an IPv6 client counts as its /64): 429 with Retry-After past that.',
    operationId: 'startTrial',
    request: { params: organizationIdParam },
    responses: {
      201: jsonContent(
        successEnvelope(z.object({ plan: z.enum(PLANS), startedAt: z.string(), endsAt: z.string(), allowanceCents: z.number() }).openapi('Trial')),
        'The trial started; metered calls work from the next request.',
      ),
      ...errorResponses(400, 401, 403, 404, 409, 429),
    },
  }),
  renameOrganization: createRoute({
    method: 'patch',
    path: '/api/organizations/{organizationId}',
    tags: ['Organizations'],
    summary: 'Rename an organization (owners and admins)',
    description: 'Its name shows in the dashboard, on invitations and in the emails they send.',
    operationId: 'renameOrganization',
    request: { params: organizationIdParam, body: jsonBody(NameBody) },
    responses: { 200: jsonContent(successEnvelope(OrganizationSchema), 'The organization, renamed.'), ...errorResponses(400, 401, 403, 404) },
  }),
  setTwoFactorRequirement: createRoute({
    method: 'put',
    path: '/api/organizations/{organizationId}/two-factor-requirement',
    tags: ['Organizations'],
    summary: 'Require two-factor sign-in of every member, or stop (owners, who must have it on themselves)',
    description:
      "From the next request a member without it sees only Settings of the organization's workspaces, its API routes answer them 403, and an MCP client they connected by OAuth is refused, until they turn it on; they cannot turn it off while they belong. API keys and MCP tokens keep working: they are the workspace's. `membersWithout` counts who lacks it now.",
    operationId: 'setTwoFactorRequirement',
    request: { params: organizationIdParam, body: jsonBody(z.strictObject({ required: z.boolean('true or false.') })) },
    responses: {
      200: jsonContent(successEnvelope(z.object({ required: z.boolean(), membersWithout: z.number().int() }).openapi('TwoFactorRequirement')), 'What the organization requires now.'),
      ...errorResponses(400, 401, 403, 404, 409),
    },
  }),
  renameWorkspace: createRoute({
    method: 'patch',
    path: '/api/workspaces/{workspaceId}',
    tags: ['Organizations'],
    summary: 'Rename a workspace (owners and admins)',
    operationId: 'renameWorkspace',
    request: { params: workspaceIdParam, body: jsonBody(NameBody) },
    responses: { 200: jsonContent(successEnvelope(Workspace), 'The workspace, renamed.'), ...errorResponses(400, 401, 403, 404) },
  }),
  deleteWorkspace: createRoute({
    method: 'delete',
    path: '/api/workspaces/{workspaceId}',
    tags: ['Organizations'],
    summary: 'Delete a workspace (owners and admins), freeing its place under the plan',
    description:
      "From the answer on, none of its keys, MCP tokens, agents' keys or OAuth clients is served; its unfinished data jobs are cancelled, its agents stopped, and its databases, vendor connections, webhook endpoints and MCP servers deleted. Its usage stays on the organization's bill. The organization's last workspace cannot be deleted (409). Asking again for a deleted workspace finishes what a failure left.",
    operationId: 'deleteWorkspace',
    request: { params: workspaceIdParam },
    responses: { 200: jsonContent(successEnvelope(z.object({ deleted: z.literal(true) })), 'Deleted.'), ...errorResponses(400, 401, 403, 404, 409) },
  }),
  usage: createRoute({
    method: 'get',
    path: '/api/organizations/{organizationId}/usage',
    tags: ['Organizations'],
    summary: 'What each workspace of the organization spent in a month, deleted ones included',
    operationId: 'getOrganizationUsage',
    request: { params: organizationIdParam, query: UsageMonthQuery },
    responses: { 200: jsonContent(successEnvelope(OrganizationUsage), "The month's calls and spend per workspace."), ...errorResponses(400, 401, 404) },
  }),
  credits: createRoute({
    method: 'get',
    path: '/api/organizations/{organizationId}/credits',
    tags: ['Organizations'],
    summary: "The organization's credit balance, as GET /v1/credits shows it",
    operationId: 'getOrganizationCredits',
    request: { params: organizationIdParam },
    responses: { 200: jsonContent(successEnvelope(Credits), 'Balances of the organization.'), ...errorResponses(400, 401, 404) },
  }),
};

export function registerOrganizations(app: OpenAPIHono<DashboardEnv>) {
  app.openapi(routes.usage, async (c) => {
    const access = await organizationAccess(c.env.DB, c.get('session').user.id, c.req.valid('param').organizationId);
    return c.json(success(await organizationUsage(c.env.DB, access.organization.id, c.req.valid('query'))), 200);
  });

  app.openapi(routes.createWorkspace, async (c) => {
    const access = await organizationAccess(c.env.DB, c.get('session').user.id, c.req.valid('param').organizationId);
    requireManager(access, 'create workspaces');
    const terms = await termsOf(c.env.DB, access.organization.id);
    return c.json(success(await createWorkspaceWithinCap(c.env.DB, terms, { organizationId: access.organization.id, name: c.req.valid('json').name })), 201);
  });

  app.openapi(routes.trial, async (c) => {
    const access = await organizationAccess(c.env.DB, c.get('session').user.id, c.req.valid('param').organizationId);
    requireManager(access, 'start the free trial');
    requireVerifiedEmail(c.get('session').user, 'start the free trial');
    // Deployed, every request has its address from the edge; without one (locally) there is no client to count.
    const address = clientAddress(c.req.raw);
    if (address !== UNATTRIBUTED) await countAttempt(c.env.DB, `trial-ip:${address}`, TRIALS_PER_IP);
    return c.json(success(await startTrial(c.env, access.organization.id, c.get('session').user)), 201);
  });

  app.openapi(routes.renameOrganization, async (c) => {
    const access = await organizationAccess(c.env.DB, c.get('session').user.id, c.req.valid('param').organizationId);
    requireManager(access, 'rename the organization');
    const { name } = c.req.valid('json');
    await c.env.DB.prepare('UPDATE organizations SET name = ? WHERE id = ?').bind(name, access.organization.id).run();
    return c.json(success({ ...access.organization, name }), 200);
  });

  app.openapi(routes.setTwoFactorRequirement, async (c) => {
    const { user } = c.get('session');
    const access = await organizationAccess(c.env.DB, user.id, c.req.valid('param').organizationId);
    const { changed, ...requirement } = await setTwoFactorRequirement(c.env.DB, access, user.id, c.req.valid('json').required);
    if (!changed) c.set('unchanged', true);
    return c.json(success(requirement), 200);
  });

  app.openapi(routes.renameWorkspace, async (c) => {
    const access = await workspaceAccess(c.env.DB, c.get('session').user.id, c.req.valid('param').workspaceId);
    requireManager(access, 'rename workspaces');
    const renamed = await c.env.DB.prepare('UPDATE workspaces SET name = ? WHERE id = ? AND deleted_at IS NULL RETURNING id, organization_id AS organizationId, name, created_at AS createdAt')
      .bind(c.req.valid('json').name, access.workspace.id)
      .first<WorkspaceRecord>();
    if (!renamed) throw ApiError.notFound(`No workspace ${access.workspace.id}.`);
    return c.json(success(renamed), 200);
  });

  app.openapi(routes.deleteWorkspace, async (c) => {
    const { workspaceId } = c.req.valid('param');
    // A deleted workspace is found here too, so that asking again finishes a deletion a failure cut short.
    const owner = await c.env.DB.prepare('SELECT organization_id AS organizationId, deleted_at AS deletedAt FROM workspaces WHERE id = ?')
      .bind(workspaceId)
      .first<{ organizationId: string; deletedAt: string | null }>();
    if (!owner) throw ApiError.notFound(`No workspace ${workspaceId}.`);
    const access = await organizationAccess(c.env.DB, c.get('session').user.id, owner.organizationId).catch((error: unknown) => {
      throw error instanceof ApiError && error.code === 'NOT_FOUND' ? ApiError.notFound(`No workspace ${workspaceId}.`) : error;
    });
    requireManager(access, 'delete workspaces');
    // Asked again to finish a deletion: recorded once, by the first request that answered it done.
    if (owner.deletedAt && (await c.env.DB.prepare("SELECT 1 FROM activity WHERE action = 'workspace.deleted' AND target = ?").bind(workspaceId).first())) c.set('unchanged', true);
    await deleteWorkspace(c.env, access.organization.id, workspaceId);
    return c.json(success({ deleted: true as const }), 200);
  });

  app.openapi(routes.credits, async (c) => {
    const { organization } = await organizationAccess(c.env.DB, c.get('session').user.id, c.req.valid('param').organizationId);
    return c.json(success(await creditsOf(c.env, organization)), 200);
  });
}

/**
 * What GET /v1/credits answers, for the dashboard's own view of an organization: the wallet as it stands, which
 * every workspace's spending reaches within a report interval (REPORT_MS). One object call, however many
 * workspaces the organization has.
 */
export async function creditsOf(env: DashboardEnv['Bindings'], organization: Pick<Organization, 'id' | 'plan'>) {
  const { balance } = await currentStatement(env, organization.id, 0);
  return { organizationId: organization.id, plan: organization.plan, ...balanceInCents(balance) };
}

async function countWorkspaces(db: D1Database, organizationId: string): Promise<number> {
  return (await db.prepare('SELECT COUNT(*) AS n FROM workspaces WHERE organization_id = ? AND deleted_at IS NULL').bind(organizationId).first<{ n: number }>())?.n ?? 0;
}

/**
 * A workspace, if the plan has room for one more (402 otherwise). The count and the insert are one
 * statement, so two workspaces created at once cannot both take the last place.
 */
async function createWorkspaceWithinCap(db: D1Database, terms: OrganizationTerms, input: { organizationId: string; name: string }): Promise<WorkspaceRecord> {
  assertRoomFor(terms, 'workspaces', await countWorkspaces(db, input.organizationId));
  const workspace = newWorkspace(input);
  const inserted = await db
    .prepare(
      `INSERT INTO workspaces (id, organization_id, name, created_at)
       SELECT ?1, ?2, ?3, ?4 WHERE (SELECT COUNT(*) FROM workspaces WHERE organization_id = ?2 AND deleted_at IS NULL) < ?5`,
    )
    .bind(workspace.id, workspace.organizationId, workspace.name, workspace.createdAt, terms.caps!.workspaces)
    .run();
  if (inserted.meta.changes !== 1) refuseFull(terms, 'workspaces', await countWorkspaces(db, input.organizationId));
  return workspace;
}
