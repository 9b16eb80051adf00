import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { join, signUp } from '../support/dashboard';

const HUNTER_KEY = (env as unknown as Record<string, string>).HUNTER_API_KEY!;

describe('the Vendor accounts page', () => {
  it('adds an account checked with the vendor, shows only its hint, checks and removes it', async () => {
    const owner = await signUp();
    const base = `/api/workspaces/${owner.workspaceId}/vendor-connections`;
    const refused = await owner.json('POST', base, { vendor: 'hunter', name: '', login: '', secret: 'not-a-hunter-key' });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.map((detail: { field: string }) => detail.field)).toEqual(['secret']);

    const added = await owner.json('POST', base, { vendor: 'hunter', name: 'Our Hunter', login: '', secret: HUNTER_KEY });
    expect(added.status).toBe(201);
    expect(added.body.data).toMatchObject({ vendor: 'hunter', name: 'Our Hunter', status: 'ok', hint: `…${HUNTER_KEY.slice(-4)}` });
    const listed = await owner.json('GET', base);
    expect(listed.body.data.connections).toHaveLength(1);
    expect(JSON.stringify(listed.body)).not.toContain(HUNTER_KEY);

    const html = await (await owner.request('GET', `/w/${owner.workspaceId}/vendor-accounts`)).text();
    expect(html).toContain('Vendor accounts');
    expect(html).toContain(`…${HUNTER_KEY.slice(-4)}`);
    expect(html).not.toContain(HUNTER_KEY);

    expect((await owner.json('POST', `${base}/${added.body.data.id}/check`)).body.data.status).toBe('ok');
    expect((await owner.json('DELETE', `${base}/${added.body.data.id}`)).status).toBe(200);
    expect((await owner.json('GET', base)).body.data.connections).toEqual([]);
  });

  it("asks for DataForSEO's login beside its password", async () => {
    const owner = await signUp();
    const missing = await owner.json('POST', `/api/workspaces/${owner.workspaceId}/vendor-connections`, { vendor: 'dataforseo', secret: 'x' });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details.map((detail: { field: string }) => detail.field)).toEqual(['login']);
  });

  it("lets only owners and admins add; another organization's workspace is 404", async () => {
    const owner = await signUp();
    const member = await signUp();
    await join(member, owner.organizationId, 'member');
    const base = `/api/workspaces/${owner.workspaceId}/vendor-connections`;
    expect((await member.json('POST', base, { vendor: 'hunter', secret: HUNTER_KEY })).status).toBe(403);
    const stranger = await signUp();
    expect((await stranger.json('GET', base)).status).toBe(404);
  });
});
