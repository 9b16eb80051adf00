import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { OPERATIONS } from '../src/operations';
import { call, json } from './support/api';
import { dashboard } from './support/dashboard';
import { followed } from './support/openapi';

describe('GET /v1/platforms', () => {
  it('lists every operation of the registry with its per-call price', async () => {
    const body = await json(await call('/v1/platforms'));
    expect(body.success).toBe(true);
    const listed = body.data.platforms.flatMap((platform: any) => platform.operations.map((operation: any) => `${platform.slug}/${operation.name}`));
    expect(listed.sort()).toEqual(OPERATIONS.map((operation) => `${operation.platform}/${operation.name}`).sort());
    const linkedin = body.data.platforms.find((platform: any) => platform.slug === 'linkedin');
    expect(linkedin.operations).toContainEqual(
      expect.objectContaining({
        name: 'get-company-by-domain',
        method: 'GET',
        path: '/v1/data/linkedin/get-company-by-domain',
        mcpTool: 'data_linkedin_get_company_by_domain',
        price: { cents: 1, per: 'request' },
      }),
    );
  });

  it('answers one source by slug', async () => {
    const body = await json(await call('/v1/platforms/linkedin'));
    expect(body.data.slug).toBe('linkedin');
    expect(body.data.operations.length).toBeGreaterThan(0);
  });

  it('answers an unknown slug with 404 PROVIDER_NOT_FOUND listing the valid slugs', async () => {
    const response = await call('/v1/platforms/myspace');
    expect(response.status).toBe(404);
    const { error } = await json(response);
    expect(error.code).toBe('PROVIDER_NOT_FOUND');
    expect(error.message).toContain('myspace');
    for (const slug of new Set(OPERATIONS.map((operation) => operation.platform))) expect(error.message).toContain(slug);
  });
});

describe('GET /agent-setup/prompt.md', () => {
  it('is Markdown built from configuration: key, REST URL, MCP URL and an authenticated example call', async () => {
    const response = await call('/agent-setup/prompt.md');
    expect(response.headers.get('content-type')).toMatch(/^text\/markdown/);
    const text = await response.text();
    expect(text).toMatch(/^# /);
    expect(text).toContain(`${env.APP_URL}/signup`);
    expect(text).toContain(`Base URL: ${env.BASE_URL}`);
    expect(text).toContain(env.MCP_URL);
    expect(text).toContain(`curl -s ${env.BASE_URL}/v1/credits -H "Authorization: Bearer $SLUICE_API_KEY"`);
  });

  it('explains how to add the MCP server to a client, with this installation\'s MCP URL', async () => {
    const text = await (await call('/agent-setup/prompt.md')).text();
    expect(text).toContain(`"url": "${env.MCP_URL}"`);
    expect(text).toContain(`claude mcp add --transport http sluice ${env.MCP_URL}`);
    expect(text).toContain(`${env.MCP_URL}/web`);
    expect(text).toContain('sluice_tools_search');
  });

  it('walks an agent through the whole path: sign up, key, /v1/credits, MCP token with ${VAR} expansion, verification', async () => {
    const text = await (await call('/agent-setup/prompt.md')).text();
    const steps = ['Sign up at', 'Create a key', '/v1/credits', 'MCP token', 'sluice_tools_list_enabled'].map((step) => text.indexOf(step));
    expect(steps.every((position) => position >= 0)).toBe(true);
    expect([...steps].sort((a, b) => a - b)).toEqual(steps);
    expect(text).toContain('"Authorization": "Bearer ${SLUICE_MCP_TOKEN}"');
  });
});

describe('GET /openapi.json', () => {
  it('declares OpenAPI 3.0.0 and API version 1.0.0, with the bearer scheme', async () => {
    const document = await json(await call('/openapi.json'));
    expect(document.openapi).toBe('3.0.0');
    expect(document.info.version).toBe('1.0.0');
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(document.servers).toEqual([{ url: env.BASE_URL, description: 'REST API' }]);
  });

  it('documents the error envelope on every operation and leaves the operator API out', async () => {
    const document = await json(await call('/openapi.json'));
    const paths = Object.keys(document.paths);
    expect(paths).toEqual(expect.arrayContaining(['/health', '/v1/platforms', '/v1/platforms/{slug}', '/agent-setup/prompt.md']));
    expect(paths.some((path) => path.startsWith('/ops'))).toBe(false);
    for (const [path, item] of Object.entries<any>(document.paths)) {
      for (const [method, operation] of Object.entries<any>(item)) {
        const errorRefs = Object.entries<any>(operation.responses)
          .filter(([status]) => Number(status) >= 400)
          .map(([, response]) => followed(document, response).content['application/json'].schema.$ref);
        expect(errorRefs.length, `${method} ${path}`).toBeGreaterThan(0);
        for (const ref of errorRefs) expect(ref).toBe('#/components/schemas/ErrorEnvelope');
      }
    }
  });

  it('refuses an unknown query parameter on a route that takes none, naming it', async () => {
    for (const path of ['/health', '/v1/platforms', '/v1/platforms/linkedin', '/agent-setup/prompt.md']) {
      const response = await call(`${path}?verbose=1`);
      expect(response.status, path).toBe(400);
      const { error } = await json(response);
      expect(error.code).toBe('VALIDATION_ERROR');
      expect(error.details).toEqual([expect.objectContaining({ field: 'verbose', location: 'query' })]);
    }
  });
});

describe('GET /docs', () => {
  it('serves the reference UI from this worker only, under a policy that allows no other script source', async () => {
    const response = await call('/docs');
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const policy = response.headers.get('content-security-policy')!;
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("script-src 'self';");
    expect(policy).toMatch(/connect-src 'self' [^;]*/);
    const page = await response.text();
    const scripts = [...page.matchAll(/<script\b[^>]*>/g)].map(([tag]) => tag);
    expect(scripts.length).toBeGreaterThan(0);
    // Every script is an address on this origin; none is inline, none is another host's.
    for (const tag of scripts) expect(tag).toMatch(/^<script src="\/docs\/assets\/[\w.-]+\.js">$/);
    expect(page).not.toMatch(/https?:\/\//);
  });

  it('serves the pinned bundle and the start-up script it names, the bundle cached for good', async () => {
    const page = await (await call('/docs')).text();
    const [bundle, init] = [...page.matchAll(/<script src="([^"]+)">/g)].map(([, src]) => src!);
    const served = await call(bundle!);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(served.headers.get('cache-control')).toContain('immutable');
    expect(await served.text()).toContain('createApiReference');
    const start = await (await call(init!)).text();
    expect(start).toContain("Scalar.createApiReference('#reference'");
    expect(JSON.parse(start.slice(start.indexOf('{'), start.lastIndexOf('}') + 1))).toMatchObject({ url: '/openapi.json', telemetry: false, withDefaultFonts: false });
  });

  it("sends a browser's /favicon.ico to the dashboard's icon, which is an image", async () => {
    const response = await call('/favicon.ico');
    expect(response.status).toBe(301);
    const target = new URL(response.headers.get('location')!);
    expect(target.origin).toBe(new URL(env.APP_URL).origin);
    const icon = await dashboard(target.pathname);
    expect(icon.status).toBe(301);
    const asset = await dashboard(new URL(icon.headers.get('location')!, env.APP_URL).pathname);
    expect(asset.headers.get('content-type')).toContain('image/svg+xml');
  });

  it('answers an asset it does not have with 404', async () => {
    const response = await call('/docs/assets/scalar-0000000000000000.js');
    expect(response.status).toBe(404);
    expect((await json(response)).error.code).toBe('NOT_FOUND');
  });
});

describe('GET /llms.txt', () => {
  it('indexes the docs for agents with this installation\'s URLs and every operation of the registry', async () => {
    const response = await call('/llms.txt');
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toMatch(/^# Sluice\n\n> /);
    expect(text).toContain(`(${env.BASE_URL}/openapi.json)`);
    expect(text).toContain(`(${env.BASE_URL}/docs)`);
    expect(text).toContain(`(${env.BASE_URL}/agent-setup/prompt.md)`);
    for (const operation of OPERATIONS) expect(text, operation.name).toContain(`${operation.method} ${operation.paths[0]}](`);
  });
});
