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
});
