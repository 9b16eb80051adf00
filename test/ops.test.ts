import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { buildApiApp } from '../src/api';
import { hashKey, KEY_PATTERN } from '../src/core/keys';
import { call, json, ops, provision } from './support/api';

describe('operator API /ops/v1', () => {
  it('refuses a missing or wrong operator token with 401 UNAUTHORIZED', async () => {
    const missing = await call('/ops/v1/organizations', { method: 'POST', body: '{}' });
    expect(missing.status).toBe(401);
    const wrong = await call('/ops/v1/organizations', { method: 'POST', headers: { authorization: 'Bearer test-ops-tokeN' }, body: '{}' });
    expect(wrong.status).toBe(401);
    expect((await json(wrong)).error.code).toBe('UNAUTHORIZED');
  });

  it('does not exist when OPS_TOKEN is unset', async () => {
    const response = await buildApiApp().fetch(
      new Request('http://sluice.test/ops/v1/organizations', { method: 'POST', headers: { authorization: 'Bearer anything' }, body: '{}' }),
      { ...env, OPS_TOKEN: undefined },
      createExecutionContext(),
    );
    expect(response.status).toBe(404);
    expect((await json(response)).error.code).toBe('NOT_FOUND');
  });

  it('creates an organization with a plan, or with none when omitted', async () => {
    const withPlan = await ops('POST', '/organizations', { name: 'Acme', plan: 'team' });
    expect(withPlan.status).toBe(201);
    expect(withPlan.body.data).toMatchObject({ id: expect.stringMatching(/^org_/), name: 'Acme', plan: 'team' });
    const withoutPlan = await ops('POST', '/organizations', { name: 'Planless' });
    expect(withoutPlan.body.data.plan).toBeNull();
    expect((await ops('GET', `/organizations/${withoutPlan.body.data.id}`)).body.data).toEqual(withoutPlan.body.data);
  });

  it('says the whole rule of an id it refuses', async () => {
    const refused = await ops('GET', '/organizations/org_nope');
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual([{ field: 'id', location: 'path', message: 'Expected org_ followed by 24 lowercase hex characters.' }]);
  });

  it('refuses a workspace for an organization that does not exist with 404', async () => {
    const response = await ops('POST', '/workspaces', { organizationId: `org_${'0'.repeat(24)}`, name: 'Orphan' });
    expect(response.status).toBe(404);
  });

  it('answers the plaintext key once and stores only its hash and a ciphertext', async () => {
    const account = await provision();
    expect(account.key).toMatch(KEY_PATTERN);
    const row = await env.DB.prepare('SELECT * FROM api_keys WHERE id = ?').bind(account.keyId).first<Record<string, string>>();
    expect(row!.key_hash).toBe(await hashKey(account.key));
    expect(Object.values(row!).join(' ')).not.toContain(account.key.slice('sluice_live_'.length));
  });

  it('generates a different key every time', async () => {
    const keys = await Promise.all([provision(), provision(), provision()]);
    expect(new Set(keys.map((account) => account.key)).size).toBe(3);
  });

  it('re-reveals a key, and refuses to reveal it once revoked', async () => {
    const account = await provision();
    const revealed = await ops('POST', `/keys/${account.keyId}/reveal`);
    expect(revealed.body.data.key).toBe(account.key);
    const revoked = await ops('POST', `/keys/${account.keyId}/revoke`);
    expect(revoked.body.data.revokedAt).toEqual(expect.any(String));
    const again = await ops('POST', `/keys/${account.keyId}/revoke`);
    expect(again.body.data.revokedAt).toBe(revoked.body.data.revokedAt);
    expect((await ops('POST', `/keys/${account.keyId}/reveal`)).status).toBe(409);
  });

  it('creates keys of any scope, and refuses an unknown scope', async () => {
    const account = await provision();
    const scoped = await ops('POST', '/keys', { workspaceId: account.workspaceId, scope: 'agent' });
    expect(scoped.body.data.scope).toBe('agent');
    const bad = await ops('POST', '/keys', { workspaceId: account.workspaceId, scope: 'root' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].field).toBe('scope');
  });
});
