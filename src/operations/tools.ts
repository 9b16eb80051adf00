import { z } from 'zod';
import { OPERATIONS } from './';
import { PLATFORMS } from './platforms';
import { mcpToolName, type Operation } from '../core/operation';
import { portableSchema } from '../core/portable-schema';

const SOCIAL = new Set(['linkedin', 'youtube', 'tiktok', 'x', 'instagram', 'facebook']);

/**
 * The servers a workspace reaches: the default one with every tool, one per source slug (`/mcp/web`,
 * `/mcp/youtube`, `/mcp/leads`, ...) and `/mcp/social` with every social platform.
 */
export const FACETS: Record<string, (operation: Operation) => boolean> = {
  ...Object.fromEntries(Object.keys(PLATFORMS).map((slug) => [slug, (operation: Operation) => operation.platform === slug])),
  social: (operation: Operation) => SOCIAL.has(operation.platform),
};

export type Facet = string;

/** `/mcp, /mcp/web, ...`: the servers, as named in a 404. */
export const SERVER_PATHS = ['/mcp', ...Object.keys(FACETS).map((facet) => `/mcp/${facet}`)].join(', ');

export function isFacet(name: string): name is Facet {
  return Object.hasOwn(FACETS, name);
}

export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: Record<string, unknown> & { type: 'object' };
}

export interface CatalogTool extends ToolDefinition {
  group: string;
  price: string;
  operation: Operation;
}

function priceText(operation: Operation): string {
  const { cents, per, note } = operation.price.display;
  return `${cents} cent${cents === 1 ? '' : 's'} per ${per}${note ? ` (${note})` : ''}`;
}

/** The tool's input schema is the REST body schema itself, as portable JSON Schema (what a caller may send). */
function inputSchemaOf(schema: z.ZodType): ToolDefinition['inputSchema'] {
  const { $schema: _dialect, ...jsonSchema } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return { ...(portableSchema(jsonSchema) as Record<string, unknown>), type: 'object' };
}

/**
 * Every data tool, generated once per isolate from the operation registry. A tool's input schema is built when
 * it is first read (a listing, a search), not when the module loads: JSON Schema for all ninety took 34-38 ms of
 * every mcp and dashboard isolate's start (a profile of each worker's first request), and most requests never
 * list tools.
 */
export const DATA_TOOLS: CatalogTool[] = OPERATIONS.map((operation) => {
  const price = priceText(operation);
  let inputSchema: ToolDefinition['inputSchema'] | undefined;
  return {
    name: mcpToolName(operation),
    group: operation.platform,
    price,
    operation,
    description: `${operation.summary}. ${operation.description} Costs ${price}; only successful calls are charged. Same as ${operation.method} ${operation.paths[0]} of the REST API.`,
    get inputSchema() {
      return (inputSchema ??= inputSchemaOf(operation.input));
    },
  };
});

export const SearchInput = z.strictObject({
  query: z.string().min(1).max(200).describe('Words to look for in tool names, descriptions and groups, e.g. "backlinks" or "linkedin company".'),
  limit: z.number().int().min(1).max(50).default(10).describe('Most tools to return.'),
});

export const DISCOVERY_TOOLS: ToolDefinition[] = [
  {
    name: 'sluice_tools_search',
    description:
      'Searches every Sluice tool by name, description and group. Answers each match with its description, price and whether it is enabled on this server. Free.',
    inputSchema: inputSchemaOf(SearchInput),
  },
  {
    name: 'sluice_tools_list_enabled',
    description: 'Lists the tools on this server with their prices, and whether each is usable now (its vendor is configured here) or why not. Free.',
    inputSchema: inputSchemaOf(z.strictObject({})),
  },
];

export function toolsOf(facet: Facet | undefined): CatalogTool[] {
  return facet ? DATA_TOOLS.filter((tool) => FACETS[facet]!(tool.operation)) : DATA_TOOLS;
}

/**
 * Free-text search: every word of the query scores where it appears (name counts most, then group,
 * then description); tools matching no word are left out.
 */
export function searchTools(query: string, limit: number, enabled: Set<string>) {
  const words = query.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
  return DATA_TOOLS.map((tool) => {
    const name = tool.name.toLowerCase();
    const description = tool.description.toLowerCase();
    const score = words.reduce((sum, word) => sum + (name.includes(word) ? 3 : 0) + (tool.group.includes(word) ? 2 : 0) + (description.includes(word) ? 1 : 0), 0);
    return { tool, score };
  })
    .filter((match) => match.score > 0)
    .sort((left, right) => right.score - left.score || left.tool.name.localeCompare(right.tool.name))
    .slice(0, limit)
    .map(({ tool }) => ({ name: tool.name, group: tool.group, description: tool.description, price: tool.price, enabled: enabled.has(tool.name) }));
}
