import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../core/context';
import { hasExpired, type KeyPrincipal, MAKER_LACKS_TWO_FACTOR } from '../core/records';
import type { McpAuthentication } from '../core/protocols/mcp-gateway';
import { publicUrls, type Env } from '../core/config';
import { ApiError } from '../core/errors';
import { gateOf } from './gate';
import { KEY_PATTERN, type KeyScope } from '../core/keys';
import { resolvePrincipal } from './principal-cache';

/** Where each non-workspace scope belongs, for the 403 on /v1 (spec "Key scopes"). */
const SCOPE_REFUSAL: Record<Exclude<KeyScope, 'workspace'>, string> = {
  agent: 'an agent key works only on the runtime surface, not on /v1: {base}/runtime/data/<slug>/<operation> (the operations of /v1/data) and {base}/runtime/agent',
  data_job: "a data-job key works only on /runtime/* routes, not on /v1",
  workspace_dryrun: "a dry-run key works only on /runtime/* routes, not on /v1",
  workspace_mcp: 'a workspace MCP bearer unlocks the MCP endpoint only; use it at {mcp}',
  meta_agent: 'a meta_agent key is server-internal and refused on every inbound surface',
};

/** Why every scope but a deployed agent's and a data job's is refused on /runtime/*. */
const RUNTIME_REFUSAL: Record<Exclude<KeyScope, 'agent' | 'data_job' | 'workspace_dryrun'>, string> = {
  workspace: "/runtime/* takes a deployed agent's key (deploy one on the dashboard's Agents page); a workspace key belongs on /v1",
  workspace_mcp: 'a workspace MCP bearer unlocks the MCP endpoint only; use it at {mcp}',
  meta_agent: 'a meta_agent key is server-internal and refused on every inbound surface',
};

/** The way in, attached to every 401 on /v1 so an agent that hit the wall can find the door. */
export function howToGetAccess(env: Env) {
  const urls = publicUrls(env);
  return {
    how_to_get_access: {
      mcp_install_url: urls.mcp,
      signup_url: urls.signup,
      docs_url: urls.docs,
      openapi_url: urls.openapi,
    },
  };
}

/** Why a key is refused on a surface, or null when the surface takes it. */
type Refusal = (principal: KeyPrincipal) => string | null;

const refusedOnV1: Refusal = (principal) => (principal.scope === 'workspace' ? null : SCOPE_REFUSAL[principal.scope]);

const refusedOnRuntime: Refusal = (principal) => {
  // A data job's key, minted per run: the gate refuses it (401) once its job has ended or was cancelled.
  if (principal.scope === 'data_job') return null;
  // A sandbox key: /runtime/data answers each operation's documented example, at no cost (services/sandbox.ts).
  if (principal.scope === 'workspace_dryrun') return null;
  if (principal.scope !== 'agent') return RUNTIME_REFUSAL[principal.scope];
  return principal.agentId ? null : 'this agent key belongs to no deployed agent; agent keys are minted by deploying an agent in the dashboard';
};

/**
 * REST authentication, spec rules 1-5: only `Authorization: Bearer <key>`, resolved by its SHA-256
 * (or remembered), then the scope check, then the workspace's gate, which knows revoked keys. Routes
 * whose handler talks to the gate anyway (`checkedByHandler`: metered calls, `/v1/credits`) have it
 * check the key in that same message, so each request costs one gate call, never two.
 */
export function requireApiKey(checkedByHandler: (method: string, path: string) => boolean = () => false): MiddlewareHandler<AppEnv> {
  return keyAuthentication(refusedOnV1, checkedByHandler);
}

/** The same rules on /runtime/*, which takes only the keys minted for a deployed agent (scope agent) or a data job's run (scope data_job). */
export function requireAgentKey(checkedByHandler: (method: string, path: string) => boolean = () => false): MiddlewareHandler<AppEnv> {
  return keyAuthentication(refusedOnRuntime, checkedByHandler);
}

function keyAuthentication(refusalOf: Refusal, checkedByHandler: (method: string, path: string) => boolean): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const refuse = (message: string) => ApiError.unauthorized(message, howToGetAccess(c.env));
    if (c.req.header('x-api-key') !== undefined) {
      throw refuse('The x-api-key header is not accepted. Send the key as "Authorization: Bearer <key>".');
    }
    const header = c.req.header('authorization');
    if (header === undefined) throw refuse('Missing Authorization header. Send "Authorization: Bearer <key>".');
    const match = /^Bearer(?: +(\S*))?$/i.exec(header.trim());
    if (!match) throw refuse('Malformed Authorization header. Expected "Bearer <key>".');
    const key = match[1] ?? '';
    if (key === '') throw refuse('Empty API key. Send "Authorization: Bearer <key>".');
    if (!KEY_PATTERN.test(key)) throw refuse('Malformed API key. Keys look like sluice_live_ followed by 32 hex characters.');

    const principal = await resolvePrincipal(c.env, key, (promise) => c.executionCtx.waitUntil(promise));
    if (!principal) throw refuse('Unknown API key.');
    if (principal.revoked) throw refuse(REVOKED);
    if (hasExpired(principal)) throw refuse(`This key expired at ${principal.expiresAt}. ${principal.scope === 'workspace_dryrun' ? 'Mint a new sandbox key' : 'Make a new key'} in the dashboard.`);
    const refusal = refusalOf(principal);
    if (refusal !== null) {
      // Revoked before misplaced: a revoked key is a 401 whatever its scope (the memory may not know yet).
      if (!(await gateOf(c.env, principal.workspaceId).verify(principal.keyId))) throw refuse(REVOKED);
      const urls = publicUrls(c.env);
      const where = refusal.replace('{mcp}', urls.mcp).replaceAll('{base}', urls.base);
      throw ApiError.forbidden(`This key's scope is '${principal.scope}': ${where}.`);
    }

    if (!checkedByHandler(c.req.method, c.req.path) && !(await gateOf(c.env, principal.workspaceId).verify(principal.keyId))) throw refuse(REVOKED);
    // Its maker shut out by a second factor the organization requires (their MCP tokens and sandbox keys; checked last,
    // so a revoked key still reads as revoked).
    if (principal.makerLacksTwoFactor) throw ApiError.forbidden(MAKER_LACKS_TWO_FACTOR);
    c.set('principal', principal);
    await next();
  };
}

const REVOKED = 'This API key has been revoked. Issue a new key in the dashboard.';

/** The 401 of a key its workspace's gate knows as revoked, found by a handler's own gate call. */
export function revokedKeyError(env: Env): ApiError {
  return ApiError.unauthorized(REVOKED, howToGetAccess(env));
}


/**
 * The MCP endpoint's bearer: a workspace MCP token (scope `workspace_mcp`). A REST API key is refused
 * here as a workspace MCP bearer is refused on REST. Answers a description for `WWW-Authenticate`.
 */
export async function authenticateMcpBearer(env: Env, token: string, waitUntil: (promise: Promise<unknown>) => void): Promise<McpAuthentication> {
  if (!KEY_PATTERN.test(token)) return { ok: false, description: 'Malformed bearer token' };
  const principal = await resolvePrincipal(env, token, waitUntil);
  if (!principal) return { ok: false, description: 'Unknown bearer token' };
  if (principal.revoked) return { ok: false, description: 'This bearer token has been revoked' };
  if (hasExpired(principal)) return { ok: false, description: `This bearer token expired at ${principal.expiresAt}` };
  if (principal.scope === 'workspace') {
    return { ok: false, description: 'API keys are not accepted by the MCP endpoint; use a workspace MCP bearer token or OAuth' };
  }
  if (principal.scope !== 'workspace_mcp') return { ok: false, description: `A ${principal.scope} token is not accepted by the MCP endpoint` };
  if (!(await gateOf(env, principal.workspaceId).verify(principal.keyId))) return { ok: false, description: 'This bearer token has been revoked' };
  if (principal.makerLacksTwoFactor) return { ok: false, description: MAKER_LACKS_TWO_FACTOR };
  return { ok: true, principal };
}
