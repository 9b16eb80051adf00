import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { publicUrls, type PublicUrls } from '../../core/config';
import type { AppEnv } from '../../core/context';
import { errorResponses, NoParameters } from '../../core/schemas';

const route = createRoute({
  method: 'get',
  path: '/agent-setup/prompt.md',
  tags: ['Discovery'],
  summary: 'Setup instructions an agent can follow to wire itself up',
  operationId: 'getAgentSetupPrompt',
  security: [],
  request: { query: NoParameters },
  responses: {
    200: { description: 'Markdown instructions.', content: { 'text/markdown': { schema: z.string(), example: '# Connect to Sluice\n\nSluice is one API for web scraping, web search, SEO data, ...\n' } } },
    ...errorResponses(400),
  },
});

/** Generated from configuration, so every URL in it is the one this installation serves. */
export function agentSetupPrompt(urls: PublicUrls): string {
  return `# Connect to Sluice

Sluice is one API for web scraping, web search, SEO data, model answers, and social-platform and lead data.
Every call is metered in cents against your organization's credits; only successful calls are charged.

## 1. Get a workspace API key

- Sign up at ${urls.signup} (email, password, name): you get an organization and a first workspace, and land on
  its API keys page. On a local development stack, \`npm start\` already printed a working key; skip to step 2.
- Create a key there ("Create key"), copy it, and store it as the environment variable \`SLUICE_API_KEY\`.
  Keys look like \`sluice_live_\` followed by 32 hex characters. Never paste one into code or logs; the
  dashboard can reveal it again, and revoking it there stops it from the very next request.
- A new organization has no plan yet: metered calls answer 402 \`SUBSCRIPTION_REQUIRED\` until it has one.
  That is not a top-up: a person starts the free trial (or chooses a plan) on the dashboard's Plans page
  (${urls.app}/w/<workspace id>/plans; the error's message gives the exact URL). Free routes (workspace
  databases, the catalog, \`/v1/credits\`) work without a plan.

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

## 3. Add the MCP server

- MCP endpoint (Streamable HTTP, POST, stateless): ${urls.mcp}
- Servers with one source's tools only: ${urls.mcp}/<slug> for each slug of /v1/platforms (e.g. ${urls.mcp}/web,
  ${urls.mcp}/seo, ${urls.mcp}/youtube, ${urls.mcp}/leads), and ${urls.mcp}/social for the six social platforms
- Create a workspace MCP token on the dashboard's MCP page (${urls.app}, scope \`workspace_mcp\`; shown once) and
  store it as \`SLUICE_MCP_TOKEN\`. A REST API key is not accepted by the MCP endpoint, and the MCP token is
  not accepted by the REST API.
- Add it to a client that reads an \`mcpServers\` config (e.g. \`.mcp.json\`). Clients such as Claude Code,
  Cursor and VS Code expand \`\${VAR}\` from the environment, so the token stays out of the file:

\`\`\`json
{"mcpServers": {"sluice": {"type": "http", "url": "${urls.mcp}", "headers": {"Authorization": "Bearer \${SLUICE_MCP_TOKEN}"}}}}
\`\`\`

- Or from a shell, for Claude Code:

\`\`\`sh
claude mcp add --transport http sluice ${urls.mcp} --header "Authorization: Bearer $SLUICE_MCP_TOKEN"
\`\`\`

## 4. Verify

- Call the MCP tool \`sluice_tools_list_enabled\`: it lists the tools this server offers. If it answers, you are connected.
- Every REST tool is a tool named \`data_<group>_<operation>\` with the same parameters. Find one with
  \`sluice_tools_search\` (free text).
- Tell Sluice who you are and what you are setting it up for with \`sluice_onboarding\` (free; it replaces the
  deprecated \`POST /v1/register\`). Keep what you collect between runs in a workspace database:
  \`sluice_db_create\`, then \`sluice_db_query\` (SQLite, free, counted in the requests per minute).

## Running unattended: a deployed agent's key

- If you run on your own infrastructure without a person (a scheduled job, a worker), ask for a deployment on
  the dashboard's Agents page (${urls.app}): it mints a key of scope \`agent\`, shown once; store it as
  \`SLUICE_AGENT_KEY\`. It works on ${urls.base}/runtime/* only, as a workspace key works on /v1 only.
- \`${urls.base}/runtime/data/<slug>/<operation>\` takes exactly what \`/v1/data/<slug>/<operation>\` takes, at the
  same price; \`${urls.base}/runtime/agent\` says which agent you are and the runtime hours used this month (the
  plan caps the clock hours, UTC, in which its agents make calls).

## Responses

Every response is \`{"success": true, "data": ..., "meta": ...}\` or \`{"success": false, "error": {"code", "message", "details"?, "retryAfter"?}}\`.
Honour \`Retry-After\`; back off on 429, 502 and 503; never retry 400 or 402 unchanged. A 402 says which way out applies:
\`INSUFFICIENT_CREDITS\` means top up; \`SUBSCRIPTION_REQUIRED\` means start the free trial or choose a plan at the
URL its message names; \`PLAN_LIMIT_REACHED\` and \`SEAT_LIMIT_REACHED\` mean upgrade the plan or free a place.
To retry a call after a timeout without paying twice, send the same \`Idempotency-Key\` header (a new UUID per
call; over MCP \`_meta.idempotency_key\`) with each attempt: a retry within 24 hours gets the first success
again, uncharged, with \`meta.replayed: true\`.
`;
}

export function registerAgentSetup(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, (c) => c.body(agentSetupPrompt(publicUrls(c.env)), 200, { 'content-type': 'text/markdown; charset=utf-8' }));
}
