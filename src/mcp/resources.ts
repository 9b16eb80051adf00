import type { ReadResourceResult, Resource, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import { protocolError } from './protocol-error';
import type { ToolError, WorkspaceToolOutcome } from '../core/protocols/mcp-gateway';
import type { KeyPrincipal } from '../core/records';
import { SOURCES } from '../operations/catalog';
import type { McpEnv } from './config';

/**
 * What a client may read without calling a tool: the catalog and llms.txt the api worker serves at
 * /v1/platforms and /llms.txt, and the workspace's databases. Read on demand, never pushed: the server is
 * stateless, so there are no subscriptions.
 */
export const RESOURCES: Resource[] = [
  {
    uri: 'sluice://catalog',
    name: 'catalog',
    title: 'Catalog of sources and tools',
    description: 'Every source with its operations, REST paths, MCP tool names and prices: the JSON of GET /v1/platforms.',
    mimeType: 'application/json',
  },
  {
    uri: 'sluice://llms.txt',
    name: 'llms.txt',
    title: 'llms.txt',
    description: "The index an agent reads first (llmstxt.org): docs, every operation with its price and MCP tool, this installation's URLs.",
    mimeType: 'text/markdown',
  },
  {
    uri: 'sluice://databases',
    name: 'databases',
    title: "This workspace's databases",
    description: "The workspace's SQLite databases (id, name, created), as sluice_db_list answers. Free; counts against the workspace's requests per minute.",
    mimeType: 'application/json',
  },
];

export const RESOURCE_TEMPLATES: ResourceTemplate[] = [
  {
    uriTemplate: 'sluice://catalog/{platform}',
    name: 'platform',
    title: "One source's catalog entry",
    description: 'One source (web, seo, linkedin, ...) with its operations, MCP tool names and prices: the JSON of GET /v1/platforms/{slug}.',
    mimeType: 'application/json',
  },
  {
    uriTemplate: 'sluice://databases/{databaseId}',
    name: 'database',
    title: 'One database: size and tables',
    description: 'A workspace database with its size and table names, before querying it with sluice_db_query. Free; counts against the workspace\'s requests per minute.',
    mimeType: 'application/json',
  },
];

const PLATFORM_SLUGS = SOURCES.map((platform) => platform.slug);

/** MCP's "resource not found" (the spec's -32002). */
const RESOURCE_NOT_FOUND = -32002;

/** The resource at `uri`, read now. */
export async function readResource(uri: string, env: McpEnv, principal: KeyPrincipal, requestId: string): Promise<ReadResourceResult> {
  if (uri === 'sluice://catalog') return json(uri, { platforms: SOURCES });
  if (uri === 'sluice://llms.txt') return { contents: [{ uri, mimeType: 'text/markdown', text: await env.API.llmsTxt() }] };
  if (uri === 'sluice://databases') return json(uri, answered(uri, (await env.API.callWorkspaceTool(principal, 'sluice_db_list', {}, requestId)) as WorkspaceToolOutcome));

  const platform = /^sluice:\/\/catalog\/([^/]+)$/.exec(uri)?.[1];
  if (platform !== undefined) {
    const entry = SOURCES.find((candidate) => candidate.slug === platform);
    if (!entry) throw protocolError(RESOURCE_NOT_FOUND, `No source '${platform}'. Sources: ${PLATFORM_SLUGS.join(', ')}.`, { uri });
    return json(uri, entry);
  }
  const databaseId = /^sluice:\/\/databases\/([^/]+)$/.exec(uri)?.[1];
  if (databaseId !== undefined) return json(uri, answered(uri, (await env.API.describeDatabase(principal, databaseId, requestId)) as WorkspaceToolOutcome));

  const served = `Resources: ${RESOURCES.map((resource) => resource.uri).join(', ')}; templates: ${RESOURCE_TEMPLATES.map((template) => template.uriTemplate).join(', ')}.`;
  throw protocolError(RESOURCE_NOT_FOUND, `No resource ${uri}. ${served}`, { uri });
}

/** Values of a template's variable that start with what the client typed so far. */
export async function completeTemplateArgument(uriTemplate: string, argument: string, typed: string, env: McpEnv, principal: KeyPrincipal, requestId: string): Promise<string[]> {
  if (uriTemplate === 'sluice://catalog/{platform}' && argument === 'platform') return PLATFORM_SLUGS.filter((slug) => slug.startsWith(typed));
  if (uriTemplate === 'sluice://databases/{databaseId}' && argument === 'databaseId') {
    const outcome = (await env.API.callWorkspaceTool(principal, 'sluice_db_list', {}, requestId)) as WorkspaceToolOutcome;
    // A refusal (say, the rate window is full) is no suggestion, not a failed completion.
    if (!outcome.ok) return [];
    return (outcome.data as { databases: { id: string }[] }).databases.map((database) => database.id).filter((id) => id.startsWith(typed));
  }
  return [];
}

function json(uri: string, value: unknown): ReadResourceResult {
  return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(value) }] };
}

/** The data of a workspace call, or its refusal as a JSON-RPC error carrying the REST code and message. */
function answered(uri: string, outcome: WorkspaceToolOutcome): unknown {
  if (outcome.ok) return outcome.data;
  throw protocolError(outcome.error.code === 'NOT_FOUND' ? RESOURCE_NOT_FOUND : -32603, readable(outcome.error), { uri, error: outcome.error });
}

/** `CODE: message`, how a person or a model reads a refusal at a glance. */
export function readable(error: ToolError): string {
  return `${error.code}: ${error.message}`;
}
