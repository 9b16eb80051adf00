import type { ErrorObject, Meta } from '../envelope';
import type { KeyPrincipal } from '../records';

/** A refused tool call carries the REST error object itself. */
export type ToolError = ErrorObject;

export type WorkspaceToolOutcome = { ok: true; data: unknown } | { ok: false; status: number; error: ToolError };

export type ToolOutcome = { ok: true; data: unknown; message?: string; meta: Meta } | { ok: false; status: number; error: ToolError };

/** Whom an MCP bearer stands for, or why it is refused (the description `WWW-Authenticate` carries). */
export type McpAuthentication = { ok: true; principal: KeyPrincipal } | { ok: false; description: string };

/**
 * What the mcp worker asks the api worker over its service binding (src/api/mcp-gateway.ts): the same
 * authentication and the same pipeline as REST, so an MCP tool call is validated, rate-limited, billed
 * and recorded exactly as its REST twin.
 */
export interface McpGatewayProtocol extends Rpc.WorkerEntrypointBranded {
  authenticate(token: string): Promise<McpAuthentication>;
  /** `toolMeta` is the call's `_meta`, where an idempotency key travels (MCP has no per-call headers). */
  callTool(principal: KeyPrincipal, toolName: string, input: unknown, requestId: string, toolMeta?: unknown): Promise<ToolOutcome>;
  /** A workspace tool (onboarding, databases, webhook endpoints), through the same functions as its REST twin. */
  callWorkspaceTool(principal: KeyPrincipal, toolName: string, input: unknown, requestId: string, meta?: unknown): Promise<WorkspaceToolOutcome>;
  /** One of the workspace's databases with its size and tables, as GET /v1/databases/{id} answers it. */
  describeDatabase(principal: KeyPrincipal, databaseId: string, requestId: string): Promise<WorkspaceToolOutcome>;
  /** `/llms.txt` as the api worker serves it, its URLs this installation's. */
  llmsTxt(): string;
  /** Per tool, the settings its provider lacks here (empty: usable now). */
  missingSettings(): Record<string, string[]>;
}
