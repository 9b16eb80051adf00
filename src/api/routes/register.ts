import { createRoute } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';

import { publicUrls, type Env } from '../../core/config';
import { deprecationHeaders, DEPRECATIONS, isSunset } from '../../core/deprecations';
import { success } from '../../core/envelope';
import { ApiError } from '../../core/errors';
import { OnboardingIntent, OnboardingRecord, recordOnboarding } from '../../services/onboarding';
import { admitFreeCall } from '../../services/pipeline';
import { clientAddress, countAttempt, type ThrottleRule } from '../../core/throttle';
import type { AppEnv } from '../../core/context';
import { errorResponses, jsonContent, successEnvelope } from '../../core/schemas';

export const REGISTER_PATH = '/v1/register';

/** Anonymous registrations write a row each: a client address gets this many an hour. */
const REGISTER_PER_IP: ThrottleRule = { limit: 20, windowMs: 60 * 60_000, what: 'anonymous registrations from this address' };

const DEPRECATION_HEADERS = {
  Deprecation: { description: 'RFC 9745: when this endpoint was deprecated (@ and Unix seconds).', schema: { type: 'string' as const, example: '@1782864000' } },
  Sunset: { description: 'RFC 8594: when it stops working; from then on it answers 410 ENDPOINT_MIGRATED.', schema: { type: 'string' as const, example: 'Thu, 31 Dec 2026 00:00:00 GMT' } },
  Link: { description: 'The successor (the MCP endpoint, tool sluice_onboarding) and the deprecation notice.', schema: { type: 'string' as const } },
};

const EXAMPLE_INTENT = { agentName: 'Claude Code', email: 'ada@example.com', organization: 'Analytical Engines Ltd', useCase: "Track competitors' rankings and backlinks every week.", sources: ['seo'] };

const route = createRoute({
  method: 'post',
  path: REGISTER_PATH,
  tags: ['Account'],
  summary: 'Record who is setting Sluice up and what for (deprecated: use the MCP tool sluice_onboarding)',
  description:
    'Deprecated, and removed on 2026-12-31: from then on it answers 410 ENDPOINT_MIGRATED. Its successor is the MCP tool `sluice_onboarding`, which records the same intent. Works with a workspace key (the intent is recorded for that workspace) or without one (anonymous callers are limited to 20 an hour per address). Free.',
  operationId: 'register',
  deprecated: true,
  // The key is optional: an empty requirement beside the bearer one.
  security: [{}, { bearerAuth: [] }] as Record<string, string[]>[],

  request: { body: { content: { 'application/json': { schema: OnboardingIntent, example: EXAMPLE_INTENT } }, required: true } },
  responses: {
    201: {
      ...jsonContent(successEnvelope(OnboardingRecord), 'The intent was recorded; `next` says where to go from here.', {
        example: success({
          id: 'onb_5f1c2a9b7d3e4f6a8b0c1d2e',
          recordedAt: '2026-11-23T09:58:01.000Z',
          workspaceId: null,
          next: {
            signupUrl: 'http://127.0.0.1:8789/signup',
            mcpUrl: 'http://127.0.0.1:8788/mcp',
            agentSetupUrl: 'http://127.0.0.1:8787/agent-setup/prompt.md',
            docsUrl: 'http://127.0.0.1:8787/docs',
            sources: [{ slug: 'seo', catalogUrl: 'http://127.0.0.1:8787/v1/platforms/seo' }],
          },
        }),
      }),
      headers: DEPRECATION_HEADERS,
    },
    ...errorResponses(400, 401, 403, 410, 429),
  },
});

export function registerRegister(app: OpenAPIHono<AppEnv>, authenticate: MiddlewareHandler<AppEnv>) {
  app.use(REGISTER_PATH, async (c, next) => {
    const links = linksOf(c.env);
    if (isSunset(DEPRECATIONS.register)) {
      const removed = new Date(DEPRECATIONS.register.sunsetAt).toISOString().slice(0, 10);
      throw new ApiError(
        'ENDPOINT_MIGRATED',
        `POST ${REGISTER_PATH} was removed on ${removed}. Record the same intent with the MCP tool sluice_onboarding at ${publicUrls(c.env).mcp}.`,
        { headers: { Link: links.join(', ') } },
      );
    }
    const headers = deprecationHeaders(DEPRECATIONS.register, links);
    try {
      // A key is optional, but one that is sent must be valid: a wrong key is a 401, not an anonymous call.
      if (c.req.header('authorization') !== undefined || c.req.header('x-api-key') !== undefined) await authenticate(c, next);
      else {
        // Only a registration counts against the address's hourly allowance; another method is answered 404.
        if (c.req.method === 'POST') await countAttempt(c.env.DB, `register:${clientAddress(c.req.raw)}`, REGISTER_PER_IP);
        await next();
      }
    } catch (error) {
      if (error instanceof ApiError) Object.assign(error.headers, headers);
      throw error;
    }
    for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
  });

  app.openapi(route, async (c) => {
    const principal = c.get('principal') as AppEnv['Variables']['principal'] | undefined;
    // A key's registrations count in its workspace's window (an anonymous one in the address's hourly allowance).
    const headers = principal ? await admitFreeCall(c.env, principal) : {};
    for (const [name, value] of Object.entries(headers)) c.header(name, value);
    const record = await recordOnboarding(c.env.DB, publicUrls(c.env), c.req.valid('json'), {
      surface: 'register',
      workspaceId: principal?.workspaceId ?? null,
      organizationId: principal?.organizationId ?? null,
    });
    return c.json(success(record), 201);
  });
}

/** The successor (the MCP endpoint, where sluice_onboarding is) and where the deprecation is explained. */
function linksOf(env: Env): string[] {
  const urls = publicUrls(env);
  return [`<${urls.mcp}>; rel="successor-version"; title="sluice_onboarding"`, `<${urls.agentSetup}>; rel="deprecation"; type="text/markdown"`];
}
