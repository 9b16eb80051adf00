import { describe, expect, it } from 'vitest';
import { KEY_SCOPES } from '../../src/core/keys';
import { ops } from '../support/api';
import { signUp } from '../support/dashboard';
import { listTools, MCP_ORIGIN } from '../mcp-oauth/support';

/** A key of `scope` in a fresh workspace, minted through the operator API. */
async function keyOf(scope: string, workspaceId: string): Promise<string> {
  const key = await ops('POST', '/keys', { workspaceId, scope, name: `${scope} key` });
  if (key.status !== 201) throw new Error(`key failed: ${key.status} ${JSON.stringify(key.body)}`);
  return key.body.data.key;
}

async function workspace(): Promise<string> {
  const organization = await ops('POST', '/organizations', { name: 'MCP scopes org', plan: 'payg' });
  return (await ops('POST', '/workspaces', { organizationId: organization.body.data.id, name: 'MCP scopes' })).body.data.id;
}

/** Every scope the product knows but the MCP endpoint's own (spec "Key scopes": workspace_mcp "unlocks the MCP endpoint only"). */
const REFUSED_SCOPES = KEY_SCOPES.filter((scope) => scope !== 'workspace_mcp');

async function expectRefusal(response: Response, path: string) {
  expect(response.status).toBe(401);
  const challenge = response.headers.get('www-authenticate') ?? '';
  expect(challenge).toMatch(/^Bearer /);
  expect(challenge).toContain(`resource_metadata="${MCP_ORIGIN}/.well-known/oauth-protected-resource${path}"`);
  expect(challenge).toContain('error="invalid_token"');
  expect(challenge).toMatch(/error_description="[^"]*not accepted by the MCP endpoint[^"]*"/);
  expect(await response.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32001, message: expect.stringContaining('not accepted by the MCP endpoint') } });
}

describe('the MCP endpoint refuses every key but a workspace MCP bearer', async () => {
  const workspaceId = await workspace();

  it('accepts a workspace_mcp key of the same workspace (the control)', async () => {
    const key = await keyOf('workspace_mcp', workspaceId);
    expect((await listTools('/mcp', key)).status).toBe(200);
  });

  it.each(REFUSED_SCOPES.flatMap((scope) => ['/mcp', '/mcp/web'].map((path) => [scope, path] as const)))(
    'refuses a %s key at %s with 401 and the WWW-Authenticate challenge',
    async (scope, path) => {
      await expectRefusal(await listTools(path, await keyOf(scope, workspaceId)), path);
    },
  );

  it('refuses a sandbox key minted in the dashboard the same way', async () => {
    const person = await signUp();
    const created = await person.json('POST', `/api/workspaces/${person.workspaceId}/sandbox-keys`, { name: 'builder' });
    expect(created.status).toBe(201);
    await expectRefusal(await listTools('/mcp', created.body.data.key), '/mcp');
  });
});
