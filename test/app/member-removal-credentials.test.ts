import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { bearer, call, ops } from '../support/api';
import { join, type Person, signUp } from '../support/dashboard';
import { connect, form, listTools } from '../mcp-oauth/support';

const DAY = 24 * 60 * 60 * 1000;
const SANDBOX_CALL = '/runtime/data/linkedin/get-company-by-domain?domain=acme.example';

/** An owner on a plan with seats, and a member who accepted an invitation into the owner's organization. */
async function ownerAndMember(): Promise<{ owner: Person; member: Person }> {
  const owner = await signUp();
  await ops('PUT', `/organizations/${owner.organizationId}/plan`, { plan: 'team' });
  const member = await signUp();
  const invitation = await owner.json('POST', `/api/organizations/${owner.organizationId}/invitations`, { email: member.account.user.email, role: 'member' });
  expect(invitation.status).toBe(201);
  expect((await member.json('POST', `/api/invitations/${invitation.body.data.token}/accept`)).status).toBe(200);
  return { owner, member };
}

/** What `person` makes in the owner's workspace: an API key, an MCP token and a sandbox key. */
async function credentialsOf(person: Person, workspaceId: string) {
  const made = async (path: string, name: string) => {
    const response = await person.json('POST', `/api/workspaces/${workspaceId}/${path}`, { name });
    expect(response.status, path).toBe(201);
    return response.body.data as { id: string; key: string };
  };
  return { apiKey: await made('keys', 'program'), mcpToken: await made('mcp-tokens', 'laptop'), sandboxKey: await made('sandbox-keys', 'dry runs') };
}

describe("a person's own credentials end with their membership", () => {
  it.each([
    ['removed by an owner', (owner: Person, _member: Person) => owner],
    ['leaving', (_owner: Person, member: Person) => member],
  ])('%s: their MCP tokens and sandbox keys are refused from the next call, their API keys and everyone else\'s keep working', async (_, actor) => {
    const { owner, member } = await ownerAndMember();
    const theirs = await credentialsOf(member, owner.workspaceId);
    const owners = await credentialsOf(owner, owner.workspaceId);
    // A sandbox key of theirs that expired: refused already, so left as it is.
    const expired = `key_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`;
    await env.DB.prepare(
      "INSERT INTO api_keys (id, workspace_id, key_hash, key_ciphertext, key_hint, scope, name, created_at, created_by, expires_at) VALUES (?1, ?2, 'hash_' || ?1, 'x', 'hint', 'workspace_dryrun', 'old dry runs', ?3, ?4, ?5)",
    )
      .bind(expired, owner.workspaceId, new Date(Date.now() - 8 * DAY).toISOString(), member.account.user.id, new Date(Date.now() - DAY).toISOString())
      .run();
    expect((await listTools('/mcp', theirs.mcpToken.key)).status).toBe(200);
    expect((await call(SANDBOX_CALL, bearer(theirs.sandboxKey.key))).status).toBe(200);

    const removed = await actor(owner, member).json('DELETE', `/api/organizations/${owner.organizationId}/members/${member.account.user.id}`);
    expect(removed.status).toBe(200);
    expect(removed.body.data).toEqual({ removed: true, revokedKeyIds: expect.arrayContaining([theirs.mcpToken.id, theirs.sandboxKey.id]) });
    expect(removed.body.data.revokedKeyIds).toHaveLength(2);
    expect(await env.DB.prepare('SELECT revoked_at AS at FROM api_keys WHERE id = ?').bind(expired).first('at')).toBeNull();

    expect((await listTools('/mcp', theirs.mcpToken.key)).status).toBe(401);
    expect((await call(SANDBOX_CALL, bearer(theirs.sandboxKey.key))).status).toBe(401);
    expect((await call('/v1/credits', bearer(theirs.apiKey.key))).status).toBe(200);
    expect((await listTools('/mcp', owners.mcpToken.key)).status).toBe(200);
    expect((await call(SANDBOX_CALL, bearer(owners.sandboxKey.key))).status).toBe(200);
    expect((await call('/v1/credits', bearer(owners.apiKey.key))).status).toBe(200);
  });

  it('ends the OAuth grants of the clients they connected: no refresh, and nothing back if they rejoin', async () => {
    const { owner, member } = await ownerAndMember();
    const client = await connect(member, { workspaceId: owner.workspaceId });
    const ownersClient = await connect(owner, { workspaceId: owner.workspaceId });
    expect((await owner.json('DELETE', `/api/organizations/${owner.organizationId}/members/${member.account.user.id}`)).status).toBe(200);

    const refreshed = await form('/oauth/token', { grant_type: 'refresh_token', refresh_token: client.refresh_token, client_id: client.clientId });
    expect(refreshed.status).toBe(400);
    expect((await refreshed.json()) as unknown).toMatchObject({ error: 'invalid_grant' });
    const grant = await env.DB.prepare('SELECT revoked_reason AS reason FROM oauth_grants WHERE user_id = ? AND workspace_id = ?').bind(member.account.user.id, owner.workspaceId).first('reason');
    expect(grant).toBe('the person who authorized it left the organization');
    // Back in the organization, the old client is not: it needs a new consent.
    await join(member, owner.organizationId, 'member');
    expect((await listTools('/mcp', client.access_token)).status).toBe(401);
    expect((await listTools('/mcp', ownersClient.access_token)).status).toBe(200);
  });

  it('leaves their credentials alone when the removal is refused (the last owner stays)', async () => {
    const { owner } = await ownerAndMember();
    const owners = await credentialsOf(owner, owner.workspaceId);
    const refused = await owner.json('DELETE', `/api/organizations/${owner.organizationId}/members/${owner.account.user.id}`);
    expect(refused.status).toBe(409);
    expect((await listTools('/mcp', owners.mcpToken.key)).status).toBe(200);
    expect((await call(SANDBOX_CALL, bearer(owners.sandboxKey.key))).status).toBe(200);
  });
});
