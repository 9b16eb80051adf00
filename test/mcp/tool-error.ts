/**
 * The REST error object a failed MCP tool call carries. An error result has no `structuredContent` (it
 * would have to match the tool's output schema); its text is `CODE: message` and then `{"error": ...}`.
 */
export function toolErrorOf(answer: object): { code: string; message: string; details?: { field: string; location?: string; message: string }[]; retryAfter?: number } {
  const result = answer as { isError?: unknown; content?: { type: string; text: string }[] };
  if (result.isError !== true) throw new Error(`Not a tool error: ${JSON.stringify(result)}`);
  const text = result.content![0]!.text;
  const [headline, json] = [text.slice(0, text.indexOf('\n')), text.slice(text.indexOf('\n') + 1)];
  const { error } = JSON.parse(json);
  if (headline !== `${error.code}: ${error.message}`) throw new Error(`The first line does not name the error: ${text}`);
  return error;
}
