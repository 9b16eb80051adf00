/** Bindings and settings of the api worker. Every public URL and credential is configuration. */
export interface Env {
  DB: D1Database;
  /** Base64 of 32 random bytes: the AES-GCM key that lets a key be re-revealed. */
  KEY_ENCRYPTION_KEY: string;
  /** Bearer for the operator API; when unset, `/ops/v1/*` does not exist. */
  OPS_TOKEN?: string;
  BASE_URL: string;
  TOOLS_BASE_URL: string;
  MCP_URL: string;
  APP_URL: string;
  /** The build served, e.g. a commit hash; set at deploy time. */
  BUILD_ID?: string;
  /** Professional-network data, a RapidAPI-style vendor. */
  LINKEDIN_API_KEY?: string;
  LINKEDIN_API_HOST?: string;
  LINKEDIN_BASE_URL?: string;
}

export interface PublicUrls {
  base: string;
  tools: string;
  mcp: string;
  app: string;
  docs: string;
  openapi: string;
  signup: string;
  agentSetup: string;
}

export function publicUrls(env: Env): PublicUrls {
  const base = trimSlash(env.BASE_URL);
  const app = trimSlash(env.APP_URL);
  return {
    base,
    tools: trimSlash(env.TOOLS_BASE_URL),
    mcp: trimSlash(env.MCP_URL),
    app,
    docs: `${base}/docs`,
    openapi: `${base}/openapi.json`,
    signup: `${app}/signup`,
    agentSetup: `${base}/agent-setup/prompt.md`,
  };
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
