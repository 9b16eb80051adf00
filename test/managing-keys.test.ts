/**
 * What changes what a workspace trusts (its vendor accounts, where its events go, its databases' existence) is its
 * owners' and admins' in the dashboard, and through /v1 takes a key made by one of them: a member's key reads and
 * uses these, as the member's dashboard does, but cannot do through the API what the dashboard refuses the member.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { bearer, call, json, ops } from './support/api';
import { join, signUp } from './support/dashboard';
import { FAKE_RECEIVER } from './fakes/webhook-receiver';

// Subscribed to what this test never sends, so no delivery is left in flight when it ends.
const hook = () => ({ url: `${FAKE_RECEIVER}/ok/${crypto.randomUUID()}`, events: ['usage.daily'] });

describe("a member's key", () => {
  it('uses and reads what the workspace trusts, and changes it only while its maker is an owner or admin', async () => {
    const owner = await signUp();
    await ops('PUT', `/organizations/${owner.organizationId}/plan`, { plan: 'team' });
    const member = await signUp();
    await join(member, owner.organizationId, 'member');
    const keyOf = async (person: typeof owner, name: string) => (await person.json('POST', `/api/workspaces/${owner.workspaceId}/keys`, { name })).body.data.key as string;
    const ownersKey = await keyOf(owner, 'owner program');
    const membersKey = await keyOf(member, 'member program');
    const send = (key: string, method: string, path: string, body?: unknown) => call(path, bearer(key, { method, body }));

    const endpoint = (await json(await send(ownersKey, 'POST', '/v1/webhook-endpoints', hook()))).data;
    const database = (await json(await send(ownersKey, 'POST', '/v1/db/databases', { name: 'shared' }))).data;
    const changes = () => [
      send(membersKey, 'POST', '/v1/webhook-endpoints', hook()),
      send(membersKey, 'PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { events: ['job.failed'] }),
      send(membersKey, 'POST', `/v1/webhook-endpoints/${endpoint.id}/test`),
      send(membersKey, 'POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`),
      send(membersKey, 'DELETE', `/v1/webhook-endpoints/${endpoint.id}`),
      send(membersKey, 'POST', '/v1/connections', { vendor: 'hunter', credentials: { apiKey: 'a'.repeat(40) } }),
      send(membersKey, 'DELETE', '/v1/connections/conn_000000000000000000000000'),
      send(membersKey, 'DELETE', `/v1/db/databases/${database.id}`),
    ];
    for (const refused of await Promise.all(changes())) {
      expect(refused.status, refused.url).toBe(403);
      expect((await json(refused)).error.message).toContain('Only keys made by an owner or admin');
    }
    // Reading and using them is the member's as much as anyone's.
    expect((await send(membersKey, 'GET', '/v1/webhook-endpoints')).status).toBe(200);
    expect((await send(membersKey, 'GET', '/v1/connections')).status).toBe(200);
    expect((await send(membersKey, 'POST', `/v1/db/databases/${database.id}/query`, { sql: 'SELECT 1' })).status).toBe(200);

    // Made an admin, the same key changes them from the next request; removed, it no longer does, while it still calls.
    await env.DB.prepare("UPDATE memberships SET role = 'admin' WHERE organization_id = ? AND user_id = ?").bind(owner.organizationId, member.account.user.id).run();
    expect((await send(membersKey, 'PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { events: ['job.failed'] })).status).toBe(200);
    expect((await owner.json('DELETE', `/api/organizations/${owner.organizationId}/members/${member.account.user.id}`)).status).toBe(200);
    const departed = await send(membersKey, 'DELETE', `/v1/webhook-endpoints/${endpoint.id}`);
    expect([departed.status, (await json(departed)).error.message]).toEqual([403, expect.stringContaining('no longer a member')]);
    expect((await send(membersKey, 'GET', '/v1/webhook-endpoints')).status).toBe(200);
  });
});
