import type { OpenAPIHono } from '@hono/zod-openapi';
import { publicUrls, type PublicUrls } from '../../core/config';
import { CATALOG } from '../../operations/catalog';
import type { AppEnv } from '../../core/context';
import { CONNECTABLE_VENDORS } from '../../services/connections-vendors';

/**
 * `/llms.txt` (llmstxt.org): the index an agent reads first. Built from configuration and the catalog,
 * so every URL is this installation's and every operation the registry serves is listed, with its price.
 */
export function llmsTxt(urls: PublicUrls): string {
  const platforms = CATALOG.map((platform) => {
    const operations = platform.operations.map((operation) => {
      const base = operation.path.startsWith('/v1/') ? urls.base : urls.tools;
      const price = `${operation.price.cents} cent${operation.price.cents === 1 ? '' : 's'} per ${operation.price.per}${operation.price.note ? ` (${operation.price.note})` : ''}`;
      return `- [${operation.method} ${operation.path}](${base}${operation.path}): ${operation.summary}. ${price}. MCP tool \`${operation.mcpTool}\`.`;
    });
    return `## ${platform.name}\n\n${platform.description} Catalog entry: ${urls.base}/v1/platforms/${platform.slug}\n\n${operations.join('\n')}`;
  });

  return `# Sluice

> One API for web scraping, web search, SEO data, model answers, and social-platform and lead data. One workspace key (\`sluice_live_\` + 32 hex) reaches every operation over REST and MCP; every call is priced in cents and only successful calls are charged.

Authenticate every REST call with \`Authorization: Bearer <key>\` (no other header is accepted). Every answer is \`{"success": true, "data", "meta"?}\` or \`{"success": false, "error": {"code", "message", "details"?, "retryAfter"?}}\`; honour \`Retry-After\` on 429 and 503.

## Docs

- [Agent setup](${urls.agentSetup}): how to get a key and connect over REST or MCP, step by step
- [OpenAPI document](${urls.openapi}): every route with its schemas and an example request and response (OpenAPI 3.0)
- [API reference](${urls.docs}): the same document, interactive
- [Catalog](${urls.base}/v1/platforms): sources, operations, MCP tool names and prices as JSON (no key needed)

${platforms.join('\n\n')}

## Data jobs (agnt)

One operation over 1 to 10,000 inputs, run in the background: submitting is free, each item is billed at its operation's price only if it succeeds, and a job leaves a fifth of the workspace's requests per minute to other calls.

- [POST /v1/data/agnt/jobs](${urls.base}/v1/data/agnt/jobs): \`{operation: "<slug>/<operation>", inputs: [...], name?, maxCostCents?, connectionId?, into?: {databaseId, table}}\` → 202 with the job; every input is validated first. \`connectionId\` runs every item with the workspace's own vendor credentials at the plan's fee; \`into\` writes each success as a row of a workspace database table (JSON in its \`data\` column). MCP tool \`sluice_jobs_submit\`.
- [GET /v1/data/agnt/jobs/{id}](${urls.base}/v1/data/agnt/jobs): status, counts, spentCents, quotedCents, times. MCP tool \`sluice_jobs_status\`.
- [GET /v1/data/agnt/jobs/{id}/results](${urls.base}/v1/data/agnt/jobs): per item its input and data or error; JSON paged, or NDJSON / CSV by \`Accept\`. MCP tool \`sluice_jobs_results\`.
- [POST /v1/data/agnt/jobs/{id}/cancel](${urls.base}/v1/data/agnt/jobs): items not started are never started nor charged.

## Your own vendor accounts (connections)

A workspace can bring its own account of a vendor (${CONNECTABLE_VENDORS.map((vendor) => vendor.slug).join(', ')}): a call through it is sent with that account's credentials and charged the plan's connection fee (\`connectionFeeCents\` of GET /v1/plans) instead of the operation's price. A 429 there may be the vendor throttling those credentials; a plan change does not help.

- [GET /v1/connections/vendors](${urls.base}/v1/connections/vendors): each vendor's credential fields and the operations it serves.
- [POST /v1/connections](${urls.base}/v1/connections): \`{vendor, name?, credentials}\` → 201; checked with the vendor first, stored encrypted, never answered again.
- \`/v1/connections/{id}/data/<slug>/<operation>\` and \`/v1/connections/{id}/<root tool>\` (e.g. \`POST /v1/connections/{id}/serp\`): the operation through the connection, same input and answer. On MCP: the tool's optional \`connection\` argument.

## Optional

- [MCP endpoint](${urls.mcp}): Streamable HTTP; every operation above is a tool, found with \`sluice_tools_search\`; \`sluice_onboarding\` records who is setting Sluice up and what for (successor of the deprecated \`POST /v1/register\`), \`sluice_db_*\` keep data between runs in the workspace's SQLite databases
- [Credits](${urls.base}/v1/credits): the balance of the key's organization (key needed)
- [Usage](${urls.base}/v1/usage): the key's workspace's calls and their cost (key needed)
`;
}

export function registerLlmsTxt(app: OpenAPIHono<AppEnv>) {
  app.get('/llms.txt', (c) => c.body(llmsTxt(publicUrls(c.env)), 200, { 'content-type': 'text/markdown; charset=utf-8' }));
}
