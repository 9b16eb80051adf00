import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { agentAllowance, listAgents } from '../../services/agents';
import { markEmailConfirmed, createOrganization, createWorkspace, expiryIn, getOrganization, issueKey, revealKey, revokeKey, setKeyExpiry, setKeyLimit, setPlan } from '../../services/accounts';
import { success } from '../../core/envelope';
import { ApiError } from '../../core/errors';
import { humanName } from '../../core/human-name';
import { KEY_SCOPES, secretsEqual } from '../../core/keys';
import { unitsFromCents } from '../../core/money';
import { setCapOverrides, termsOf } from '../../services/plan-caps';
import { CAP_NAMES, type CapName, PLANS } from '../../core/plans';
import { disabledPlatforms, setPlatformDisabled } from '../../services/platform-switches';
import { CATALOG } from '../../operations/catalog';
import { balanceInCents, configureWallet, creditWallet, ledgerEntryInCents, settledStatement } from '../../services/wallet';
import type { AppEnv } from '../../core/context';
import { emailAddress, jsonContent, keyDays } from '../../core/schemas';
import { resumeUnfinishedJobs } from '../../services/jobs/resume';
import { resetTwoFactor } from '../../services/second-factor';

/**
 * The operator API, for the people who run an installation. It is not part of the public reference
 * (`hide`), and when OPS_TOKEN is unset it does not exist at all.
 */
export function requireOpsToken(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const expected = c.env.OPS_TOKEN;
    if (!expected) throw ApiError.notFound(`No route ${c.req.method} ${c.req.path}.`);
    const given = /^Bearer +(\S+)$/i.exec(c.req.header('authorization')?.trim() ?? '')?.[1] ?? '';
    if (!(await secretsEqual(given, expected))) throw ApiError.unauthorized('The operator API needs "Authorization: Bearer <OPS_TOKEN>".');
    await next();
    c.res.headers.set('cache-control', 'no-store');
  };
}

const name = humanName(200);
const id = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[0-9a-f]{24}$`), `Expected ${prefix}_ followed by 24 lowercase hex characters.`);
const keyIdParam = z.object({ id: id('key') });
const organizationIdParam = z.object({ id: id('org') });
const cents = z.number().int().min(0).max(100_000_000);
/** A key's monthly spend limit in whole cents; null: no limit of its own. */
const monthlyLimitCents = cents.nullable();
const anyJson = jsonContent(z.any(), 'OK');

/** The body of the operator's routes about one person, named by their email address. */
const PERSON_BY_EMAIL = { body: { content: { 'application/json': { schema: z.strictObject({ email: emailAddress }) } }, required: true } };

const routes = {
  createOrganization: createRoute({
    method: 'post',
    path: '/ops/v1/organizations',
    hide: true,
    request: { body: { content: { 'application/json': { schema: z.strictObject({ name, plan: z.enum(PLANS).nullable().optional() }) } }, required: true } },
    responses: { 201: anyJson },
  }),
  getOrganization: createRoute({
    method: 'get',
    path: '/ops/v1/organizations/{id}',
    hide: true,
    request: { params: organizationIdParam },
    responses: { 200: anyJson },
  }),
  setPlan: createRoute({
    method: 'put',
    path: '/ops/v1/organizations/{id}/plan',
    hide: true,
    request: {
      params: organizationIdParam,
      body: {
        content: {
          'application/json': {
            schema: z.strictObject({
              plan: z.enum(PLANS).nullable(),
              rpm: z.number().int().min(1).max(1_000_000).nullable().optional(),
              // A cap given as null goes back to the plan's figure.
              caps: z.strictObject(Object.fromEntries(CAP_NAMES.map((name) => [name, z.number().int().min(0).max(1_000_000_000).nullable().optional()]))).optional(),
            }),
          },
        },
        required: true,
      },
    },
    responses: { 200: anyJson },
  }),
  creditWallet: createRoute({
    method: 'post',
    path: '/ops/v1/organizations/{id}/wallet/credit',
    hide: true,
    request: {
      params: organizationIdParam,
      body: {
        content: {
          'application/json': {
            schema: z
              .strictObject({ purchasedCents: cents.optional(), subscriptionCents: cents.optional() })
              .refine((body) => body.purchasedCents !== undefined || body.subscriptionCents !== undefined, {
                message: 'Give purchasedCents, subscriptionCents or both.',
                path: ['purchasedCents'],
              }),
          },
        },
        required: true,
      },
    },
    responses: { 200: anyJson },
  }),
  showWallet: createRoute({ method: 'get', path: '/ops/v1/organizations/{id}/wallet', hide: true, request: { params: organizationIdParam }, responses: { 200: anyJson } }),
  createWorkspace: createRoute({
    method: 'post',
    path: '/ops/v1/workspaces',
    hide: true,
    request: { body: { content: { 'application/json': { schema: z.strictObject({ organizationId: id('org'), name }) } }, required: true } },
    responses: { 201: anyJson },
  }),
  createKey: createRoute({
    method: 'post',
    path: '/ops/v1/keys',
    hide: true,
    request: {
      body: {
        content: {
          'application/json': {
            schema: z
              .strictObject({
                workspaceId: id('ws'),
                scope: z.enum(KEY_SCOPES).default('workspace'),
                name: name.default('API key'),
                monthlyLimitCents: monthlyLimitCents.optional(),
                expiresInDays: keyDays.optional(),
              })
              .refine((body) => body.expiresInDays === undefined || body.scope === 'workspace' || body.scope === 'workspace_mcp', {
                message: 'Only API keys (scope workspace) and MCP tokens (workspace_mcp) are given an expiry.',
                path: ['expiresInDays'],
              }),
          },
        },
        required: true,
      },
    },
    responses: { 201: anyJson },
  }),
  revealKey: createRoute({ method: 'post', path: '/ops/v1/keys/{id}/reveal', hide: true, request: { params: keyIdParam }, responses: { 200: anyJson } }),
  revokeKey: createRoute({ method: 'post', path: '/ops/v1/keys/{id}/revoke', hide: true, request: { params: keyIdParam }, responses: { 200: anyJson } }),
  setKeyLimit: createRoute({
    method: 'put',
    path: '/ops/v1/keys/{id}/limit',
    hide: true,
    request: { params: keyIdParam, body: { content: { 'application/json': { schema: z.strictObject({ monthlyLimitCents }) } }, required: true } },
    responses: { 200: anyJson },
  }),
  setKeyExpiry: createRoute({
    method: 'put',
    path: '/ops/v1/keys/{id}/expiry',
    hide: true,
    request: { params: keyIdParam, body: { content: { 'application/json': { schema: z.strictObject({ expiresInDays: keyDays.nullable() }) } }, required: true } },
    responses: { 200: anyJson },
  }),
  listAgents: createRoute({ method: 'get', path: '/ops/v1/workspaces/{id}/agents', hide: true, request: { params: z.object({ id: id('ws') }) }, responses: { 200: anyJson } }),
  listPlatforms: createRoute({ method: 'get', path: '/ops/v1/platforms', hide: true, responses: { 200: anyJson } }),
  switchPlatform: createRoute({
    method: 'post',
    path: '/ops/v1/platforms/{slug}/{switch}',
    hide: true,
    request: { params: z.object({ slug: z.string().min(1).max(50), switch: z.enum(['disable', 'enable']) }) },
    responses: { 200: anyJson },
  }),
  /** An installation that sends no email: the operator confirms an address they know to be the person's (the free trial waits for it). */
  confirmEmail: createRoute({
    method: 'post',
    path: '/ops/v1/users/confirm-email',
    hide: true,
    request: PERSON_BY_EMAIL,
    responses: { 200: anyJson },
  }),
  /** A person who lost their authenticator app and their recovery codes: their second factor forgotten, every browser signed out, their address told. */
  resetTwoFactor: createRoute({
    method: 'post',
    path: '/ops/v1/users/two-factor-reset',
    hide: true,
    request: PERSON_BY_EMAIL,
    responses: { 200: anyJson },
  }),
  /** npm start, once workerd is up: data jobs a stopped or killed workerd left unfinished run again (Miniflare does not resume them). */
  resumeJobs: createRoute({ method: 'post', path: '/ops/v1/jobs/resume', hide: true, responses: { 200: anyJson } }),
};

/** A slug of the catalog, or 404 PROVIDER_NOT_FOUND listing the valid ones. */
function knownSlug(slug: string): string {
  if (CATALOG.some((platform) => platform.slug === slug)) return slug;
  throw new ApiError('PROVIDER_NOT_FOUND', `No source '${slug}'. Valid slugs: ${CATALOG.map((platform) => platform.slug).join(', ')}.`);
}

export function registerOps(app: OpenAPIHono<AppEnv>) {
  app.use('/ops/v1/*', requireOpsToken());

  app.openapi(routes.createOrganization, async (c) => {
    const organization = await createOrganization(c.env.DB, c.req.valid('json'));
    await configureWallet(c.env, organization);
    return c.json(success(organization), 201);
  });
  app.openapi(routes.getOrganization, async (c) => c.json(success(await getOrganization(c.env.DB, c.req.valid('param').id)), 200));
  app.openapi(routes.setPlan, async (c) => {
    const { caps, ...plan } = c.req.valid('json');
    if (caps) await setCapOverrides(c.env.DB, c.req.valid('param').id, caps as Partial<Record<CapName, number | null>>);
    // A plan change starts a new period with the new plan's allowance in full.
    const organization = await setPlan(c.env, c.req.valid('param').id, plan);
    return c.json(success({ ...organization, caps: (await termsOf(c.env.DB, organization.id)).caps }), 200);
  });
  app.openapi(routes.creditWallet, async (c) => {
    const { id: organizationId } = c.req.valid('param');
    await getOrganization(c.env.DB, organizationId);
    const closed = () => ApiError.conflict(`Organization ${organizationId} is closed: nothing can spend a credit, so none was added.`);
    // Closed before its wallet learnt of closing (organizations closed before 2026-12-01): D1 says so.
    if (await c.env.DB.prepare('SELECT 1 FROM organizations WHERE id = ? AND closed_at IS NOT NULL').bind(organizationId).first()) throw closed();
    const { purchasedCents = 0, subscriptionCents = 0 } = c.req.valid('json');
    const balance = await creditWallet(c.env, organizationId, { purchasedUnits: unitsFromCents(purchasedCents), subscriptionUnits: unitsFromCents(subscriptionCents) });
    if (balance.closed) throw closed();
    return c.json(success({ organizationId, ...balanceInCents(balance) }), 200);
  });
  app.openapi(routes.showWallet, async (c) => {
    const { id: organizationId } = c.req.valid('param');
    await getOrganization(c.env.DB, organizationId);
    const { balance, ledger, storageBytes } = await settledStatement(c.env, organizationId, 50);
    return c.json(success({ organizationId, ...balanceInCents(balance), ledger: ledger.map(ledgerEntryInCents), storageBytes }), 200);
  });
  app.openapi(routes.createWorkspace, async (c) => c.json(success(await createWorkspace(c.env.DB, c.req.valid('json'))), 201));
  app.openapi(routes.createKey, async (c) => {
    const { expiresInDays, ...input } = c.req.valid('json');
    return c.json(success(await issueKey(c.env, { ...input, ...(expiresInDays === undefined ? {} : { expiresAt: expiryIn(expiresInDays) }) })), 201);
  });
  app.openapi(routes.revealKey, async (c) => c.json(success(await revealKey(c.env.DB, c.env.KEY_ENCRYPTION_KEY, c.req.valid('param').id)), 200));
  app.openapi(routes.revokeKey, async (c) => c.json(success(await revokeKey(c.env, c.req.valid('param').id)), 200));
  app.openapi(routes.setKeyLimit, async (c) => c.json(success(await setKeyLimit(c.env, c.req.valid('param').id, c.req.valid('json').monthlyLimitCents)), 200));
  app.openapi(routes.setKeyExpiry, async (c) => c.json(success(await setKeyExpiry(c.env.DB, c.req.valid('param').id, c.req.valid('json').expiresInDays)), 200));
  app.openapi(routes.listAgents, async (c) => {
    const { id: workspaceId } = c.req.valid('param');
    const workspace = await c.env.DB.prepare('SELECT organization_id AS organizationId FROM workspaces WHERE id = ?').bind(workspaceId).first<{ organizationId: string }>();
    if (!workspace) throw ApiError.notFound(`No workspace ${workspaceId}.`);
    const [agents, allowance] = await Promise.all([listAgents(c.env.DB, workspaceId), agentAllowance(c.env.DB, workspace.organizationId)]);
    return c.json(success({ agents, allowance }), 200);
  });
  app.openapi(routes.listPlatforms, async (c) => {
    const disabled = await disabledPlatforms(c.env.DB, (promise) => c.executionCtx.waitUntil(promise));
    return c.json(success({ platforms: CATALOG.map((platform) => ({ slug: platform.slug, serving: !disabled.has(platform.slug) })) }), 200);
  });
  app.openapi(routes.switchPlatform, async (c) => {
    const { slug, switch: change } = c.req.valid('param');
    return c.json(success(await setPlatformDisabled(c.env.DB, knownSlug(slug), change === 'disable')), 200);
  });
  app.openapi(routes.resumeJobs, async (c) => c.json(success(await resumeUnfinishedJobs(c.env)), 200));
  app.openapi(routes.confirmEmail, async (c) => c.json(success(await markEmailConfirmed(c.env.DB, c.req.valid('json').email)), 200));
  app.openapi(routes.resetTwoFactor, async (c) => {
    const reset = await resetTwoFactor(c.env, c.req.valid('json').email);
    console.log(JSON.stringify({ level: 'info', note: 'two-factor sign-in reset by the operator', userId: reset.userId }));
    return c.json(success(reset), 200);
  });
}
