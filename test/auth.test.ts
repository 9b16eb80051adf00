import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import type { OrgWallet } from '../durable-objects/org-wallet';
import { clock } from '../src/core/clock';
import { gateOf } from '../src/services/gate';
import { walletOf } from '../src/services/wallet';
import { bearer, call, eventually, json, ops, provision, type Provisioned } from './support/api';

const realNow = clock.now;

// /v1/credits is an authenticated route; before it exists, any /v1 path behind the key check proves the same rules.
const AUTHENTICATED = '/v1/credits';

async function expectUnauthorized(response: Response, messagePattern: RegExp) {
  expect(response.status).toBe(401);
  const body = await json(response);
  expect(body.success).toBe(false);
  expect(body.error.code).toBe('UNAUTHORIZED');
  expect(body.error.message).toMatch(messagePattern);
  expect(body.error.how_to_get_access).toEqual({
    mcp_install_url: env.MCP_URL,
    signup_url: `${env.APP_URL}/signup`,
    docs_url: `${env.BASE_URL}/docs`,
    openapi_url: `${env.BASE_URL}/openapi.json`,
  });
}

describe('REST authentication', () => {
  let account: Provisioned;
  beforeAll(async () => {
    account = await provision();
  });

  it('refuses a request with no Authorization header with 401 UNAUTHORIZED and how_to_get_access', async () => {
    await expectUnauthorized(await call(AUTHENTICATED), /Missing Authorization header/);
  });

  it('refuses an x-api-key header with 401 UNAUTHORIZED, even carrying a valid key', async () => {
    await expectUnauthorized(await call(AUTHENTICATED, { headers: { 'x-api-key': account.key } }), /x-api-key/);
    await expectUnauthorized(
      await call(AUTHENTICATED, { headers: { 'x-api-key': account.key, authorization: `Bearer ${account.key}` } }),
      /x-api-key/,
    );
  });

  it.each(['/v1/platforms', '/v1/platforms/linkedin', '/v1/plans', '/v1/no-such-route'])('refuses an x-api-key header on %s too, which answers without a credential', async (path) => {
    await expectUnauthorized(await call(path, { headers: { 'x-api-key': account.key } }), /x-api-key/);
  });

  it.each([
    ['a Basic scheme', (key: string) => `Basic ${btoa(`${key}:`)}`],
    ['the bare key', (key: string) => key],
    ['two tokens', (key: string) => `Bearer ${key} extra`],
  ])('refuses %s with 401 UNAUTHORIZED', async (_, header) => {
    await expectUnauthorized(await call(AUTHENTICATED, { headers: { authorization: header(account.key) } }), /Malformed Authorization header/);
  });

  it('refuses an empty key with 401 UNAUTHORIZED', async () => {
    await expectUnauthorized(await call(AUTHENTICATED, { headers: { authorization: 'Bearer ' } }), /Empty API key/);
  });

  it('refuses a key of the wrong shape with 401 UNAUTHORIZED', async () => {
    await expectUnauthorized(await call(AUTHENTICATED, bearer(`${account.key}00`)), /Malformed API key/);
    await expectUnauthorized(await call(AUTHENTICATED, bearer(account.key.toUpperCase())), /Malformed API key/);
  });

  it('refuses an unknown key with 401 UNAUTHORIZED', async () => {
    await expectUnauthorized(await call(AUTHENTICATED, bearer(`sluice_live_${'0'.repeat(32)}`)), /Unknown API key/);
  });

  it('accepts a workspace key (the scheme name is case-insensitive)', async () => {
    for (const scheme of ['Bearer', 'bearer']) {
      const response = await call(AUTHENTICATED, { headers: { authorization: `${scheme} ${account.key}` } });
      expect(response.status).not.toBe(401);
      expect(response.status).not.toBe(403);
    }
  });

  it('refuses a revoked key on the very next request', async () => {
    const fresh = await provision();
    expect((await call(AUTHENTICATED, bearer(fresh.key))).status).not.toBe(401);
    expect((await ops('POST', `/keys/${fresh.keyId}/revoke`)).status).toBe(200);
    await expectUnauthorized(await call(AUTHENTICATED, bearer(fresh.key)), /revoked/);
  });

  it('stamps last_used_at on an authenticated request', async () => {
    const fresh = await provision();
    const before = await env.DB.prepare('SELECT last_used_at FROM api_keys WHERE id = ?').bind(fresh.keyId).first<{ last_used_at: string | null }>();
    expect(before?.last_used_at).toBeNull();
    const started = Date.now();
    await call(AUTHENTICATED, bearer(fresh.key));
    // The use travels on the objects' own schedules (the gate reports it to the wallet within
    // KEY_USE_REPORT_MS, the wallet writes it to D1 USAGE_FLUSH_MS later); here both steps run now, to completion.
    await gateOf(env, fresh.workspaceId).flush();
    await runInDurableObject(walletOf(env, fresh.organizationId), (wallet) => (wallet as unknown as OrgWallet).alarm());
    const stamped = (await env.DB.prepare('SELECT last_used_at FROM api_keys WHERE id = ?').bind(fresh.keyId).first<{ last_used_at: string | null }>())?.last_used_at;
    expect(stamped).toBeTruthy();
    expect(Date.parse(stamped!)).toBeGreaterThanOrEqual(started - 1000);
  });

  it.each([
    ['refused for its input (400 from the pipeline)', (key: string) => call('/v1/data/linkedin/get-company-by-domain?domain=', bearer(key))],
    ['whose body is not JSON (400 before the pipeline)', (key: string) => call('/scrape', { method: 'POST', headers: { ...bearer(key).headers, 'content-type': 'application/json' }, body: '{"url":' })],
  ])('stamps last_used_at on a request %s: it was authenticated', async (_, send) => {
    const fresh = await provision();
    const started = Date.now();
    expect((await send(fresh.key)).status).toBe(400);
    await gateOf(env, fresh.workspaceId).flush();
    await runInDurableObject(walletOf(env, fresh.organizationId), (wallet) => (wallet as unknown as OrgWallet).alarm());
    const stamped = (await env.DB.prepare('SELECT last_used_at FROM api_keys WHERE id = ?').bind(fresh.keyId).first<{ last_used_at: string | null }>())?.last_used_at;
    expect(stamped).toBeTruthy();
    expect(Date.parse(stamped!)).toBeGreaterThanOrEqual(started - 1000);
  });

  it('keeps last_used_at exact to the second: a use three seconds after the first is the one stamped', async () => {
    const fresh = await provision();
    const first = Date.parse('2026-11-24T09:00:00.000Z');
    const stampOf = () => env.DB.prepare('SELECT last_used_at FROM api_keys WHERE id = ?').bind(fresh.keyId).first<{ last_used_at: string | null }>();
    try {
      clock.now = () => first;
      await call(AUTHENTICATED, bearer(fresh.key));
      await eventually(stampOf, (row) => row?.last_used_at === new Date(first).toISOString());
      clock.now = () => first + 3_000;
      await call(AUTHENTICATED, bearer(fresh.key));
      const stamped = await eventually(stampOf, (row) => row?.last_used_at === new Date(first + 3_000).toISOString());
      expect(stamped?.last_used_at).toBe('2026-11-24T09:00:03.000Z');
    } finally {
      clock.now = realNow;
    }
  });

  describe('key scopes', () => {
    it.each([
      ['agent', /\/runtime\//],
      ['data_job', /\/runtime\//],
      ['workspace_dryrun', /\/runtime\//],
      ['workspace_mcp', /MCP endpoint only/],
      ['meta_agent', /refused on every inbound surface/],
    ] as const)('refuses a %s key on /v1 with 403 UNAUTHORIZED saying where it belongs', async (scope, where) => {
      const scoped = await provision({ scope });
      const response = await call(AUTHENTICATED, bearer(scoped.key));
      expect(response.status).toBe(403);
      const body = await json(response);
      expect(body.error.code).toBe('UNAUTHORIZED');
      expect(body.error.message).toMatch(where);
    });

    it('names the MCP URL in the refusal of a workspace_mcp key', async () => {
      const scoped = await provision({ scope: 'workspace_mcp' });
      const body = await json(await call(AUTHENTICATED, bearer(scoped.key)));
      expect(body.error.message).toContain(env.MCP_URL);
    });
  });

  it.each(['/health', '/v1/platforms', '/v1/platforms/linkedin', '/agent-setup/prompt.md', '/openapi.json'])(
    'serves %s without any credential',
    async (path) => {
      expect((await call(path)).status).toBe(200);
    },
  );
});
