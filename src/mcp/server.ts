import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  InitializeRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker';
import { z } from 'zod';
import packageJson from '../../package.json';
import type { ToolError, ToolOutcome, WorkspaceToolOutcome } from '../core/protocols/mcp-gateway';
import type { KeyPrincipal } from '../core/records';
import type { McpEnv } from './config';
import { promptsOf } from './prompts';
import { completeTemplateArgument, readable, readResource, RESOURCE_TEMPLATES, RESOURCES } from './resources';
import { listTools } from './tool-listing';
import { type CatalogTool, SearchInput, searchTools } from '../operations/tools';
import { isWorkspaceTool } from '../services/workspace-tools';
import { operationOfJob } from '../services/jobs/operations';
import { mcpToolName } from '../core/operation';
import { protocolError } from './protocol-error';
import { detailsFromZod } from '../core/validation';
import { NoParameters } from '../core/schemas';
import { progressTokenOf, withProgress } from './progress';

/** What one MCP endpoint serves: its name and its tools (its prompts follow from them). */
export interface Toolset {
  name: string;
  tools: CatalogTool[];
}

/**
 * One MCP server and transport per request (stateless): tools, resources (read on demand, no subscriptions),
 * prompts, and completion of their arguments. Answers are JSON, except a tool call whose client asked for
 * progress (`_meta.progressToken`): that one is answered as an event stream, which carries progress
 * notifications while the call runs and then its result (./progress.ts). Tool arguments are not validated
 * here: they go as sent to the pipeline, whose refusal comes back as a tool error carrying the same
 * VALIDATION_ERROR and details as REST.
 */
export async function serveMcp(request: Request, env: McpEnv, principal: KeyPrincipal, toolset: Toolset, requestId: string): Promise<Response> {
  const enabledTools = toolset.tools;
  const enabled = new Set(enabledTools.map((tool) => tool.name));
  const server = new Server(
    { name: toolset.name, version: packageJson.version },
    {
      capabilities: { tools: {}, resources: {}, prompts: {}, completions: {} },
      jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
      instructions: 'Sluice: web, SEO, model-answer, social-platform and lead data as tools. Use sluice_tools_search to find a tool (or read the resource sluice://catalog); each call is metered in cents.',
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listTools(enabledTools) }));

  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: RESOURCES }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: RESOURCE_TEMPLATES }));
  server.setRequestHandler(ReadResourceRequestSchema, ({ params }) => readResource(params.uri, env, principal, requestId));

  const prompts = promptsOf(enabled);
  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: prompts.list() }));
  server.setRequestHandler(GetPromptRequestSchema, ({ params }) => prompts.get(params.name, params.arguments));
  server.setRequestHandler(CompleteRequestSchema, async ({ params: { ref, argument } }) => {
    const values =
      ref.type === 'ref/prompt'
        ? prompts.complete(ref.name, argument.name, argument.value)
        : await completeTemplateArgument(ref.uri, argument.name, argument.value, env, principal, requestId);
    // The spec caps an answer at 100 values; `total` says how many matched.
    return { completion: { values: values.slice(0, 100), total: values.length, hasMore: values.length > 100 } };
  });

  server.setRequestHandler(CallToolRequestSchema, async ({ params }, extra): Promise<CallToolResult> => {
    const whileRunning = <T>(work: Promise<T>) => withProgress(params._meta?.progressToken, extra.sendNotification, work);
    if (params.name === 'sluice_tools_search') {
      const parsed = SearchInput.safeParse(params.arguments ?? {});
      if (!parsed.success) {
        return toolError({ code: 'VALIDATION_ERROR', message: 'sluice_tools_search needs a query (1-200 characters) and an optional limit (1-50).', details: detailsFromZod(parsed.error, 'body') });
      }
      return toolResult({ tools: searchTools(parsed.data.query, parsed.data.limit, enabled) });
    }
    if (params.name === 'sluice_tools_list_enabled') {
      // Its input schema takes no properties (additionalProperties false): one sent is refused, as any tool's unknown field is.
      const parsed = NoParameters.safeParse(params.arguments ?? {});
      if (!parsed.success) return toolError({ code: 'VALIDATION_ERROR', message: 'sluice_tools_list_enabled takes no arguments.', details: detailsFromZod(parsed.error, 'body') });
      const missing = await env.API.missingSettings();
      return toolResult({
        tools: enabledTools.map(({ name, price }) => {
          const lacking = missing[name] ?? [];
          return lacking.length === 0 ? { name, price, usable: true } : { name, price, usable: false, reason: `Not configured on this server: needs ${lacking.join(' and ')}.` };
        }),
      });
    }
    if (isWorkspaceTool(params.name)) {
      // A job runs its operation as that operation's tool would: an endpoint that does not serve the tool (a facet
      // of another group, a custom server without it) does not run it as a job either.
      const unserved = params.name === 'sluice_jobs_submit' ? unservedJobOperation(params.arguments, enabled) : undefined;
      if (unserved) return toolError(unserved);
      const outcome = (await whileRunning(env.API.callWorkspaceTool(principal, params.name, params.arguments ?? {}, requestId, params._meta))) as WorkspaceToolOutcome;
      return outcome.ok ? toolResult({ data: outcome.data }) : toolError(outcome.error);
    }
    // An unknown tool is a protocol error (MCP: -32602), not a tool result the model should read as data.
    if (!enabled.has(params.name)) throw protocolError(ErrorCode.InvalidParams, `Unknown tool: ${params.name} is not served here. Find tools with sluice_tools_search.`);
    const outcome = (await whileRunning(env.API.callTool(principal, params.name, params.arguments ?? {}, requestId, params._meta))) as ToolOutcome;
    if (!outcome.ok) return toolError(outcome.error);
    const { ok: _ok, ...payload } = outcome;
    return toolResult(payload);
  });

  const body = await request.clone().json().catch(() => INVALID_JSON);
  const malformed = malformedRequest(body);
  if (malformed) return malformed;
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: progressTokenOf(body) === undefined });
  await server.connect(transport);
  // A body that is not JSON goes to the transport as sent, which answers the JSON-RPC parse error.
  return body === INVALID_JSON ? transport.handleRequest(request) : transport.handleRequest(request, { parsedBody: body });
}

const INVALID_JSON = Symbol('invalid JSON');

const ToolCallParams = z.looseObject({ name: z.string().min(1), arguments: z.record(z.string(), z.unknown()).optional() });

/** The requests whose params the SDK checks against its own schema, each with the shape to name when they fail it. */
const LIST_PARAMS = { schema: z.object({ params: z.looseObject({ cursor: z.string().optional() }).optional() }), takes: '{"cursor"?: string}' };
const CHECKED_REQUESTS: Record<string, { schema: { safeParse(value: unknown): { success: boolean } }; takes: string }> = {
  'tools/list': LIST_PARAMS,
  'resources/list': LIST_PARAMS,
  'resources/templates/list': LIST_PARAMS,
  'prompts/list': LIST_PARAMS,
  'tools/call': { schema: z.object({ params: ToolCallParams }), takes: '{"name": string, "arguments"?: object}' },
  'resources/read': { schema: ReadResourceRequestSchema, takes: '{"uri": string}' },
  'prompts/get': { schema: GetPromptRequestSchema, takes: '{"name": string, "arguments"?: {string: string}}' },
  'completion/complete': { schema: CompleteRequestSchema, takes: '{"ref": {"type": "ref/prompt", "name"} or {"type": "ref/resource", "uri"}, "argument": {"name", "value"}}' },
  initialize: { schema: InitializeRequestSchema, takes: '{"protocolVersion": string, "capabilities": object, "clientInfo": {"name", "version"}}' },
};

/**
 * JSON-RPC -32602 (invalid params) for a request whose params its method does not take. The SDK would answer
 * -32603 (internal error) with its own schema's issues dumped in the message; a client needs to hear that its
 * request was wrong, and what the method takes.
 */
function malformedRequest(body: unknown): Response | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const message = body as { method?: unknown; id?: unknown; params?: unknown };
  const checked = typeof message.method === 'string' ? CHECKED_REQUESTS[message.method] : undefined;
  if (!checked || checked.schema.safeParse({ method: message.method, params: message.params }).success) return undefined;
  const error = { code: ErrorCode.InvalidParams, message: `Invalid params: ${message.method as string} takes ${checked.takes}.` };
  return Response.json({ jsonrpc: '2.0', id: message.id ?? null, error });
}

/** The refusal of a job whose operation's tool this endpoint does not serve; undefined when it does (or the pipeline will refuse the arguments). */
function unservedJobOperation(args: Record<string, unknown> | undefined, enabled: Set<string>): ToolError | undefined {
  const name = args?.operation;
  const operation = typeof name === 'string' ? operationOfJob(name) : undefined;
  if (!operation || enabled.has(mcpToolName(operation))) return undefined;
  return {
    code: 'VALIDATION_ERROR',
    message: `${name as string} is not served at this MCP endpoint, so it does not run here as a job either: its tool ${mcpToolName(operation)} is not among this server's tools. Submit the job at an endpoint that serves it (/mcp, or its group's).`,
    details: [{ field: 'operation', location: 'body', message: `Not served at this endpoint (${mcpToolName(operation)}).` }],
  };
}

/**
 * A successful call: its JSON as text and as `structuredContent`, and each picture it holds (a screenshot, a video's
 * frame: `data:image/...;base64,` URLs) as an MCP image block, so the model sees the image rather than reading
 * hundreds of thousands of characters of base64 twice over (a client with a token cap refused such results). In the
 * JSON the picture's place says which block it is.
 */
function toolResult(structured: Record<string, unknown>): CallToolResult {
  const images: ImageContent[] = [];
  const shown = withImagesApart(structured, images) as Record<string, unknown>;
  return { content: [{ type: 'text', text: JSON.stringify(shown) }, ...images], structuredContent: shown };
}

interface ImageContent {
  type: 'image';
  data: string;
  mimeType: string;
}

const IMAGE_DATA_URL = /^data:(image\/[a-z0-9.+-]+);base64,([A-Za-z0-9+/=]+)$/;

/** `value` with each image data: URL in it moved to `images` and replaced by where it went; the rest as it was. */
function withImagesApart(value: unknown, images: ImageContent[]): unknown {
  if (typeof value === 'string') {
    const image = value.startsWith('data:image/') ? IMAGE_DATA_URL.exec(value) : null;
    if (!image) return value;
    images.push({ type: 'image', data: image[2]!, mimeType: image[1]! });
    return `(${image[1]} image: content block ${images.length + 1} of this result)`;
  }
  if (Array.isArray(value)) return value.map((entry) => withImagesApart(entry, images));
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([name, entry]) => [name, withImagesApart(entry, images)]));
  return value;
}

/**
 * A failed call: the same error code, message and details as REST, as text the model reads. No
 * `structuredContent`: it would have to match the tool's output schema (`{data, meta}`), and clients
 * check it even on errors (the SDK's Client.callTool throws -32602 instead of showing the error).
 */
function toolError(error: ToolError): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: `${readable(error)}\n${JSON.stringify({ error })}` }] };
}
