import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { publicUrls, type PublicUrls } from '../../core/config';
import type { AppEnv } from '../context';
import { errorResponses } from '../schemas';

const route = createRoute({
  method: 'get',
  path: '/agent-setup/prompt.md',
  tags: ['Discovery'],
  summary: 'Setup instructions an agent can follow to wire itself up',
  operationId: 'getAgentSetupPrompt',
  security: [],
  responses: {
    200: { description: 'Markdown instructions.', content: { 'text/markdown': { schema: z.string() } } },
    ...errorResponses(),
  },
});

/** Generated from configuration, so every URL in it is the one this installation serves. */
export function agentSetupPrompt(urls: PublicUrls): string {
  return `# Connect to Sluice

Sluice is one API for web scraping, web search, SEO data, model answers, and social-platform and lead data.
Every call is metered in cents against your organization's credits; only successful calls are charged.

## 1. Get a workspace API key

- Sign up at ${urls.signup} and create a key in your workspace. Keys look like \`sluice_live_\` followed by 32 hex characters.
- Store it as the environment variable \`SLUICE_API_KEY\`. Never paste it into code or logs.

## 2. Call the REST API

- Base URL: ${urls.base}
- Tool endpoints (web, SEO): ${urls.tools}
- Authenticate every call with the header \`Authorization: Bearer $SLUICE_API_KEY\` (no other header is accepted).
- Check the key works and see your balance:

\`\`\`sh
curl -s ${urls.base}/v1/credits -H "Authorization: Bearer $SLUICE_API_KEY"
\`\`\`

- The catalog of sources and prices needs no key: ${urls.base}/v1/platforms
- The full reference: ${urls.openapi} (interactive: ${urls.docs})

## 3. Or use MCP

- MCP endpoint (Streamable HTTP): ${urls.mcp}
- Authenticate with OAuth 2.1 (your client discovers it) or a workspace MCP bearer token from the dashboard.
  A REST API key is not accepted by the MCP endpoint.

## Responses

Every response is \`{"success": true, "data": ..., "meta": ...}\` or \`{"success": false, "error": {"code", "message", "details"?, "retryAfter"?}}\`.
Honour \`Retry-After\`; back off on 429, 502 and 503; never retry 400 or 402 unchanged (402 means top up).
`;
}

export function registerAgentSetup(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, (c) => c.body(agentSetupPrompt(publicUrls(c.env)), 200, { 'content-type': 'text/markdown; charset=utf-8' }));
}
