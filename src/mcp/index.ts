import { Hono, type Context } from 'hono';
import { cors } from 'hono/cors';
import { requestIdAndSecurityHeaders } from '../core/security-headers';
import type { KeyPrincipal } from '../core/records';
import { MAX_REQUEST_BODY_BYTES, readRequestBody } from '../core/request-body';
import { ApiError } from '../core/errors';
import { allowedOrigins, mcpOrigin, type McpEnv } from './config';
import { findServer, servedDefault, toolsOfServer } from '../services/custom-mcp-servers';
import { registerOAuth } from './oauth/routes';
import { protectedResourceMetadata } from './oauth/metadata';
import { type McpResource, resourceOfPath, resourcePath, resourceUrl } from '../services/oauth/resources';
import { stampGrantUse } from '../services/oauth/grants';
import { checkAccessToken, isAccessToken } from '../services/oauth/tokens';
import { SCOPES } from '../services/oauth/settings';
import { serveMcp, type Toolset } from './server';
import { DATA_TOOLS, SERVER_PATHS, toolsOf } from '../operations/tools';
import { healthBody } from '../core/health';

/**
 * The mcp worker: MCP over Streamable HTTP at /mcp (every tool, or the workspace's default server),
 * /mcp/<facet> (one group's tools) and /mcp/s/<server_id> (a workspace's own server), stateless, one
 * server and transport per request; and the OAuth 2.1 authorization server those endpoints name. Tool
 * calls go through the api worker's pipeline over a service binding, so they are validated,
 * rate-limited, billed and recorded exactly like REST.
 */
const app = new Hono<{ Bindings: McpEnv; Variables: { requestId: string } }>();
type McpContext = Context<{ Bindings: McpEnv; Variables: { requestId: string } }>;

/** Every answer carries its request id (tool calls made for it are recorded under the same id) and the API's security headers. */
app.use('*', requestIdAndSecurityHeaders());

/** JSON-RPC error body, as MCP clients expect even outside a JSON-RPC exchange. */
function rpcError(c: Context, status: 401 | 403 | 404 | 405, code: number, message: string, headers: Record<string, string> = {}) {
  return c.json({ jsonrpc: '2.0', error: { code, message }, id: null }, status, headers);
}

/** Paths any web page may read or call: public metadata and the OAuth endpoints, which take no cookies. */
function isPublicOAuthPath(path: string): boolean {
  return path.startsWith('/.well-known/') || path === '/oauth/register' || path === '/oauth/token' || path === '/oauth/revoke';
}

/** Browser callers of /mcp must come from an allowed origin (DNS-rebinding protection); others send no Origin. */
app.use(
  '*',
  cors({
    origin: (origin, c) => (isPublicOAuthPath(c.req.path) || allowedOrigins(c.env).has(origin) ? origin : null),
    allowHeaders: ['Authorization', 'Content-Type', 'Mcp-Protocol-Version', 'Mcp-Session-Id', 'Last-Event-ID'],
    exposeHeaders: ['WWW-Authenticate', 'Mcp-Session-Id'],
    allowMethods: ['POST', 'GET', 'OPTIONS'],
  }),
);

/** Liveness and the build served, as on the api worker (the deploy's smoke test compares the three). */
app.get('/health', (c) => c.json(healthBody(c.env.BUILD_ID), 200, { 'Cache-Control': 'no-store' }));

registerOAuth(app);

const docsUrl = (env: McpEnv) => `${env.BASE_URL ?? mcpOrigin(env)}/agent-setup/prompt.md`;

/**
 * RFC 9728 protected-resource metadata, one document per resource, `resource` being its exact URL. At the root
 * (`/.well-known/oauth-protected-resource`, where a client that did not get a 401's `resource_metadata` may look),
 * the whole catalog's endpoint, /mcp.
 */
app.get('/.well-known/oauth-protected-resource/*', async (c) => {
  const path = c.req.path.slice('/.well-known/oauth-protected-resource'.length).replace(/^\/$/, '') || '/mcp';
  const resource = resourceOfPath(path);
  if (!resource || (resource.kind === 'server' && !(await findServer(c.env.DB, resource.serverId)))) {
    return rpcError(c, 404, -32002, `No MCP endpoint at ${path}: the endpoints are /mcp, /mcp/<group> and /mcp/s/<server id>, each with its metadata at /.well-known/oauth-protected-resource<endpoint>.`);
  }
  return c.json(protectedResourceMetadata(mcpOrigin(c.env), resource, docsUrl(c.env)));
});

const MCP_PATHS = ['/mcp', '/mcp/:facet', '/mcp/s/:serverId'];

app.on(['GET', 'DELETE'], MCP_PATHS, (c) =>
  rpcError(c, 405, -32000, 'Method not allowed: this server is stateless; send JSON-RPC messages with POST.', { Allow: 'POST' }),
);

app.post('/mcp/*', serve);
app.post('/mcp', serve);

async function serve(c: McpContext) {
  const resource = resourceOfPath(c.req.path);
  if (!resource) return rpcError(c, 404, -32002, `No MCP server ${c.req.path}. Servers: ${SERVER_PATHS}, and your workspace's own at /mcp/s/<id>.`);
  const server = resource.kind === 'server' ? await findServer(c.env.DB, resource.serverId) : undefined;
  if (resource.kind === 'server' && !server) return rpcError(c, 404, -32002, `No MCP server ${c.req.path}.`);

  const origin = c.req.header('origin');
  if (origin !== undefined && !allowedOrigins(c.env).has(origin)) return rpcError(c, 403, -32000, `Origin ${origin} is not allowed.`);

  const principal = await authenticate(c, resource);
  if (principal instanceof Response) return principal;
  if (server && server.workspaceId !== principal.workspaceId) return challenge(c, resource, 'This MCP server belongs to another workspace');
  // Read through the capped reader, never whole; the SDK's transport gets the copy.
  let body: Uint8Array | undefined;
  try {
    body = await readRequestBody(c.req.raw);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return c.json(
      { jsonrpc: '2.0', error: { code: -32600, message: `${error.code}: ${error.details?.[0]?.message ?? error.message}`, data: { code: error.code, details: error.details, maxBytes: MAX_REQUEST_BODY_BYTES } }, id: null },
      400,
    );
  }
  const request = new Request(c.req.raw.url, { method: 'POST', headers: c.req.raw.headers, ...(body ? { body } : {}) });
  return serveMcp(request, c.env, principal, await toolsetOf(c, resource, principal, server), c.get('requestId'));
}

/** The tools a resource serves this caller: a facet's, a custom server's, or at /mcp the workspace's default server (else every tool). */
async function toolsetOf(c: McpContext, resource: McpResource, principal: KeyPrincipal, server: Awaited<ReturnType<typeof findServer>>): Promise<Toolset> {
  if (resource.kind === 'facet') return { name: `sluice-${resource.facet}`, tools: toolsOf(resource.facet) };
  const chosen = server ?? (await servedDefault(c.env.DB, principal.workspaceId, (promise) => c.executionCtx.waitUntil(promise)));
  return chosen ? { name: chosen.name, tools: toolsOfServer(chosen) } : { name: 'sluice', tools: DATA_TOOLS };
}

app.notFound((c) => rpcError(c, 404, -32002, `No route ${c.req.method} ${c.req.path}. The MCP endpoint is POST /mcp.`));
app.onError((error, c) => {
  console.error(JSON.stringify({ level: 'error', path: c.req.path, error: String(error) }));
  return c.json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }, 500);
});

/**
 * The spec's 401: a WWW-Authenticate challenge naming this resource's metadata and the scope a token needs (the MCP
 * authorization spec of 2025-11-25 asks for `scope`, which clients then request), and a JSON-RPC error.
 */
function challenge(c: McpContext, resource: McpResource, description: string) {
  const metadataUrl = `${mcpOrigin(c.env)}/.well-known/oauth-protected-resource${resourcePath(resource)}`;
  return rpcError(c, 401, -32001, description, {
    'WWW-Authenticate': `Bearer resource_metadata="${metadataUrl}", scope="${SCOPES.join(' ')}", error="invalid_token", error_description="${challengeText(description)}"`,
  });
}

/**
 * A description as RFC 6750 (section 3) lets `error_description` carry it: printable ASCII without `"` or `\`.
 * A quote inside the quoted string would end it early, and a client's parser would read the rest as garbage.
 */
function challengeText(description: string): string {
  return description.replaceAll('"', "'").replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, '');
}

/** An OAuth access token bound to this very resource, or a workspace MCP bearer; never an API key. */
async function authenticate(c: McpContext, resource: McpResource): Promise<KeyPrincipal | Response> {
  const header = c.req.header('authorization');
  if (header === undefined) return challenge(c, resource, 'Missing Authorization header');
  const token = /^Bearer +(\S+)$/i.exec(header.trim())?.[1];
  if (!token) return challenge(c, resource, 'Authorization header must be "Bearer <token>"');
  if (isAccessToken(token)) {
    const result = await checkAccessToken(c.env.DB, token, resourceUrl(mcpOrigin(c.env), resource));
    if (!result.ok) return challenge(c, resource, result.description);
    stampGrantUse(c.env.DB, result.principal.keyId, (promise) => c.executionCtx.waitUntil(promise));
    return result.principal;
  }
  const result = await c.env.API.authenticate(token);
  return result.ok ? result.principal : challenge(c, resource, result.description);
}

export default app;
