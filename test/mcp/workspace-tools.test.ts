import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import { clock } from '../../src/core/clock';
import { mcpCall } from './in-isolate';
import { bearer, call, ops, provision } from '../support/api';
import { query } from '../databases/requests';
import { toolErrorOf } from './tool-error';

describe('the workspace tools over MCP', () => {
  it('records the onboarding intent for the workspace with sluice_onboarding, the successor of /v1/register', async () => {
    const account = await provision({ plan: 'payg' });
    const token = (await ops('POST', '/keys', { workspaceId: account.workspaceId, scope: 'workspace_mcp', name: 'mcp' })).body.data.key;
    const result = await mcpCall(token, 'sluice_onboarding', { agentName: 'Cursor', useCase: 'Enrich our CRM leads.', sources: ['leads'] });
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent.data).toMatchObject({ workspaceId: account.workspaceId, next: { sources: [{ slug: 'leads' }] } });
    const row = await env.DB.prepare('SELECT surface, agent_name, organization_id FROM onboarding_intents WHERE id = ?').bind(result.structuredContent.data.id).first();
    expect(row).toEqual({ surface: 'mcp', agent_name: 'Cursor', organization_id: account.organizationId });

    const refused = await mcpCall(token, 'sluice_onboarding', { useCase: 'x' });
    expect(refused.isError).toBe(true);
    expect(toolErrorOf(refused)).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'agentName', location: 'body', message: 'Required.' }] });
  });

  it('counts each sluice_onboarding call in the workspace window, as every free call: once a minute of REST calls used it, the tool is refused and records nothing', async () => {
    const account = await provision({ plan: 'payg' });
    const token = (await ops('POST', '/keys', { workspaceId: account.workspaceId, scope: 'workspace_mcp', name: 'mcp' })).body.data.key;
    const minute = Date.UTC(2031, 0, 1, 12, 0, 20);
    vi.spyOn(clock, 'now').mockReturnValue(minute);
    try {
      const free = () => call('/v1/connections/vendors', bearer(account.key));
      for (let used = 0; used < 60; used++) expect((await free()).status).toBe(200);
      const before = await env.DB.prepare('SELECT COUNT(*) AS n FROM onboarding_intents WHERE workspace_id = ?').bind(account.workspaceId).first('n');
      const refused = await mcpCall(token, 'sluice_onboarding', { agentName: 'Cursor', useCase: 'One more.', sources: ['leads'] });
      expect(toolErrorOf(refused)).toMatchObject({ code: 'RATE_LIMITED' });
      expect(await env.DB.prepare('SELECT COUNT(*) AS n FROM onboarding_intents WHERE workspace_id = ?').bind(account.workspaceId).first('n')).toBe(before);
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('creates, lists and queries a database with the sluice_db tools, in the same window and isolation as REST', async () => {
    const account = await provision({ plan: 'payg' });
    const token = (await ops('POST', '/keys', { workspaceId: account.workspaceId, scope: 'workspace_mcp', name: 'mcp' })).body.data.key;
    const created = await mcpCall(token, 'sluice_db_create', { name: 'runs' });
    const databaseId = created.structuredContent.data.id;
    expect((await mcpCall(token, 'sluice_db_list', {})).structuredContent.data.databases).toEqual([expect.objectContaining({ id: databaseId, name: 'runs' })]);
    await mcpCall(token, 'sluice_db_query', { databaseId, sql: 'CREATE TABLE seen (url TEXT PRIMARY KEY)' });
    await mcpCall(token, 'sluice_db_query', { databaseId, sql: 'INSERT INTO seen VALUES (?)', params: ['https://example.com'] });
    // The REST key of the same workspace reads what the agent wrote.
    expect((await query(account.key, databaseId, 'SELECT url FROM seen')).body.data.rows).toEqual([['https://example.com']]);

    const refused = await mcpCall(token, 'sluice_db_query', { databaseId, sql: 'SELEC 1' });
    expect(toolErrorOf(refused)).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'sql', message: expect.stringContaining('syntax error') }] });
    const stranger = await provision({ plan: 'payg' });
    const theirs = (await ops('POST', '/keys', { workspaceId: stranger.workspaceId, scope: 'workspace_mcp', name: 'mcp' })).body.data.key;
    expect(toolErrorOf(await mcpCall(theirs, 'sluice_db_query', { databaseId, sql: 'SELECT * FROM seen' })).code).toBe('NOT_FOUND');
  });
});
