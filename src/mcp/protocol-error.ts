/**
 * A JSON-RPC error thrown from a handler: the SDK sends its `code`, `message` and `data` as they are. Not the
 * SDK's McpError, whose message already starts "MCP error <code>: ", which the client's McpError then puts
 * in front once more ("MCP error -32602: MCP error -32602: Unknown tool ...").
 */
export function protocolError(code: number, message: string, data?: unknown): Error {
  return Object.assign(new Error(message), { code, ...(data === undefined ? {} : { data }) });
}
