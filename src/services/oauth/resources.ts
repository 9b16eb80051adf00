import { type Facet, isFacet } from '../../operations/tools';

/**
 * The protected resources of the MCP host, each its own token audience (RFC 8707): every tool at /mcp,
 * one group's tools at /mcp/<facet>, a workspace's own server at /mcp/s/<server_id>.
 */
export type McpResource = { kind: 'all' } | { kind: 'facet'; facet: Facet } | { kind: 'server'; serverId: string };

export const SERVER_ID_PATTERN = /^mcps_[0-9a-f]{24}$/;

export function resourcePath(resource: McpResource): string {
  switch (resource.kind) {
    case 'all':
      return '/mcp';
    case 'facet':
      return `/mcp/${resource.facet}`;
    case 'server':
      return `/mcp/s/${resource.serverId}`;
  }
}

/** The resource a path names (`/mcp`, `/mcp/seo`, `/mcp/s/mcps_...`), or undefined. */
export function resourceOfPath(path: string): McpResource | undefined {
  if (path === '/mcp') return { kind: 'all' };
  const facet = /^\/mcp\/([a-z]+)$/.exec(path)?.[1];
  if (facet !== undefined) return isFacet(facet) ? { kind: 'facet', facet } : undefined;
  const serverId = /^\/mcp\/s\/([^/]+)$/.exec(path)?.[1];
  return serverId !== undefined && SERVER_ID_PATTERN.test(serverId) ? { kind: 'server', serverId } : undefined;
}

/**
 * The resource an RFC 8707 indicator names: an absolute URL on the MCP origin whose path is one of ours,
 * exactly (no query, no fragment, no trailing slash), so each resource has one spelling and one audience.
 */
export function resourceOfIndicator(origin: string, indicator: string): McpResource | undefined {
  let url: URL;
  try {
    url = new URL(indicator);
  } catch {
    return undefined;
  }
  if (url.origin !== origin || url.search || url.hash || url.username || url.password) return undefined;
  return resourceOfPath(url.pathname);
}

export function resourceUrl(origin: string, resource: McpResource): string {
  return `${origin}${resourcePath(resource)}`;
}
