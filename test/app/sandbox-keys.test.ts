import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { bearer, call, eventually, json } from '../support/api';
import { dashboard, join, signUp } from '../support/dashboard';

const KEY = /^sluice_live_[0-9a-f]{32}$/;
const DAY_MS = 24 * 60 * 60 * 1000;
const SANDBOX_CALL = '/runtime/data/linkedin/get-company-by-domain?domain=acme.example';

describe('sandbox keys in the dashboard', () => {
  it('mints a key shown once, valid 7 days, listed apart from live keys, answered with examples on /runtime and refused on /v1', async () => {
    const person = await signUp();
    const created = await person.json('POST', `/api/workspaces/${person.workspaceId}/sandbox-keys`, { name: 'builder' });
    expect(created.status).toBe(201);
    const key = created.body.data;
    expect(key.key).toMatch(KEY);
    expect(key).toMatchObject({ name: 'builder', workspaceId: person.workspaceId, createdBy: person.account.user.id, revokedAt: null, hint: `sluice_live_…${key.key.slice(-4)}` });
    expect(Math.abs(Date.parse(key.expiresAt) - Date.parse(key.createdAt) - 7 * DAY_MS)).toBeLessThan(1000);

    const sandbox = await person.json('GET', `/api/workspaces/${person.workspaceId}/sandbox-keys`);
    expect(sandbox.body.data.keys.map((listed: { id: string }) => listed.id)).toEqual([key.id]);
    expect(JSON.stringify(sandbox.body)).not.toContain(key.key);
    const live = await person.json('GET', `/api/workspaces/${person.workspaceId}/keys`);
    expect(live.body.data.keys).toEqual([]);

    const answered = await call(SANDBOX_CALL, bearer(key.key));
    expect(answered.status).toBe(200);
    expect((await json(answered)).meta).toMatchObject({ sandbox: true, costCents: 0 });
    expect((await call('/v1/data/linkedin/get-company-by-domain?domain=acme.example', bearer(key.key))).status).toBe(403);

    const page = await person.request('GET', `/w/${person.workspaceId}/keys`);
    const html = await page.text();
    expect(html).toContain('Sandbox keys');
    expect(html).toContain(key.hint);
    expect(html).not.toContain(key.key);

    // The usage API and page show the sandbox call apart from the live figures.
    const usage = await eventually(
      () => person.json('GET', `/api/workspaces/${person.workspaceId}/usage`),
      (answer) => answer.body.data?.sandbox.calls === 1,
    );
    expect(usage.body.data.totals.calls).toBe(0);
    const usagePage = await (await person.request('GET', `/w/${person.workspaceId}/usage`)).text();
    expect(usagePage).toMatch(/Sandbox calls \(30 days\)<\/div><div class="value">1<\/div>/);
    expect(usagePage).toMatch(/Calls \(30 days\)<\/div><div class="value">0<\/div>/);
  });

  it('revokes: the key is refused from the very next request', async () => {
    const person = await signUp();
    const { body } = await person.json('POST', `/api/workspaces/${person.workspaceId}/sandbox-keys`, { name: 'builder' });
    expect((await call(SANDBOX_CALL, bearer(body.data.key))).status).toBe(200);
    const revoked = await person.json('POST', `/api/workspaces/${person.workspaceId}/sandbox-keys/${body.data.id}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.data.revokedAt).not.toBeNull();
    expect((await call(SANDBOX_CALL, bearer(body.data.key))).status).toBe(401);
  });

  it("lets members mint; a member cannot revoke another's sandbox key; another workspace's key is 404", async () => {
    const owner = await signUp();
    const member = await signUp();
    await join(member, owner.organizationId, 'member');
    const minted = await member.json('POST', `/api/workspaces/${owner.workspaceId}/sandbox-keys`, { name: 'member builder' });
    expect(minted.status).toBe(201);
    const owners = await owner.json('POST', `/api/workspaces/${owner.workspaceId}/sandbox-keys`, { name: 'owner builder' });
    expect((await member.json('POST', `/api/workspaces/${owner.workspaceId}/sandbox-keys/${owners.body.data.id}/revoke`)).status).toBe(403);

    const stranger = await signUp();
    expect((await stranger.json('GET', `/api/workspaces/${owner.workspaceId}/sandbox-keys`)).status).toBe(404);
    expect((await stranger.json('POST', `/api/workspaces/${stranger.workspaceId}/sandbox-keys/${owners.body.data.id}/revoke`)).status).toBe(404);
  });

  it('refuses a mint from another origin (CSRF) and without a session', async () => {
    const person = await signUp();
    const path = `/api/workspaces/${person.workspaceId}/sandbox-keys`;
    const crossSite = await dashboard(path, {
      method: 'POST',
      headers: { cookie: `sluice_session=${person.cookie}`, origin: 'https://evil.example', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x' }),
    });
    expect(crossSite.status).toBe(403);
    const anonymous = await dashboard(path, { method: 'POST', headers: { origin: new URL(env.APP_URL).origin, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'x' }) });
    expect(anonymous.status).toBe(401);
    expect((await person.json('GET', path)).body.data.keys).toEqual([]);
  });
});
