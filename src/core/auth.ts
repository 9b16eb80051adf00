import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from '../api/context';
import { touchKey } from './accounts';
import { publicUrls } from './config';
import { ApiError } from './errors';
import { KEY_PATTERN, hashKey, type KeyScope } from './keys';
import { resolvePrincipal } from './principal-cache';

/** Where each non-workspace scope belongs, for the 403 message (spec "Key scopes"). */
const SCOPE_REFUSAL: Record<Exclude<KeyScope, 'workspace'>, string> = {
  agent: "an agent key works only on /runtime/* routes, not on /v1",
  data_job: "a data-job key works only on /runtime/* routes, not on /v1",
  workspace_dryrun: "a dry-run key works only on /runtime/* routes, not on /v1",
  workspace_mcp: 'a workspace MCP bearer unlocks the MCP endpoint only; use it at {mcp}',
  meta_agent: 'a meta_agent key is server-internal and refused on every inbound surface',
};

/** The way in, attached to every 401 on /v1 so an agent that hit the wall can find the door. */
export function howToGetAccess(c: Context<AppEnv>) {
  const urls = publicUrls(c.env);
  return {
    how_to_get_access: {
      mcp_install_url: urls.mcp,
      signup_url: urls.signup,
      docs_url: urls.docs,
      openapi_url: urls.openapi,
    },
  };
}

/**
 * REST authentication, spec rules 1-5: only `Authorization: Bearer <key>`, resolved by its SHA-256 on
 * every request (no cache, so a revocation holds from the very next request), then the scope check.
 */
export function requireApiKey(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const refuse = (message: string) => ApiError.unauthorized(message, howToGetAccess(c));
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

    const principal = await resolvePrincipal(c.env, await hashKey(key));
    if (!principal) throw refuse('Unknown API key.');
    if (principal.revoked) throw refuse('This API key has been revoked. Issue a new key in the dashboard.');
    if (principal.scope !== 'workspace') {
      const where = SCOPE_REFUSAL[principal.scope].replace('{mcp}', publicUrls(c.env).mcp);
      throw ApiError.forbidden(`This key's scope is '${principal.scope}': ${where}.`);
    }

    c.set('principal', principal);
    if (shouldStamp(principal.keyId)) c.executionCtx.waitUntil(
      touchKey(c.env.DB, principal.keyId).catch((error) => console.error(JSON.stringify({ level: 'error', note: 'last_used_at not stamped', keyId: principal.keyId, error: String(error) }))),
    );
    await next();
  };
}

/**
 * last_used_at is stamped off the response path at one-second resolution: a key already stamped by this
 * isolate within the last second is not written again, so a busy key costs one write a second, not one
 * per request. Bounded: the map is cleared when it grows past 10,000 keys.
 */
const lastStamped = new Map<string, number>();

function shouldStamp(keyId: string): boolean {
  const now = Date.now();
  if (now - (lastStamped.get(keyId) ?? 0) < 1000) return false;
  if (lastStamped.size >= 10_000) lastStamped.clear();
  lastStamped.set(keyId, now);
  return true;
}
