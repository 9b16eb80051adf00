import { describe, expect, it } from 'vitest';
import { portabilityProblems } from '../../src/core/portable-schema';
import { signUp } from '../support/dashboard';
import { connect, mcp } from '../mcp-oauth/support';

/** The tools that change something: an onboarding recorded, a database made or written. */
const WRITING_TOOLS = new Set(['sluice_onboarding', 'sluice_db_create', 'sluice_db_query', 'sluice_jobs_submit']);

async function rpc(token: string, method: string, params: unknown) {
  const response = await mcp('/mcp', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
  });
  return (await response.json()) as { result?: any; error?: { code: number; message: string } };
}

describe('tools/list as clients read it', async () => {
  const person = await signUp();
  const { access_token: token } = await connect(person);
  const { tools } = (await rpc(token, 'tools/list', {})).result as { tools: { name: string; inputSchema: unknown; outputSchema?: any; annotations?: any }[] };

  it.each(tools.map((tool) => [tool.name, tool] as const))('%s has a portable input schema, hints and an output schema', (_name, tool) => {
    expect(portabilityProblems(tool.inputSchema)).toEqual([]);
    expect(portabilityProblems(tool.outputSchema)).toEqual([]);
    expect(tool.annotations).toMatchObject({ openWorldHint: tool.name.startsWith('data_') });
    // Data and discovery tools only read; the workspace tools that write (onboarding, databases) say so.
    expect(tool.annotations.readOnlyHint).toBe(!WRITING_TOOLS.has(tool.name));
    expect(tool.outputSchema.type).toBe('object');
    if (tool.name.startsWith('data_')) expect(tool.outputSchema.required).toEqual(['data', 'meta']);
  });

  it('answers malformed tools/call params with -32602, without a schema dump', async () => {
    for (const params of [{ name: 42 }, { name: 'data_web_scrape', arguments: 'https://example.com' }, {}]) {
      const { error } = await rpc(token, 'tools/call', params);
      expect(error?.code).toBe(-32602);
      expect(error?.message.length).toBeLessThan(300);
    }
  });

  it('answers an unknown tool with -32602 naming it', async () => {
    const { error } = await rpc(token, 'tools/call', { name: 'data_web_teleport', arguments: {} });
    expect(error).toEqual({ code: -32602, message: expect.stringContaining('Unknown tool: data_web_teleport') });
  });

  it('answers malformed params of any request the SDK checks with -32602 saying what the method takes, not -32603 with a schema dump', async () => {
    const cases: Array<[method: string, params: unknown]> = [
      ['resources/read', {}],
      ['resources/read', { uri: 42 }],
      ['prompts/get', { arguments: {} }],
      ['completion/complete', { ref: { type: 'ref/prompt' } }],
      ['initialize', { protocolVersion: 7 }],
      ['tools/list', { cursor: 5 }],
      ['resources/list', { cursor: {} }],
      ['resources/templates/list', { cursor: [] }],
      ['prompts/list', { cursor: true }],
    ];
    for (const [method, params] of cases) {
      const { error } = await rpc(token, method, params);
      expect(error).toEqual({ code: -32602, message: expect.stringMatching(new RegExp(`^Invalid params: ${method} takes \\{.*\\}\\.$`)) });
    }
  });

  it("sends a protocol error's message once: no 'MCP error <code>:' in it, which the client's McpError adds itself", async () => {
    const errors = [
      (await rpc(token, 'tools/call', { name: 'data_web_teleport', arguments: {} })).error,
      (await rpc(token, 'prompts/get', { name: 'no_such_prompt' })).error,
      (await rpc(token, 'resources/read', { uri: 'sluice://nowhere' })).error,
    ];
    expect(errors.map((error) => error?.message.split(':')[0])).toEqual(['Unknown tool', 'Unknown prompt', 'No resource sluice']);
  });

  it('refuses bad arguments to the discovery tools as VALIDATION_ERROR with details, as any tool', async () => {
    const errorOf = async (name: string, args: unknown) => {
      const { result } = await rpc(token, 'tools/call', { name, arguments: args });
      expect(result.isError).toBe(true);
      const text = result.content[0].text as string;
      return (JSON.parse(text.slice(text.indexOf('\n{') + 1)) as { error: { code: string; details: { field: string }[] } }).error;
    };
    expect(await errorOf('sluice_tools_search', {})).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'query' }] });
    expect(await errorOf('sluice_tools_search', { query: 5, limit: 500 })).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'query' }, { field: 'limit' }] });
    expect(await errorOf('sluice_tools_list_enabled', { bogus: 1 })).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'bogus', message: 'Unknown field.' }] });
  });
});
