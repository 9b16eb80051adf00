import { z } from 'zod';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { Meta } from '../core/schemas';
import { portableSchema } from '../core/portable-schema';
import { type CatalogTool, DISCOVERY_TOOLS, type ToolDefinition } from '../operations/tools';
import { WORKSPACE_LISTINGS } from '../services/workspace-tools';
import { CONNECTABLE_VENDORS } from '../services/connections-vendors';

/**
 * How tools are listed to MCP clients: the input schema, hints a client shows or acts on (every tool only
 * reads; data tools reach the open web and vendors, discovery tools do not), and the shape of what a call
 * answers (`structuredContent`).
 */
const jsonSchema = (schema: z.ZodType) => {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as Record<string, unknown>;
  return openObjects(portableSchema(rest)) as Record<string, unknown>;
};

/**
 * An answer's objects are open: zod writes `additionalProperties: false` for every plain object in output mode
 * (its parse would strip other keys), but an answer is not parsed on its way out, and a vendor's passes through
 * with the fields it has beyond the ones named. The MCP SDK's client checks `structuredContent` against the
 * schema and throws on a field it does not name, so every SEO and model-answer tool failed in it. REST's OpenAPI
 * document leaves its objects open the same way.
 */
function openObjects(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(openObjects);
  if (typeof schema !== 'object' || schema === null) return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([key, value]) => !(key === 'additionalProperties' && value === false))
      .map(([key, value]) => [key, openObjects(value)]),
  );
}

const META_SCHEMA = jsonSchema(Meta);

/** A data tool answers `{data, meta, message?}`: data is the REST response's `data`, meta the call's cost and balances. */
function dataOutputSchema(tool: CatalogTool): Tool['outputSchema'] {
  return {
    type: 'object',
    properties: { data: jsonSchema(tool.operation.output), meta: META_SCHEMA, message: { type: 'string' } },
    required: ['data', 'meta'],
  };
}

const SEARCH_OUTPUT = jsonSchema(
  z.object({ tools: z.array(z.object({ name: z.string(), group: z.string(), description: z.string(), price: z.string(), enabled: z.boolean() })) }),
);

export const ListEnabledOutput = z.object({
  tools: z.array(
    z.object({
      name: z.string(),
      price: z.string(),
      usable: z.boolean().describe('False when this installation lacks the vendor settings the tool needs; calling it would answer PROVIDER_UNAVAILABLE.'),
      reason: z.string().optional().describe('Why it is not usable now.'),
    }),
  ),
});

const DISCOVERY_OUTPUT: Record<string, Record<string, unknown>> = {
  sluice_tools_search: SEARCH_OUTPUT,
  sluice_tools_list_enabled: jsonSchema(ListEnabledOutput),
};

function discoveryListing(tool: ToolDefinition): Tool {
  return {
    ...tool,
    annotations: { readOnlyHint: true, openWorldHint: false, destructiveHint: false, idempotentHint: true },
    outputSchema: DISCOVERY_OUTPUT[tool.name] as Tool['outputSchema'],
  };
}

function dataListing(tool: CatalogTool): Tool {
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: withConnectionArgument(tool),
    annotations: { title: tool.operation.summary, readOnlyHint: true, openWorldHint: true, destructiveHint: false },
    outputSchema: dataOutputSchema(tool),
  };
}

/**
 * A tool that a connectable vendor serves takes an optional `connection` (issue 33): one argument rather than
 * a facet per connection, so the tool list stays the same whatever the workspace has connected.
 */
function withConnectionArgument(tool: CatalogTool): Tool['inputSchema'] {
  const vendors = CONNECTABLE_VENDORS.filter((vendor) => vendor.operations.includes(tool.operation)).map((vendor) => vendor.slug);
  if (vendors.length === 0) return tool.inputSchema;
  const connection = {
    type: 'string',
    description: `Optional: the id of one of the workspace's connections (${vendors.join(', ')}; GET /v1/connections) to send this call with its own vendor account, charged the plan's connection fee instead of the price.`,
  };
  return { ...tool.inputSchema, properties: { ...(tool.inputSchema.properties as Record<string, object> | undefined), connection } };
}

const DISCOVERY_LISTINGS = DISCOVERY_TOOLS.map(discoveryListing);
const DATA_LISTINGS = new Map<string, Tool>();

/** What tools/list answers for a server serving these data tools (listings are built once per isolate). */
export function listTools(tools: CatalogTool[]): Tool[] {
  return [
    ...DISCOVERY_LISTINGS,
    ...WORKSPACE_LISTINGS,
    ...tools.map((tool) => {
      let listing = DATA_LISTINGS.get(tool.name);
      if (!listing) DATA_LISTINGS.set(tool.name, (listing = dataListing(tool)));
      return listing;
    }),
  ];
}
