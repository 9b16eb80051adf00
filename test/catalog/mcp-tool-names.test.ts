import { describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../src/operations';
import { provision } from '../support/api';
import { toolNames } from '../mcp-oauth/support';

/**
 * Spec "MCP tool naming": each REST tool endpoint is an MCP tool named `data_<group>_<operation>`, the
 * operation's kebab-case name in snake case. The one name the spec gives otherwise: serp is
 * `data_seo_<search_engine>_search`, and its engine is Google.
 */
const SPEC_EXCEPTIONS: Record<string, string> = { 'seo serp': 'data_seo_google_search' };

function expectedToolName(group: string, operation: string): string {
  return SPEC_EXCEPTIONS[`${group} ${operation}`] ?? `data_${group}_${operation.replaceAll('-', '_')}`;
}

const EXPECTED = OPERATIONS.map((operation) => [`${operation.platform} ${operation.name}`, operation.platform, expectedToolName(operation.platform, operation.name)] as const);

describe('MCP tool names are data_<group>_<operation>', async () => {
  const { key } = await provision({ scope: 'workspace_mcp' });
  const listed = await toolNames('/mcp', key);
  const dataTools = listed.filter((name) => name.startsWith('data_'));

  it('lists data_web_search, data_web_scrape and data_web_map', () => {
    expect(listed).toEqual(expect.arrayContaining(['data_web_search', 'data_web_scrape', 'data_web_map']));
  });

  it('lists every data tool once, each a lowercase snake-case name', () => {
    expect(dataTools.length).toBeGreaterThan(0);
    expect(new Set(dataTools).size).toBe(dataTools.length);
    for (const name of dataTools) expect(name).toMatch(/^data_[a-z0-9_]+$/);
  });

  it('lists exactly one data tool per operation of the registry, named from its group and name', () => {
    expect([...dataTools].sort()).toEqual(EXPECTED.map(([, , name]) => name).sort());
  });

  it.each(EXPECTED)('%s (group %s) is listed as %s, also at /mcp/<group>', async (_operation, group, name) => {
    expect(name.startsWith(`data_${group}_`)).toBe(true);
    expect(await toolNames(`/mcp/${group}`, key)).toContain(name);
  });
});
