import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { createKey } from '../../src/services/accounts';
import { clock } from '../../src/core/clock';
import { WORKSPACE_TOOLS } from '../../src/services/workspace-tools';
import { MAX_SERVERS_PER_WORKSPACE } from '../../src/services/custom-mcp-servers';
import { signUp, type Person } from '../support/dashboard';
import { authorize, connect, listTools, MCP_ORIGIN, mcp, pkce, registerClient, toolNames } from './support';

/** Served on every server whatever its chosen tools: discovery, onboarding and the workspace's databases. */
const DISCOVERY = ['sluice_tools_search', 'sluice_tools_list_enabled', ...Object.keys(WORKSPACE_TOOLS)];

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

/** The mcp worker reads a workspace's default server again after 30 seconds, beside the request that finds it that old; move past that. */
function afterDefaultMemory(times: number) {
  const start = realNow();
  clock.now = () => start + times * 31_000;
}

async function createServer(person: Person, name: string, tools: string[]) {
  const created = await person.json('POST', `/api/workspaces/${person.workspaceId}/mcp-servers`, { name, tools });
  expect(created.status).toBe(201);
  return created.body.data as { id: string; url: string; isDefault: boolean };
}

describe('custom MCP servers', () => {
  it('serves a server its chosen tools at its own URL, with its own metadata and audience', async () => {
    const person = await signUp();
    const server = await createServer(person, 'Backlinks only', ['data_seo_referring_domains', 'data_seo_backlinks_summary']);
    expect(server.url).toBe(`${MCP_ORIGIN}/mcp/s/${server.id}`);

    const metadata = (await (await mcp(`/.well-known/oauth-protected-resource/mcp/s/${server.id}`)).json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({ resource: server.url, authorization_servers: [MCP_ORIGIN] });
    const unauthenticated = await mcp(`/mcp/s/${server.id}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(unauthenticated.headers.get('www-authenticate')).toContain(`resource_metadata="${MCP_ORIGIN}/.well-known/oauth-protected-resource/mcp/s/${server.id}"`);

    const tokens = await connect(person, { resource: server.url });
    expect(tokens.resource).toBe(server.url);
    expect((await toolNames(`/mcp/s/${server.id}`, tokens.access_token)).sort()).toEqual([...DISCOVERY, 'data_seo_backlinks_summary', 'data_seo_referring_domains'].sort());
    // Its token is for that server only; a /mcp token is not accepted there either.
    expect((await listTools('/mcp', tokens.access_token)).status).toBe(401);
    const everything = await connect(person);
    expect((await listTools(`/mcp/s/${server.id}`, everything.access_token)).status).toBe(401);
  });

  it('makes the bare /mcp serve the default server, to OAuth tokens and bearers alike', async () => {
    const person = await signUp();
    const tokens = await connect(person);
    const all = await toolNames('/mcp', tokens.access_token);
    expect(all.length).toBeGreaterThan(10);

    const server = await createServer(person, 'Scraping', ['data_web_scrape']);
    expect((await person.request('POST', `/api/workspaces/${person.workspaceId}/mcp-servers/${server.id}/default`)).status).toBe(200);
    // Within 30 seconds the isolate still serves what it remembered. The first request after them is served it
    // too, and reads the default again beside itself; the requests after it get the new default.
    expect((await toolNames('/mcp', tokens.access_token)).length).toBe(all.length);
    afterDefaultMemory(1);
    expect((await toolNames('/mcp', tokens.access_token)).length).toBe(all.length);
    expect(await toolNames('/mcp', tokens.access_token)).toEqual([...DISCOVERY, 'data_web_scrape']);
    const bearer = await createKey(env.DB, env.KEY_ENCRYPTION_KEY, { workspaceId: person.workspaceId, scope: 'workspace_mcp', name: 'bearer' });
    expect(await toolNames('/mcp', bearer.key)).toEqual([...DISCOVERY, 'data_web_scrape']);

    // Another workspace's /mcp is unaffected.
    const other = await signUp();
    expect((await toolNames('/mcp', (await connect(other)).access_token)).length).toBe(all.length);

    expect((await person.request('DELETE', `/api/workspaces/${person.workspaceId}/mcp-servers/${server.id}`)).status).toBe(200);
    afterDefaultMemory(2);
    expect(await toolNames('/mcp', tokens.access_token)).toEqual([...DISCOVERY, 'data_web_scrape']);
    expect((await toolNames('/mcp', tokens.access_token)).length).toBe(all.length);
  });

  it("keeps another workspace out: its bearer, its consent, and its dashboard", async () => {
    const owner = await signUp();
    const server = await createServer(owner, 'Private', ['data_web_map']);
    const stranger = await signUp();

    const bearer = await createKey(env.DB, env.KEY_ENCRYPTION_KEY, { workspaceId: stranger.workspaceId, scope: 'workspace_mcp', name: 'bearer' });
    const refused = await listTools(`/mcp/s/${server.id}`, bearer.key);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('belongs to another workspace');

    const { challenge } = await pkce();
    await expect(authorize(stranger, { clientId: await registerClient(), challenge, resource: server.url, workspaceId: stranger.workspaceId })).rejects.toThrow(/consent failed: 400/);
    expect((await stranger.request('DELETE', `/api/workspaces/${owner.workspaceId}/mcp-servers/${server.id}`)).status).toBe(404);
    expect((await stranger.request('POST', `/api/workspaces/${stranger.workspaceId}/mcp-servers/${server.id}/default`)).status).toBe(404);
  });

  it('deleting a server disconnects the apps connected to it', async () => {
    const person = await signUp();
    const server = await createServer(person, 'Short-lived', ['data_web_map']);
    const tokens = await connect(person, { resource: server.url });
    expect((await person.request('DELETE', `/api/workspaces/${person.workspaceId}/mcp-servers/${server.id}`)).status).toBe(200);
    expect((await listTools(`/mcp/s/${server.id}`, tokens.access_token)).status).toBe(404);
    expect((await person.json('GET', `/api/workspaces/${person.workspaceId}/oauth-clients`)).body.data.clients).toEqual([]);
  });

  it('refuses a server without tools or with a tool that does not exist, naming the field', async () => {
    const person = await signUp();
    for (const tools of [[], ['data_web_teleport']]) {
      const refused = await person.json('POST', `/api/workspaces/${person.workspaceId}/mcp-servers`, { name: 'Bad', tools });
      expect(refused.status).toBe(400);
      expect(refused.body.error.details).toEqual([expect.objectContaining({ field: 'tools', location: 'body' })]);
    }
  });

  it(`holds at most ${MAX_SERVERS_PER_WORKSPACE} servers a workspace: one more is 409, and deleting one makes room`, async () => {
    const person = await signUp();
    const rows = Array.from({ length: MAX_SERVERS_PER_WORKSPACE - 1 }, (_, index) =>
      env.DB.prepare("INSERT INTO mcp_servers (id, workspace_id, name, tools, is_default, created_at) VALUES (?, ?, ?, '[\"data_web_scrape\"]', 0, ?)").bind(
        `mcps_fill_${person.workspaceId}_${index}`,
        person.workspaceId,
        `Filler ${index}`,
        new Date().toISOString(),
      ),
    );
    await env.DB.batch(rows);
    const last = await createServer(person, 'The last place', ['data_web_scrape']);
    const refused = await person.json('POST', `/api/workspaces/${person.workspaceId}/mcp-servers`, { name: 'One too many', tools: ['data_web_scrape'] });
    expect([refused.status, refused.body.error.code]).toEqual([409, 'CONFLICT']);
    expect((await person.json('DELETE', `/api/workspaces/${person.workspaceId}/mcp-servers/${last.id}`)).status).toBe(200);
    await createServer(person, 'Room again', ['data_web_scrape']);
  });
});
