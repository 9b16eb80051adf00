import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { RETIRED_PATHS } from '../../src/api/routes/retired-paths';
import { clock } from '../../src/core/clock';
import { DATABASE_LIMITS } from '../../src/core/database-limits';
import { DEPRECATIONS } from '../../src/core/deprecations';
import { bearer, call, companyByDomain, funded, json, ops, provision } from '../support/api';

const realNow = clock.now;
const limits = { ...DATABASE_LIMITS };
afterEach(() => {
  clock.now = realNow;
  Object.assign(DATABASE_LIMITS, limits);
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
    for (const headers of [{}, { authorization: `Bearer ${(await provision()).key}` }]) {
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

describe('retired curated paths /v1/<slug>/<operation> (removed on 2026-10-01)', () => {
  it('takes no name of a real /v1 route', () => {
    const taken = new Set(RETIRED_PATHS.map((retired) => retired.path.split('/')[2]));
    for (const reserved of ['data', 'credits', 'usage', 'plans', 'platforms', 'db', 'webhook-endpoints', 'register', 'connections']) expect(taken.has(reserved)).toBe(false);
    expect(RETIRED_PATHS.length).toBeGreaterThan(60);
  });

  it('answers every retired path with 410 ENDPOINT_MIGRATED and a Link to its successor from the sunset on', async () => {
    at(DEPRECATIONS.curatedPaths.sunsetAt);
    const { key } = await provision();
    for (const { path, successor, operation } of RETIRED_PATHS) {
      const response = await call(path, { method: operation.method, ...bearer(key) });
      expect(response.status, path).toBe(410);
      expect(response.headers.get('Link')).toBe(`<${successor}>; rel="successor-version"`);
      const { error } = await json(response);
      expect(error).toMatchObject({ code: 'ENDPOINT_MIGRATED' });
      expect(error.message).toContain(successor);
    }
  });

  it('still serves the successor the day before the sunset, with Deprecation and Sunset, and charges like it', async () => {
    at(DEPRECATIONS.curatedPaths.sunsetAt - DAY);
    const account = await funded(100, 'payg');
    const response = await call('/v1/linkedin/get-company-by-domain?domain=stripe.com', bearer(account.key));
    expect(response.status).toBe(200);
    expect(response.headers.get('Deprecation')).toBe('@1782864000');
    expect(response.headers.get('Sunset')).toBe('Thu, 01 Oct 2026 00:00:00 GMT');
    expect(response.headers.get('Link')).toBe('</v1/data/linkedin/get-company-by-domain>; rel="successor-version"');
    const body = await json(response);
    const twin = await json(await companyByDomain(account.key, 'stripe.com'));
    expect(body.data).toEqual(twin.data);
    expect(body.meta.costCents).toBe(twin.meta.costCents);
  });

  it('leaves the real /v1 routes and unknown paths as they were', async () => {
    at(DEPRECATIONS.curatedPaths.sunsetAt + DAY);
    const { key } = await provision();
    expect((await call('/v1/credits', bearer(key))).status).toBe(200);
    expect((await call('/v1/platforms/linkedin')).status).toBe(200);
    const unknown = await call('/v1/linkedin/no-such-operation', bearer(key));
    expect(unknown.status).toBe(404);
  });
});
