import type { SettingName } from '../../core/config';

/** Lifetimes of what the authorization server hands out, in milliseconds. */
export const LIFETIMES = {
  /** An authorization request waits this long for the person's decision. */
  request: 10 * 60_000,
  /** A code must be exchanged within a minute (RFC 9700: short-lived, single use). */
  code: 60_000,
  /** Access tokens are short-lived: a stolen one is worth fifteen minutes at most. */
  accessToken: 15 * 60_000,
  /**
   * A grant (and so its refresh tokens) ends thirty days after consent or its last refresh: a client left unused
   * that long signs in again, one in use does not every month.
   */
  grant: 30 * 24 * 60 * 60_000,
  /** However often it is refreshed, a grant ends a year after consent: the person is asked again once a year. */
  grantAtMost: 365 * 24 * 60 * 60_000,
  /** A validated client ID metadata document is trusted this long at most before it is fetched again. */
  clientDocument: 24 * 60 * 60_000,
} as const;

/** Prefixes say what a secret is when it turns up in a log or a bug report. */
export const TOKEN_PREFIX = { access: 'sluice_oat_', refresh: 'sluice_ort_', code: 'sluice_oac_', request: 'sluice_oar_' } as const;

/** The one scope: use the MCP tools of the workspace the person chose, billed to its organization. */
export const SCOPES = ['mcp'] as const;

/** The authorization server's issuer identifier: the MCP host's origin (RFC 8414, no path). */
export function issuerOf(mcpUrl: string): string {
  return new URL(mcpUrl).origin;
}

/** What the authorization server needs of a worker's bindings: the mcp worker's and the dashboard's both fit. */
export type OAuthEnv = Partial<Record<SettingName, string>> & { DB: D1Database; MCP_URL: string; APP_URL: string };
