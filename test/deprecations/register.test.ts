import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { clock } from '../../src/core/clock';
import { DEPRECATIONS } from '../../src/core/deprecations';
import { INTENTS_KEPT_PER_WORKSPACE } from '../../src/services/onboarding';
import { call, json, provision } from '../support/api';

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

/** Moves the injectable clock to a moment, for the rest of the test. */
function at(moment: number) {
  clock.now = () => moment;
}

const DAY = 86_400_000;
let addresses = 0;

function register(body: unknown, headers: Record<string, string> = {}) {
  addresses += 1;
  return call('/v1/register', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'cf-connecting-ip': `203.0.113.${addresses}`, ...headers },
    body: JSON.stringify(body),
    // As Cloudflare's edge forwards it: only then is the address believed.
    cf: { colo: 'AMS' },
  });
}

const INTENT = { agentName: 'Claude Code', email: 'ada@example.com', organization: 'Analytical Engines', useCase: 'Weekly competitor backlinks.', sources: ['seo', 'web'] };

describe('POST /v1/register (deprecated, removed on 2026-12-31)', () => {
  it('records the intent the day before its sunset, with Deprecation, Sunset and a Link to its successor', async () => {
    at(DEPRECATIONS.register.sunsetAt - DAY);
    const response = await register(INTENT);
    expect(response.status).toBe(201);
    expect(response.headers.get('Deprecation')).toBe('@1782864000');
    expect(response.headers.get('Sunset')).toBe('Thu, 31 Dec 2026 00:00:00 GMT');
    expect(response.headers.get('Link')).toContain(`<${env.MCP_URL}>; rel="successor-version"; title="sluice_onboarding"`);
    const { data } = await json(response);
    expect(data).toMatchObject({ workspaceId: null, next: { mcpUrl: env.MCP_URL, sources: [{ slug: 'seo' }, { slug: 'web' }] } });
    const row = await env.DB.prepare('SELECT * FROM onboarding_intents WHERE id = ?').bind(data.id).first();
    expect(row).toMatchObject({ surface: 'register', agent_name: 'Claude Code', email: 'ada@example.com', organization_name: 'Analytical Engines', use_case: 'Weekly competitor backlinks.', sources: '["seo","web"]', workspace_id: null });
  });

  it('records the workspace of a key sent with it, and refuses a wrong key with 401', async () => {
    at(DEPRECATIONS.register.sunsetAt - 1);
    const account = await provision();
    const response = await register(INTENT, { authorization: `Bearer ${account.key}` });
    expect(response.status).toBe(201);
    const { data } = await json(response);
    expect(data.workspaceId).toBe(account.workspaceId);
    expect(await env.DB.prepare('SELECT organization_id AS o FROM onboarding_intents WHERE id = ?').bind(data.id).first('o')).toBe(account.organizationId);

    const wrong = await register(INTENT, { authorization: `Bearer sluice_live_${'0'.repeat(32)}` });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('Sunset')).toBe('Thu, 31 Dec 2026 00:00:00 GMT');
  });

  it(`counts a keyed registration in its workspace's window (the 61st of a pay-as-you-go minute is 429 and records nothing), and keeps the workspace's newest ${INTENTS_KEPT_PER_WORKSPACE}`, async () => {
    at(DEPRECATIONS.register.sunsetAt - DAY + 20_000);
    const account = await provision({ plan: 'payg' });
    const keyed = () => register(INTENT, { authorization: `Bearer ${account.key}` });
    const recorded: string[] = [];
    for (let used = 0; used < 60; used++) {
      const response = await keyed();
      expect(response.status).toBe(201);
      recorded.push((await json(response)).data.id);
    }
    const kept = async () =>
      (await env.DB.prepare('SELECT id FROM onboarding_intents WHERE workspace_id = ? ORDER BY rowid').bind(account.workspaceId).all<{ id: string }>()).results.map((row) => row.id);
    expect(await kept()).toEqual(recorded.slice(-INTENTS_KEPT_PER_WORKSPACE));
    const refused = await keyed();
    expect(refused.status).toBe(429);
    expect((await json(refused)).error.code).toBe('RATE_LIMITED');
    expect(await kept()).toEqual(recorded.slice(-INTENTS_KEPT_PER_WORKSPACE));
  });

  it('lets one address register anonymously 20 times an hour, then 429 with Retry-After; other methods do not count', async () => {
    at(DEPRECATIONS.register.sunsetAt - DAY);
    const from = { 'content-type': 'application/json', 'cf-connecting-ip': '198.51.100.77' };
    const edge = { cf: { colo: 'AMS' } };
    for (let tried = 0; tried < 5; tried++) expect((await call('/v1/register', { headers: from, ...edge })).status).toBe(404);
    const statuses: number[] = [];
    for (let sent = 0; sent < 21; sent++) statuses.push((await call('/v1/register', { method: 'POST', headers: from, body: JSON.stringify(INTENT), ...edge })).status);
    expect(statuses).toEqual([...Array<number>(20).fill(201), 429]);
    const refused = await call('/v1/register', { method: 'POST', headers: from, body: JSON.stringify(INTENT), ...edge });
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await json(refused)).error.code).toBe('RATE_LIMITED');
    // Another address is not held back.
    expect((await register(INTENT)).status).toBe(201);
  });

  it('believes no cf-connecting-ip that did not come through the edge: rotating it does not escape the limit', async () => {
    at(DEPRECATIONS.register.sunsetAt - DAY);
    const statuses: number[] = [];
    for (let sent = 0; sent < 21; sent++) {
      const headers = { 'content-type': 'application/json', 'cf-connecting-ip': `192.0.2.${sent}` };
      statuses.push((await call('/v1/register', { method: 'POST', headers, body: JSON.stringify(INTENT) })).status);
    }
    expect(statuses).toEqual([...Array<number>(20).fill(201), 429]);
  });

  it('refuses a bad intent with 400 naming the fields, an unknown source included', async () => {
    at(DEPRECATIONS.register.sunsetAt - DAY);
    const response = await register({ agentName: '', useCase: 'x', sources: ['myspace'], email: 'not-an-email' });
    expect(response.status).toBe(400);
    const { error } = await json(response);
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.details.map((detail: { field: string }) => detail.field).sort()).toEqual(['agentName', 'email', 'sources[0]']);
  });

  it('answers 410 ENDPOINT_MIGRATED naming sluice_onboarding from the sunset on, with or without a key', async () => {
    at(DEPRECATIONS.register.sunsetAt);
    const before = await env.DB.prepare('SELECT COUNT(*) AS n FROM onboarding_intents').first('n');
    for (const headers of [{}, { authorization: `Bearer ${(await provision()).key}` }] as Record<string, string>[]) {
      const response = await register(INTENT, headers);
      expect(response.status).toBe(410);
      expect(response.headers.get('Link')).toContain(`<${env.MCP_URL}>; rel="successor-version"`);
      const { error } = await json(response);
      expect(error.code).toBe('ENDPOINT_MIGRATED');
      expect(error.message).toContain('sluice_onboarding');
    }
    expect(await env.DB.prepare('SELECT COUNT(*) AS n FROM onboarding_intents').first('n')).toBe(before);
  });
});
