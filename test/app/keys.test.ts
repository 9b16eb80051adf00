import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { bearer, call, companyByDomain, eventually, ops } from '../support/api';
import { join, signUp } from '../support/dashboard';
import { walletOf } from '../../src/services/wallet';
import { MAX_ACTIVE_KEYS_PER_WORKSPACE } from '../../src/services/accounts';
import { clock } from '../../src/core/clock';
import { KEYS_MADE_PER_USER } from '../../src/app/api/keys';

const KEY = /^sluice_live_[0-9a-f]{32}$/;

function credits(key: string) {
  return call('/v1/credits', bearer(key));
}

/** Another person joins an organization with a role (invitations come later; the row is what they make). */
describe('API keys in the dashboard', () => {
  it('creates a key whose secret is answered once, lists it without the secret, and the key works on REST', async () => {
    const person = await signUp();
    const created = await person.json('POST', `/api/workspaces/${person.workspaceId}/keys`, { name: 'ci' });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ name: 'ci', scope: 'workspace', workspaceId: person.workspaceId, createdBy: person.account.user.id, revokedAt: null });
    expect(created.body.data.key).toMatch(KEY);
    expect(created.body.data.hint).toBe(`sluice_live_…${created.body.data.key.slice(-4)}`);

    const listed = await person.json('GET', `/api/workspaces/${person.workspaceId}/keys`);
    expect(listed.status).toBe(200);
    expect(listed.body.data.keys.map((key: { id: string }) => key.id)).toEqual([created.body.data.id]);
    expect(JSON.stringify(listed.body)).not.toContain(created.body.data.key);

    const response = await credits(created.body.data.key);
    expect(response.status).toBe(200);
    expect(((await response.json()) as any).data.organizationId).toBe(person.organizationId);
  });

  it('lists only workspace-scope keys: no MCP token and no key of another scope', async () => {
    const person = await signUp();
    await person.json('POST', `/api/workspaces/${person.workspaceId}/mcp-tokens`, { name: 'agent' });
    await ops('POST', '/keys', { workspaceId: person.workspaceId, scope: 'agent', name: 'runtime' });
    const key = await person.json('POST', `/api/workspaces/${person.workspaceId}/keys`, { name: 'rest' });
    const listed = await person.json('GET', `/api/workspaces/${person.workspaceId}/keys`);
    expect(listed.body.data.keys.map((entry: { id: string }) => entry.id)).toEqual([key.body.data.id]);
  });

  it('reveals a key again, and after revocation refuses it on REST at once and reveals it no more (409 CONFLICT)', async () => {
    const person = await signUp();
    const { body } = await person.json('POST', `/api/workspaces/${person.workspaceId}/keys`, { name: 'to revoke' });
    const key = body.data;
    const revealed = await person.json('POST', `/api/workspaces/${person.workspaceId}/keys/${key.id}/reveal`);
    expect(revealed.body.data.key).toBe(key.key);
    expect((await credits(key.key)).status).toBe(200);

    const revoked = await person.json('POST', `/api/workspaces/${person.workspaceId}/keys/${key.id}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.data.revokedAt).toEqual(expect.any(String));
    const refused = await credits(key.key);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as any).error.code).toBe('UNAUTHORIZED');

    const again = await person.json('POST', `/api/workspaces/${person.workspaceId}/keys/${key.id}/reveal`);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('CONFLICT');
  });

  it(`holds at most ${MAX_ACTIVE_KEYS_PER_WORKSPACE} keys not revoked: two made at once for the last place get one, and revoking one makes room`, async () => {
    const person = await signUp();
    // All but one place taken, and revoked keys beside them, which take none.
    const insert = (revokedAt: string | null) =>
      env.DB.prepare(
        "INSERT INTO api_keys (id, workspace_id, key_hash, key_ciphertext, key_hint, scope, name, created_at, revoked_at) VALUES (?1, ?2, 'hash_' || ?1, 'x', 'hint', 'workspace', 'earlier', ?3, ?4)",
      ).bind(`key_filled_${crypto.randomUUID()}`, person.workspaceId, new Date().toISOString(), revokedAt);
    const active = (await person.json('GET', `/api/workspaces/${person.workspaceId}/keys`)).body.data.keys.filter((key: { revokedAt: string | null }) => key.revokedAt === null).length;
    await env.DB.batch([...Array.from({ length: MAX_ACTIVE_KEYS_PER_WORKSPACE - 1 - active }, () => insert(null)), ...Array.from({ length: 5 }, () => insert(new Date().toISOString()))]);
    const create = () => person.json('POST', `/api/workspaces/${person.workspaceId}/keys`, { name: 'one more' });
    const both = await Promise.all([create(), create()]);
    expect(both.map((answer) => answer.status).sort()).toEqual([201, 409]);
    expect(both.find((answer) => answer.status === 409)!.body.error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('revoke one first') });
    const made = both.find((answer) => answer.status === 201)!.body.data;
    expect((await person.json('POST', `/api/workspaces/${person.workspaceId}/keys/${made.id}/revoke`)).status).toBe(200);
    expect((await create()).status).toBe(201);
  });

  it("reads another organization's workspace, key or token as 404 NOT_FOUND, never 403", async () => {
    const owner = await signUp();
    const stranger = await signUp();
    const key = (await owner.json('POST', `/api/workspaces/${owner.workspaceId}/keys`, { name: 'private' })).body.data;
    const token = (await owner.json('POST', `/api/workspaces/${owner.workspaceId}/mcp-tokens`, { name: 'private' })).body.data;
    const attempts: [string, string][] = [
      ['GET', `/api/workspaces/${owner.workspaceId}/keys`],
      ['POST', `/api/workspaces/${owner.workspaceId}/keys`],
      ['POST', `/api/workspaces/${owner.workspaceId}/keys/${key.id}/reveal`],
      ['POST', `/api/workspaces/${owner.workspaceId}/keys/${key.id}/revoke`],
      ['GET', `/api/workspaces/${owner.workspaceId}/mcp-tokens`],
      ['POST', `/api/workspaces/${owner.workspaceId}/mcp-tokens/${token.id}/revoke`],
      ['GET', `/api/workspaces/${owner.workspaceId}/usage`],
      ['GET', `/api/organizations/${owner.organizationId}/credits`],
      ['POST', `/api/organizations/${owner.organizationId}/workspaces`],
      // Someone else's key through one's own workspace.
      ['POST', `/api/workspaces/${stranger.workspaceId}/keys/${key.id}/reveal`],
      ['POST', `/api/workspaces/${stranger.workspaceId}/keys/${key.id}/revoke`],
      ['POST', `/api/workspaces/${stranger.workspaceId}/mcp-tokens/${token.id}/revoke`],
    ];
    for (const [method, path] of attempts) {
      const response = await stranger.json(method, path, method === 'POST' && !/reveal|revoke/.test(path) ? { name: 'x' } : undefined);
      expect({ method, path, status: response.status, code: response.body.error?.code }).toEqual({ method, path, status: 404, code: 'NOT_FOUND' });
    }
    // Nothing happened to the owner's key.
    expect((await credits(key.key)).status).toBe(200);
  });

  it('does not let a key route reach an MCP token, or a token route reach a key', async () => {
    const person = await signUp();
    const key = (await person.json('POST', `/api/workspaces/${person.workspaceId}/keys`, { name: 'k' })).body.data;
    const token = (await person.json('POST', `/api/workspaces/${person.workspaceId}/mcp-tokens`, { name: 't' })).body.data;
    expect((await person.json('POST', `/api/workspaces/${person.workspaceId}/keys/${token.id}/reveal`)).status).toBe(404);
    expect((await person.json('POST', `/api/workspaces/${person.workspaceId}/mcp-tokens/${key.id}/revoke`)).status).toBe(404);
  });

  it("lets a member use keys but not reveal or revoke another person's; owners and admins manage all", async () => {
    const owner = await signUp();
    const member = await signUp();
    const admin = await signUp();
    await join(member, owner.organizationId, 'member');
    await join(admin, owner.organizationId, 'admin');
    const ownersKey = (await owner.json('POST', `/api/workspaces/${owner.workspaceId}/keys`, { name: 'owner' })).body.data;
    const membersKey = await member.json('POST', `/api/workspaces/${owner.workspaceId}/keys`, { name: 'member' });
    expect(membersKey.status).toBe(201);

    const reveal = await member.json('POST', `/api/workspaces/${owner.workspaceId}/keys/${ownersKey.id}/reveal`);
    expect(reveal.status).toBe(403);
    expect(reveal.body.error).toMatchObject({ code: 'UNAUTHORIZED', message: expect.stringContaining('member') });
    expect((await member.json('POST', `/api/workspaces/${owner.workspaceId}/keys/${ownersKey.id}/revoke`)).status).toBe(403);
    expect((await member.json('POST', `/api/workspaces/${owner.workspaceId}/keys/${membersKey.body.data.id}/reveal`)).status).toBe(200);

    expect((await admin.json('POST', `/api/workspaces/${owner.workspaceId}/keys/${membersKey.body.data.id}/revoke`)).status).toBe(200);
    expect((await credits(membersKey.body.data.key)).status).toBe(401);
    expect((await credits(ownersKey.key)).status).toBe(200);
  });

  it('refuses a bad name with 400 VALIDATION_ERROR naming the field, and a malformed id naming the path parameter', async () => {
    const person = await signUp();
    const empty = await person.json('POST', `/api/workspaces/${person.workspaceId}/keys`, { name: '   ' });
    expect(empty.status).toBe(400);
    expect(empty.body.error.details).toEqual([{ field: 'name', location: 'body', message: expect.any(String) }]);
    const extra = await person.json('POST', `/api/workspaces/${person.workspaceId}/keys`, { name: 'ok', scope: 'agent' });
    expect(extra.body.error.details).toEqual([{ field: 'scope', location: 'body', message: 'Unknown field.' }]);
    const badId = await person.json('POST', `/api/workspaces/${person.workspaceId}/keys/not-a-key/reveal`);
    expect(badId.status).toBe(400);
    expect(badId.body.error.details).toEqual([{ field: 'keyId', location: 'path', message: expect.any(String) }]);
  });
});

describe('MCP tokens in the dashboard', () => {
  it('creates a token shown once, which REST refuses (403) and which is refused outright (401) once revoked', async () => {
    const person = await signUp();
    const created = await person.json('POST', `/api/workspaces/${person.workspaceId}/mcp-tokens`, { name: 'Claude Code' });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ scope: 'workspace_mcp', name: 'Claude Code' });
    const token = created.body.data;
    expect(token.key).toMatch(KEY);
    const listed = await person.json('GET', `/api/workspaces/${person.workspaceId}/mcp-tokens`);
    expect(listed.body.data.tokens).toEqual([expect.objectContaining({ id: token.id, revokedAt: null })]);
    expect(JSON.stringify(listed.body)).not.toContain(token.key);
    expect((await credits(token.key)).status).toBe(403);

    expect((await person.json('POST', `/api/workspaces/${person.workspaceId}/mcp-tokens/${token.id}/revoke`)).status).toBe(200);
    expect((await credits(token.key)).status).toBe(401);
  });
});

describe('workspaces, usage and credits in the dashboard', () => {
  it('lets owners and admins create workspaces, and refuses members with 403', async () => {
    const owner = await signUp();
    const member = await signUp();
    await join(member, owner.organizationId, 'member');
    await ops('PUT', `/organizations/${owner.organizationId}/plan`, { plan: 'team' });
    const created = await owner.json('POST', `/api/organizations/${owner.organizationId}/workspaces`, { name: 'Staging' });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ organizationId: owner.organizationId, name: 'Staging' });
    const refused = await member.json('POST', `/api/organizations/${owner.organizationId}/workspaces`, { name: 'Mine' });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('UNAUTHORIZED');
    const me = await member.json('GET', '/api/me');
    expect(me.body.data.organizations).toContainEqual(expect.objectContaining({ id: owner.organizationId, role: 'member', workspaces: expect.arrayContaining([expect.objectContaining({ name: 'Staging' })]) }));
  });

  it("shows the workspace's usage as /v1/usage does, and the organization's credits as /v1/credits does", async () => {
    const person = await signUp();
    const key = (await person.json('POST', `/api/workspaces/${person.workspaceId}/keys`, { name: 'metered' })).body.data.key;
    await ops('PUT', `/organizations/${person.organizationId}/plan`, { plan: 'payg' });
    await ops('POST', `/organizations/${person.organizationId}/wallet/credit`, { purchasedCents: 50 });
    expect((await companyByDomain(key, 'example.com')).status).toBe(200);

    const usage = await eventually(
      () => person.json('GET', `/api/workspaces/${person.workspaceId}/usage`),
      (answer) => answer.body.data?.totals.calls === 1,
    );
    const rest = (await (await call('/v1/usage', bearer(key))).json()) as any;
    expect(usage.body.data.totals).toEqual({ calls: 1, succeeded: 1, failed: 0, costCents: 1 });
    expect(usage.body.data.rows).toEqual(rest.data.rows);
    expect(usage.body.data.byOperation).toEqual(rest.data.byOperation);

    // The call's spending reaches the wallet within a report interval: then both say the same.
    const restCredits = (await (await credits(key)).json()) as any;
    const dashboardCredits = await eventually(
      () => person.json('GET', `/api/organizations/${person.organizationId}/credits`),
      (answer) => answer.body.data?.purchasedBalanceCents === 49,
    );
    expect(dashboardCredits.body.data).toEqual(restCredits.data);
    expect(dashboardCredits.body.data).toMatchObject({ plan: 'payg', purchasedBalanceCents: 49 });
  });

  it("asks the viewed workspace's gate alone for the usage page, and none for the credits, however many workspaces spend", async () => {
    const person = await signUp();
    await ops('PUT', `/organizations/${person.organizationId}/plan`, { plan: 'team' });
    await ops('POST', `/organizations/${person.organizationId}/wallet/credit`, { purchasedCents: 50 });
    const workspaces = [person.workspaceId];
    for (const name of ['Staging', 'Batch']) workspaces.push((await person.json('POST', `/api/organizations/${person.organizationId}/workspaces`, { name })).body.data.id);
    for (const workspaceId of workspaces) {
      const key = (await person.json('POST', `/api/workspaces/${workspaceId}/keys`, { name: 'metered' })).body.data.key;
      expect((await companyByDomain(key, 'example.com')).status).toBe(200);
    }
    // Each of the three holds a lease of the wallet's money.
    expect((await walletOf(env, person.organizationId).leaseholders()).sort()).toEqual([...workspaces].sort());

    const asked: (string | undefined)[] = [];
    const gates = {
      idFromName: (name: string) => env.WORKSPACE_GATE.idFromName(name),
      get: (id: DurableObjectId) => {
        asked.push(id.name);
        return env.WORKSPACE_GATE.get(id);
      },
    };
    const page = await person.request('GET', `/w/${person.workspaceId}/usage`, undefined, { bindings: { WORKSPACE_GATE: gates } });
    expect(page.status).toBe(200);
    expect(asked).toEqual([person.workspaceId]);
    asked.length = 0;
    const answer = await person.json('GET', `/api/organizations/${person.organizationId}/credits`, undefined, { bindings: { WORKSPACE_GATE: gates } });
    expect(answer.body.data.purchasedBalanceCents).toBeGreaterThanOrEqual(47);
    expect(asked).toEqual([]);
  });

  it('describes its own API at /api/openapi.json', async () => {
    const person = await signUp();
    const own = await person.json('GET', '/api/openapi.json');
    expect(own.body.openapi).toBe('3.0.0');
    expect(Object.keys(own.body.paths)).toEqual(
      expect.arrayContaining([
        '/api/auth/sign-up',
        '/api/auth/sign-in',
        '/api/auth/sign-out',
        '/api/me',
        '/api/organizations/{organizationId}/workspaces',
        '/api/organizations/{organizationId}/credits',
        '/api/workspaces/{workspaceId}/keys',
        '/api/workspaces/{workspaceId}/keys/{keyId}/reveal',
        '/api/workspaces/{workspaceId}/keys/{keyId}/revoke',
        '/api/workspaces/{workspaceId}/mcp-tokens',
        '/api/workspaces/{workspaceId}/mcp-tokens/{tokenId}/revoke',
        '/api/workspaces/{workspaceId}/usage',
      ]),
    );
    expect(own.body.servers).toEqual([{ url: env.APP_URL }]);
  });
});

describe('a key made to expire', () => {
  it('works until its day, then every route refuses it with 401 saying it expired; the keys page says until when', async () => {
    const owner = await signUp();
    await ops('PUT', `/organizations/${owner.organizationId}/plan`, { plan: 'payg' });
    const made = await owner.json('POST', `/api/workspaces/${owner.workspaceId}/keys`, { name: 'contractor', expiresInDays: 7 });
    expect(made.status).toBe(201);
    const { key, expiresAt } = made.body.data as { key: string; expiresAt: string };
    expect(Date.parse(expiresAt) - Date.now()).toBeGreaterThan(7 * 86_400_000 - 60_000);
    expect(Date.parse(expiresAt) - Date.now()).toBeLessThanOrEqual(7 * 86_400_000);
    expect((await credits(key)).status).toBe(200);
    const listed = (await owner.json('GET', `/api/workspaces/${owner.workspaceId}/keys`)).body.data.keys.find((one: { name: string }) => one.name === 'contractor');
    expect(listed.expiresAt).toBe(expiresAt);
    expect(await (await owner.request('GET', `/w/${owner.workspaceId}/keys`)).text()).toContain(`until ${expiresAt.slice(0, 10)}`);

    const realNow = clock.now;
    clock.now = () => Date.parse(expiresAt) + 1;
    try {
      for (const response of [await credits(key), await call('/v1/usage', bearer(key)), await companyByDomain(key, 'example.com')]) {
        expect(response.status).toBe(401);
        expect(((await response.json()) as any).error.message).toBe(`This key expired at ${expiresAt}. Make a new key in the dashboard.`);
      }
      // The page lists it as expired, with no Reveal and no place among the keys with a limit.
      const page = await (await owner.request('GET', `/w/${owner.workspaceId}/keys`)).text();
      expect(page).toContain('<span class="badge off">Expired</span>');
      expect(page).not.toContain('aria-label="Reveal key contractor"');
      expect(page).not.toContain('aria-label="Set limit for contractor"');
    } finally {
      clock.now = realNow;
    }
  });

  it("leaves the workspace's count of keys once expired", async () => {
    const owner = await signUp();
    const base = `/api/workspaces/${owner.workspaceId}/keys`;
    const past = new Date(Date.now() - 60_000).toISOString();
    const live = await env.DB.prepare("SELECT COUNT(*) AS n FROM api_keys WHERE workspace_id = ? AND scope = 'workspace' AND revoked_at IS NULL").bind(owner.workspaceId).first<{ n: number }>();
    // Keys up to the cap, the first of them expired: one place left, which the expired key does not take.
    const statements = Array.from({ length: MAX_ACTIVE_KEYS_PER_WORKSPACE - live!.n }, (_, index) =>
      env.DB.prepare("INSERT INTO api_keys (id, workspace_id, key_hash, key_ciphertext, key_hint, scope, name, created_at, expires_at) VALUES (?, ?, ?, 'x', 'hint', 'workspace', 'filler', ?, ?)").bind(
        `key_fill_${owner.workspaceId}_${index}`,
        owner.workspaceId,
        `hash_fill_${owner.workspaceId}_${index}`,
        new Date().toISOString(),
        index === 0 ? past : null,
      ),
    );
    for (let start = 0; start < statements.length; start += 100) await env.DB.batch(statements.slice(start, start + 100));
    expect((await owner.json('POST', base, { name: "in the expired one's place" })).status).toBe(201);
    expect((await owner.json('POST', base, { name: 'one too many' })).status).toBe(409);
  });

  it(`lets one person make ${KEYS_MADE_PER_USER.limit} keys, MCP tokens and sandbox keys an hour together, each a row kept and a key.created event counted`, async () => {
    const owner = await signUp();
    const other = await signUp();
    await join(other, owner.organizationId, 'member');
    const kinds = ['keys', 'mcp-tokens', 'sandbox-keys'];
    const make = (person: typeof owner, made: number) => person.json('POST', `/api/workspaces/${owner.workspaceId}/${kinds[made % kinds.length]}`, { name: `made ${made}` });
    for (let made = 0; made < KEYS_MADE_PER_USER.limit; made++) expect((await make(owner, made)).status, `the ${made + 1}th`).toBe(201);
    const refused = await make(owner, KEYS_MADE_PER_USER.limit);
    expect([refused.status, refused.body.error.code]).toEqual([429, 'RATE_LIMITED']);
    // Counted per person: someone else in the workspace makes theirs.
    expect((await make(other, 0)).status).toBe(201);
    const realNow = clock.now;
    try {
      clock.now = () => realNow() + KEYS_MADE_PER_USER.windowMs;
      expect((await make(owner, 0)).status).toBe(201);
    } finally {
      clock.now = realNow;
    }
  });

  it(`holds at most ${MAX_ACTIVE_KEYS_PER_WORKSPACE} live sandbox keys in a workspace, as it does API keys`, async () => {
    const owner = await signUp();
    const statements = Array.from({ length: MAX_ACTIVE_KEYS_PER_WORKSPACE }, (_, index) =>
      env.DB.prepare("INSERT INTO api_keys (id, workspace_id, key_hash, key_ciphertext, key_hint, scope, name, created_at, expires_at) VALUES (?, ?, ?, 'x', 'hint', 'workspace_dryrun', 'filler', ?, ?)").bind(
        `key_dry_${owner.workspaceId}_${index}`,
        owner.workspaceId,
        `hash_dry_${owner.workspaceId}_${index}`,
        new Date().toISOString(),
        new Date(Date.now() + 86_400_000).toISOString(),
      ),
    );
    for (let start = 0; start < statements.length; start += 100) await env.DB.batch(statements.slice(start, start + 100));
    const refused = await owner.json('POST', `/api/workspaces/${owner.workspaceId}/sandbox-keys`, { name: 'one too many' });
    expect([refused.status, refused.body.error.code]).toEqual([409, 'CONFLICT']);
  });

  it('lasts a whole number of days from one to a year: anything else is a 400 naming expiresInDays', async () => {
    const owner = await signUp();
    for (const expiresInDays of [0, 366, 1.5, '30']) {
      const refused = await owner.json('POST', `/api/workspaces/${owner.workspaceId}/keys`, { name: 'odd', expiresInDays });
      expect(refused.status).toBe(400);
      expect(refused.body.error.details).toEqual([expect.objectContaining({ field: 'expiresInDays' })]);
    }
  });
});
