import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { authenticateMcpBearer } from '../../src/services/auth';
import mcpApp from '../../src/mcp/index';
import type { Person } from '../support/dashboard';

export const MCP_ORIGIN = new URL(env.MCP_URL).origin;
export const REDIRECT_URI = 'http://127.0.0.1:53682/callback';

/**
 * The mcp worker under test through its real fetch handler, bound to the same database; its service
 * binding to the api worker answers bearer authentication with the api worker's own function (tool calls
 * through the pipeline are proved end to end in test/node/mcp-oauth.test.ts).
 */
export async function mcp(path: string, init: RequestInit = {}): Promise<Response> {
  const context = createExecutionContext();
  const api = { authenticate: (token: string) => authenticateMcpBearer(env, token, (promise) => context.waitUntil(promise)) };
  const response = await mcpApp.fetch(new Request(`${MCP_ORIGIN}${path}`, init), { ...env, API: api }, context);
  await waitOnExecutionContext(context);
  return response;
}

export function form(path: string, fields: Record<string, string>): Promise<Response> {
  return mcp(path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
}

let addresses = 0;

/** A client address of its own, as Cloudflare's edge reports it (cf-connecting-ip with request.cf), so tests never share a throttle bucket. */
export function ownAddress(): string {
  addresses += 1;
  // The throttles count an IPv6 address as its /64 (2001:db8:a:b): a and b are random, 32 bits, so tests hardly ever share one.
  const [a, b, c] = Array.from(crypto.getRandomValues(new Uint16Array(3)), (part) => part.toString(16));
  return `2001:db8:${a}:${b}:${c}::${addresses.toString(16)}`;
}

/** POST /oauth/register with a JSON body, from `address` (a new one unless given) through the edge. */
export function register(body: unknown, address = ownAddress()): Promise<Response> {
  return mcp('/oauth/register', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'cf-connecting-ip': address },
    body: JSON.stringify(body),
    cf: { country: 'NL' },
  } as RequestInit);
}

/** Registers a new client: its home page is its own, so no earlier registration has the same metadata (that one would come back). */
export async function registerClient(metadata: Record<string, unknown> = {}): Promise<string> {
  const home = `https://client-${crypto.randomUUID()}.example/`;
  const response = await register({ client_name: 'Test client', client_uri: home, redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none', ...metadata });
  if (response.status !== 201) throw new Error(`registration failed: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { client_id: string }).client_id;
}

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export async function pkce() {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
  return { verifier, challenge };
}

/** GET /oauth/authorize with the usual parameters (overridable), from `address` (a new one unless given) through the edge; answers the response, not followed. */
export function authorizeRequest(params: Record<string, string>, address = ownAddress()): Promise<Response> {
  return mcp(`/oauth/authorize?${new URLSearchParams({ response_type: 'code', redirect_uri: REDIRECT_URI, code_challenge_method: 'S256', state: 'state-1', ...params })}`, {
    redirect: 'manual',
    headers: { 'cf-connecting-ip': address },
    cf: { country: 'NL' },
  } as RequestInit);
}

/** The whole front channel: authorize, then the person's decision on the consent page. Answers where the browser went. */
export async function authorize(person: Person, options: { clientId: string; challenge: string; resource?: string; scope?: string; workspaceId?: string; decision?: 'allow' | 'deny' }): Promise<URL> {
  const response = await authorizeRequest({
    client_id: options.clientId,
    code_challenge: options.challenge,
    ...(options.resource ? { resource: options.resource } : {}),
    ...(options.scope !== undefined ? { scope: options.scope } : {}),
  });
  if (response.status !== 302) throw new Error(`authorize failed: ${response.status} ${await response.text()}`);
  const consent = new URL(response.headers.get('location')!);
  const decided = await person.json('POST', '/api/oauth/consent', {
    request: consent.searchParams.get('request'),
    decision: options.decision ?? 'allow',
    workspaceId: options.workspaceId ?? person.workspaceId,
  });
  if (decided.status !== 200) throw new Error(`consent failed: ${decided.status} ${JSON.stringify(decided.body)}`);
  return new URL(decided.body.data.redirectTo);
}

export interface Tokens {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  scope: string;
  resource: string;
}

/** Registration to tokens in one step, for tests about what comes after. */
export async function connect(person: Person, options: { resource?: string; scope?: string; workspaceId?: string } = {}): Promise<Tokens & { clientId: string }> {
  const clientId = await registerClient();
  const { verifier, challenge } = await pkce();
  const redirect = await authorize(person, { clientId, challenge, ...options });
  const response = await form('/oauth/token', { grant_type: 'authorization_code', code: redirect.searchParams.get('code')!, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT_URI });
  if (response.status !== 200) throw new Error(`token failed: ${response.status} ${await response.text()}`);
  return { ...((await response.json()) as Tokens), clientId };
}

export function listTools(path: string, token: string): Promise<Response> {
  return mcp(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
}

export async function toolNames(path: string, token: string): Promise<string[]> {
  const response = await listTools(path, token);
  if (response.status !== 200) throw new Error(`tools/list failed: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { result: { tools: { name: string }[] } }).result.tools.map((tool) => tool.name);
}
