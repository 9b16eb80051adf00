import { clock } from '../../core/clock';
import { sha256Hex } from '../../core/digest';
import { newId, randomHex } from '../../core/ids';
import { allowedRedirectUri, findClient, type OAuthClient, redirectUriProblem } from './clients';
import { OAuthError } from './errors';
import { resourceOfIndicator, resourceUrl } from './resources';
import { issuerOf, LIFETIMES, type OAuthEnv, SCOPES, TOKEN_PREFIX } from './settings';
import { ENDED_RECORDS_KEPT_DAYS } from '../record-retention';

/**
 * /oauth/authorize and the decision that follows it on the dashboard's consent page. The request is
 * checked here, kept server-side under a random handle (only its hash is stored), and the browser is
 * sent to the dashboard with the handle; the dashboard shows it, and the person's Allow or Deny comes
 * back through `decide`, which answers where the browser goes next (the client's redirect URI, with a
 * code or with error=access_denied).
 */

/**
 * Where the browser goes: the consent page, or nowhere. A problem found before the person has decided is
 * shown on Sluice's own page and sent to no redirect URI (RFC 9700 section 4.11.2): registration is open,
 * so a registered redirect URI proves nothing, and bouncing an invalid request to it would make this
 * origin an open redirector. Only the person's decision (a code, or access_denied) goes back to the client.
 */
export type AuthorizeOutcome = { redirect: string } | { problem: AuthorizationProblem };

/** What was wrong with an authorization request: the RFC 6749 error code, a sentence, and the client when it is known. */
export interface AuthorizationProblem {
  error: string;
  description: string;
  clientName?: string;
  /** Seconds to wait, when the request was refused for coming too often (429). */
  retryAfter?: number;
}

/** The longest `state` kept for a client: an opaque value of a few dozen characters in practice, stored with the request. */
export const MAX_STATE_CHARS = 1_024;

/** Checks an authorization request (OAuth 2.1 with PKCE S256, RFC 8707 resource) and files it for the consent page. */
export async function beginAuthorization(env: OAuthEnv, params: URLSearchParams): Promise<AuthorizeOutcome> {
  const issuer = issuerOf(env.MCP_URL);
  const clientId = params.get('client_id');
  if (!clientId) return { problem: { error: 'invalid_request', description: 'The request names no client_id.' } };
  let client: OAuthClient | undefined;
  try {
    client = await findClient(env, clientId);
  } catch (error) {
    if (error instanceof OAuthError) return { problem: { error: error.error, description: error.description } };
    throw error;
  }
  if (!client) {
    const description = `No client ${clientId} is registered here. A registration is removed once no connection has used it for ${ENDED_RECORDS_KEPT_DAYS.registeredClient} days or more: remove this server from your MCP client and add it again, and it registers afresh.`;
    return { problem: { error: 'invalid_client', description } };
  }

  const clientName = client.name;
  const refuse = (error: string, description: string): AuthorizeOutcome => ({ problem: { error, description, clientName } });
  const given = params.get('redirect_uri');
  const redirectUri = allowedRedirectUri(client, given);
  if (!redirectUri) {
    return refuse('invalid_request', given === null ? 'The request names no redirect_uri, and the client registered several.' : `${given} is not a redirect URI registered by ${client.name}.`);
  }
  // A URI registered while the scheme rules were looser is held to today's.
  const unsafe = redirectUriProblem(redirectUri);
  if (unsafe) return refuse('invalid_request', `${unsafe}.`);

  const state = params.get('state');
  if (state !== null && state.length > MAX_STATE_CHARS) return refuse('invalid_request', `state is ${state.length} characters long; at most ${MAX_STATE_CHARS} are kept.`);
  if (params.get('response_type') !== 'code') return refuse('unsupported_response_type', 'The only response_type is "code".');
  // `scope` is not checked: the grant carries `mcp`, whatever was asked (RFC 6749 section 3.3 lets a server ignore
  // the request; the token answer names the scope granted). Clients add scopes of their own (`claudeai`,
  // `offline_access`), and a refusal here ends their connection on a page they never see.
  const challenge = params.get('code_challenge');
  if (!challenge) return refuse('invalid_request', 'PKCE is required: send code_challenge with code_challenge_method=S256.');
  if (params.get('code_challenge_method') !== 'S256') return refuse('invalid_request', 'Only code_challenge_method=S256 is accepted (plain is refused).');
  if (!/^[A-Za-z0-9_-]{43}$/.test(challenge)) return refuse('invalid_request', 'code_challenge must be the base64url SHA-256 of the verifier (43 characters).');

  const resources = params.getAll('resource');
  if (resources.length > 1) return refuse('invalid_target', 'Name one resource.');
  // No indicator (a client pointed at the bare /mcp without one) means the bare /mcp: the workspace's default server.
  const indicator = resources[0] ?? `${issuer}/mcp`;
  const resource = resourceOfIndicator(issuer, indicator);
  if (!resource) return refuse('invalid_target', `${indicator} is not an MCP resource of this server.`);
  if (resource.kind === 'server' && !(await serverWorkspace(env.DB, resource.serverId))) return refuse('invalid_target', `There is no MCP server ${indicator}.`);

  const handle = `${TOKEN_PREFIX.request}${randomHex(32)}`;
  await env.DB.prepare(
    'INSERT INTO oauth_requests (id_hash, client_id, redirect_uri, state, code_challenge, resource, scope, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  )
    .bind(await sha256Hex(handle), client.id, redirectUri, state, challenge, resourceUrl(issuer, resource), SCOPES.join(' '), clock.now() + LIFETIMES.request)
    .run();
  return { redirect: `${env.APP_URL.replace(/\/+$/, '')}/oauth/consent?request=${handle}` };
}

/** What the consent page shows about a pending request. */
export interface PendingAuthorization {
  client: OAuthClient;
  redirectUri: string;
  /** Where the code goes: what the person must be told (MCP security best practice). */
  redirectHost: string;
  /** True when the redirect URI is on this machine: any local program could be asking. */
  redirectIsLocal: boolean;
  resource: string;
  /** The workspace a per-server resource belongs to: the only one the grant can be for. */
  serverWorkspaceId: string | null;
  scope: string;
}

interface RequestRow {
  clientId: string;
  redirectUri: string;
  state: string | null;
  codeChallenge: string;
  resource: string;
  scope: string;
  expiresAt: number;
}

async function pendingRow(db: D1Database, handle: string): Promise<RequestRow | undefined> {
  if (!handle.startsWith(TOKEN_PREFIX.request)) return undefined;
  const row = await db
    .prepare(
      `SELECT client_id AS clientId, redirect_uri AS redirectUri, state, code_challenge AS codeChallenge, resource, scope, expires_at AS expiresAt
         FROM oauth_requests WHERE id_hash = ?`,
    )
    .bind(await sha256Hex(handle))
    .first<RequestRow>();
  return row && row.expiresAt > clock.now() ? row : undefined;
}

/** The pending request behind a consent page's handle; undefined when unknown, expired or already decided. */
export async function describeAuthorization(env: OAuthEnv, handle: string): Promise<PendingAuthorization | undefined> {
  const row = await pendingRow(env.DB, handle);
  if (!row) return undefined;
  const client = await findClient(env, row.clientId).catch(() => undefined);
  if (!client) return undefined;
  const redirect = new URL(row.redirectUri);
  const resource = resourceOfIndicator(issuerOf(env.MCP_URL), row.resource);
  return {
    client,
    redirectUri: row.redirectUri,
    redirectHost: redirect.host || redirect.protocol.replace(/:$/, ''),
    redirectIsLocal: ['localhost', '127.0.0.1', '[::1]'].includes(redirect.hostname),
    resource: row.resource,
    serverWorkspaceId: resource?.kind === 'server' ? ((await serverWorkspace(env.DB, resource.serverId)) ?? null) : null,
    scope: row.scope,
  };
}

export type Decision = { allow: true; userId: string; workspaceId: string } | { allow: false };

/**
 * The person's answer. The request is consumed first (one decision per request, even when two tabs race),
 * then on Allow a grant is stored with a single-use code. Answers the URL the browser goes to next, or
 * undefined when the request is unknown, expired or already decided. The caller has checked that the
 * person may act for the workspace.
 */
export async function decide(env: OAuthEnv, handle: string, decision: Decision): Promise<string | undefined> {
  if (!handle.startsWith(TOKEN_PREFIX.request)) return undefined;
  const row = await env.DB.prepare(
    `DELETE FROM oauth_requests WHERE id_hash = ? AND expires_at > ?
     RETURNING client_id AS clientId, redirect_uri AS redirectUri, state, code_challenge AS codeChallenge, resource, scope, expires_at AS expiresAt`,
  )
    .bind(await sha256Hex(handle), clock.now())
    .first<RequestRow>();
  if (!row) return undefined;
  const iss = issuerOf(env.MCP_URL);
  if (!decision.allow) {
    return redirectWith(row.redirectUri, { error: 'access_denied', error_description: 'The person declined to connect this client.', state: row.state, iss });
  }

  const code = `${TOKEN_PREFIX.code}${randomHex(32)}`;
  const now = clock.now();
  await env.DB.prepare(
    `INSERT INTO oauth_grants (id, client_id, workspace_id, user_id, resource, scope, redirect_uri, code_hash, code_challenge, code_expires_at, created_at, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )
    .bind(
      newId('grant'),
      row.clientId,
      decision.workspaceId,
      decision.userId,
      row.resource,
      row.scope,
      row.redirectUri,
      await sha256Hex(code),
      row.codeChallenge,
      now + LIFETIMES.code,
      new Date(now).toISOString(),
      now + LIFETIMES.grant,
    )
    .run();
  return redirectWith(row.redirectUri, { code, state: row.state, iss });
}

/** The workspace an MCP server belongs to, or undefined when there is no such server. */
export async function serverWorkspace(db: D1Database, serverId: string): Promise<string | undefined> {
  const row = await db.prepare('SELECT workspace_id AS workspaceId FROM mcp_servers WHERE id = ?').bind(serverId).first<{ workspaceId: string }>();
  return row?.workspaceId;
}

function redirectWith(redirectUri: string, params: Record<string, string | null>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== null) url.searchParams.set(name, value);
  return url.href;
}

