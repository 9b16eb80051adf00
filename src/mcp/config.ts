import type { McpGatewayProtocol } from '../core/protocols/mcp-gateway';
import type { SettingName } from '../core/config';

/** Bindings and settings of the mcp worker. */
export type McpEnv = Partial<Record<SettingName, string>> & {
  /** The api worker's McpGateway: authentication of MCP bearers and the one pipeline. */
  API: Service<McpGatewayProtocol>;
  /** The shared database: the authorization server's clients, grants and tokens, and custom servers. */
  DB: D1Database;
  MCP_URL: string;
  APP_URL: string;
};

/** The MCP endpoint's origin, e.g. https://mcp.sluice.dev, from MCP_URL (which ends in /mcp). */
export function mcpOrigin(env: McpEnv): string {
  return new URL(env.MCP_URL).origin;
}

/** Origins allowed to call from a browser: the MCP host, the dashboard, and MCP_ALLOWED_ORIGINS. */
export function allowedOrigins(env: McpEnv): Set<string> {
  const extra = (env.MCP_ALLOWED_ORIGINS ?? '').split(',').map((origin) => origin.trim()).filter(Boolean);
  return new Set([mcpOrigin(env), new URL(env.APP_URL).origin, ...extra]);
}
