import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { McpGateway } from '../../src/api/mcp-gateway';
import mcpApp from '../../src/mcp/index';
import { authenticateMcpBearer } from '../../src/services/auth';

/** The mcp worker with its service binding answered by the api worker's own McpGateway, in this isolate. */
export async function mcpCall(token: string, name: string, args: unknown, options: { meta?: Record<string, unknown>; path?: string } = {}) {
  const { meta, path = '/mcp' } = options;
  const gateway = new McpGateway(createExecutionContext(), env);
  const context = createExecutionContext();
  const api = { authenticate: (bearerToken: string) => authenticateMcpBearer(env, bearerToken, (promise) => context.waitUntil(promise)), callWorkspaceTool: gateway.callWorkspaceTool.bind(gateway) };
  const response = await mcpApp.fetch(
    new Request(`${new URL(env.MCP_URL).origin}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) } }),
    }),
    { ...env, API: api },
    context,
  );
  await waitOnExecutionContext(context);
  return ((await response.json()) as { result: { isError?: boolean; structuredContent: any } }).result;
}
