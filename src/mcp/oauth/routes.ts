import type { Hono } from 'hono';
import { ApiError } from '../../core/errors';
import { readRequestBody } from '../../core/request-body';
import type { McpEnv } from '../config';
import { beginAuthorization } from '../../services/oauth/authorization';
import { registerClient } from '../../services/oauth/clients';
import { NO_STORE, OAuthError } from '../../services/oauth/errors';
import { authorizationServerMetadata } from './metadata';
import { authorizationProblemPage } from './problem-page';
import { countAuthorization, countRegistration, countRegistrationRequest } from './address-throttles';
import { issuerOf } from '../../services/oauth/settings';
import { exchangeToken, revokeToken } from '../../services/oauth/tokens';

/** The authorization server's endpoints on the MCP host (RFC 8414, 7591, 6749 with PKCE, 7009). */
export function registerOAuth<Variables extends object>(app: Hono<{ Bindings: McpEnv; Variables: Variables }>) {
  app.get('/.well-known/oauth-authorization-server', (c) =>
    c.json(authorizationServerMetadata(issuerOf(c.env.MCP_URL), `${c.env.BASE_URL ?? issuerOf(c.env.MCP_URL)}/agent-setup/prompt.md`)),
  );

  app.post('/oauth/register', async (c) => {
    return answer(async () => {
      await countRegistrationRequest(c.env.DB, c.req.raw);
      let body: unknown;
      try {
        body = JSON.parse(await bodyText(c.req.raw));
      } catch (error) {
        if (error instanceof OAuthError) throw error;
        body = undefined;
      }
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new OAuthError('invalid_client_metadata', 'The body must be a JSON object.');
      return Response.json(await registerClient(c.env.DB, body, () => countRegistration(c.env.DB, c.req.raw)), { status: 201, headers: NO_STORE });
    });
  });

  app.get('/oauth/authorize', async (c) => {
    const throttled = await countAuthorization(c.env.DB, c.req.raw);
    if (throttled) return authorizationProblemPage(throttled);
    const outcome = await beginAuthorization(c.env, new URL(c.req.url).searchParams);
    return 'redirect' in outcome ? c.redirect(outcome.redirect, 302) : authorizationProblemPage(outcome.problem);
  });

  app.post('/oauth/token', async (c) => answer(async () => Response.json(await exchangeToken(c.env.DB, await formOf(c.req.raw)), { headers: NO_STORE })));

  app.post('/oauth/revoke', async (c) =>
    answer(async () => {
      await revokeToken(c.env.DB, await formOf(c.req.raw));
      return new Response(null, { status: 200, headers: NO_STORE });
    }),
  );
}

async function formOf(request: Request): Promise<URLSearchParams> {
  if (!(request.headers.get('content-type') ?? '').startsWith('application/x-www-form-urlencoded')) {
    throw new OAuthError('invalid_request', 'Send the parameters as application/x-www-form-urlencoded.');
  }
  return new URLSearchParams(await bodyText(request));
}

/** The body as text, read through the API's capped reader (1 MB): OAuth requests are a few hundred bytes. */
async function bodyText(request: Request): Promise<string> {
  try {
    return new TextDecoder().decode((await readRequestBody(request)) ?? new Uint8Array());
  } catch (error) {
    if (error instanceof ApiError) throw new OAuthError('invalid_request', error.details?.[0]?.message ?? error.message);
    throw error;
  }
}

async function answer(handle: () => Promise<Response>): Promise<Response> {
  try {
    return await handle();
  } catch (error) {
    if (error instanceof OAuthError) return error.toResponse();
    throw error;
  }
}
