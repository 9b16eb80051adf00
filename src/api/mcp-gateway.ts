import { WorkerEntrypoint } from 'cloudflare:workers';
import type { KeyPrincipal } from '../core/records';
import { authenticateMcpBearer } from '../services/auth';
import { publicUrls, type Env } from '../core/config';
import { getDatabase } from '../services/databases';
import { errorObject } from '../core/envelope';
import type { McpAuthentication, McpGatewayProtocol, ToolOutcome, WorkspaceToolOutcome } from '../core/protocols/mcp-gateway';
import { ApiError } from '../core/errors';
import { idempotencyKeyFromMcpMeta } from '../services/idempotency';
import { missingSettings } from '../operations/availability';
import { admitFreeCall, execute } from '../services/pipeline';
import { ensureServing } from '../services/platform-switches';
import { OPERATIONS } from '../operations';
import { mcpToolName, type Operation } from '../core/operation';
import { isWorkspaceTool } from '../services/workspace-tools';
import { connectionFailure, connectionUse } from '../services/connections';
import { llmsTxt } from './routes/llms-txt';
import { runWorkspaceTool } from './workspace-tool-calls';

const BY_TOOL_NAME = new Map<string, Operation>(OPERATIONS.map((operation) => [mcpToolName(operation), operation]));

/**
 * What the mcp worker reaches over its service binding: the same authentication and the same pipeline
 * as REST, so an MCP tool call is validated, rate-limited, billed and recorded exactly as its REST twin.
 * Not reachable from the internet: only a worker bound to it can call it.
 */
export class McpGateway extends WorkerEntrypoint<Env> implements McpGatewayProtocol {
  /** Work that goes on after this call has answered: reads behind the call, the cache's store. */
  readonly #waitUntil = (promise: Promise<unknown>) => this.ctx.waitUntil(promise);

  authenticate(token: string): Promise<McpAuthentication> {
    return authenticateMcpBearer(this.env, token, this.#waitUntil);
  }

  /** `toolMeta` is the call's `_meta`, where an idempotency key travels (MCP has no per-call headers). */
  async callTool(principal: KeyPrincipal, toolName: string, input: unknown, requestId: string, toolMeta?: unknown): Promise<ToolOutcome> {
    const operation = BY_TOOL_NAME.get(toolName);
    if (!operation) return { ok: false, status: 404, error: { code: 'NOT_FOUND', message: `No tool ${toolName}.` } };
    // A `connection` argument sends the call through one of the workspace's connections (issue 33), as
    // /v1/connections/{id}/data/... does; the rest is the tool's own input.
    const { connection: connectionId, ...toolInput } = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
    let through: Awaited<ReturnType<typeof connectionUse>> | undefined;
    try {
      await ensureServing(this.env.DB, operation.platform, this.#waitUntil);
      if (connectionId !== undefined) {
        if (typeof connectionId !== 'string') throw ApiError.validation([{ field: 'connection', location: 'body', message: 'A connection id (con_...), as GET /v1/connections lists.' }]);
        through = await connectionUse(this.env, principal.workspaceId, connectionId, operation);
      }
      const outcome = await execute(operation, connectionId === undefined ? (input ?? {}) : toolInput, 'body', {
        env: this.env,
        principal,
        requestId,
        waitUntil: this.#waitUntil,
        idempotencyKey: idempotencyKeyFromMcpMeta(toolMeta),
        ...(through ? { connection: through.use } : {}),
      }).catch(async (error: unknown) => {
        throw through ? await connectionFailure(this.env.DB, through.connection, through.vendor, error) : error;
      });
      return { ok: true, data: outcome.data, meta: outcome.meta, ...(outcome.message !== undefined ? { message: outcome.message } : {}) };
    } catch (error) {
      const known = error instanceof ApiError ? error : ApiError.internal();
      if (!(error instanceof ApiError)) console.error(JSON.stringify({ level: 'error', requestId, tool: toolName, error: String(error) }));
      return { ok: false, status: known.status, error: errorObject(known) };
    }
  }

  /** A workspace tool (onboarding, databases, webhook endpoints): validated like REST, through the same functions as its REST twin. */
  callWorkspaceTool(principal: KeyPrincipal, toolName: string, input: unknown, requestId: string, meta?: unknown): Promise<WorkspaceToolOutcome> {
    if (!isWorkspaceTool(toolName)) return Promise.resolve({ ok: false, status: 404, error: { code: 'NOT_FOUND', message: `No tool ${toolName}.` } });
    return workspaceOutcome(requestId, toolName, () => runWorkspaceTool(this.env, principal, toolName, input ?? {}, meta));
  }

  /** One of the workspace's databases with its size and tables, as GET /v1/databases/{id} answers it: free, in the workspace's window. */
  describeDatabase(principal: KeyPrincipal, databaseId: string, requestId: string): Promise<WorkspaceToolOutcome> {
    return workspaceOutcome(requestId, 'describeDatabase', async () => {
      await admitFreeCall(this.env, principal);
      return getDatabase(this.env, principal.workspaceId, databaseId);
    });
  }

  /** `/llms.txt` as this worker serves it, its URLs this installation's. */
  llmsTxt(): string {
    return llmsTxt(publicUrls(this.env));
  }

  /** Per tool, the settings its provider lacks here (empty: usable now); read from this worker's settings. */
  missingSettings(): Record<string, string[]> {
    return Object.fromEntries(OPERATIONS.map((operation) => [mcpToolName(operation), missingSettings(operation, this.env)]));
  }
}

/** What a free workspace call answered, or its refusal as the REST error object (an unexpected failure is logged and answered as INTERNAL). */
async function workspaceOutcome(requestId: string, name: string, run: () => Promise<unknown>): Promise<WorkspaceToolOutcome> {
  try {
    return { ok: true, data: await run() };
  } catch (error) {
    const known = error instanceof ApiError ? error : ApiError.internal();
    if (!(error instanceof ApiError)) console.error(JSON.stringify({ level: 'error', requestId, tool: name, error: String(error) }));
    return { ok: false, status: known.status, error: errorObject(known) };
  }
}
