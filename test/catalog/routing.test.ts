import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import { McpGateway } from '../../src/api';
import { clock } from '../../src/core/clock';
import mcpWorker from '../../src/mcp/index';
import { CATALOG } from '../../src/operations/catalog';
import { bearer, call, credit, funded, json, ops, provision, wallet } from '../support/api';
import { toolErrorOf } from '../mcp/tool-error';

/**
 * Routing under /v1/data by the spec's errors, and the operator's switch. The switch is exercised on the
 * `web` source, whose /map is served by the built-in provider: no other test of the social and lead tables
 * shares it.
 */
const SLUGS = CATALOG.map((platform) => platform.slug);

describe('routing errors under /v1/data', () => {
  it('answers an unknown slug with 404 PROVIDER_NOT_FOUND listing every valid slug', async () => {
    const account = await funded(10);
    const response = await call('/v1/data/myspace/get-profile?username=tom', bearer(account.key));
    expect(response.status).toBe(404);
    const { error } = await json(response);
    expect(error.code).toBe('PROVIDER_NOT_FOUND');
    // Every source GET /v1/platforms lists, Sluice's own (agnt) too, as GET /v1/platforms/<unknown> names them.
    const listed: string[] = (await json(await call('/v1/platforms'))).data.platforms.map((platform: { slug: string }) => platform.slug);
    expect(listed).toEqual(expect.arrayContaining(['agnt', 'linkedin', 'web', 'seo']));
    expect(error.message).toMatch(new RegExp(`Valid slugs: ${listed.join(', ')}\\.$`));
    expect((await json(await call('/v1/platforms/myspace'))).error.message).toBe(error.message);
  });

  it('answers an unknown path of the agnt source (data jobs) with 404 ENDPOINT_NOT_FOUND naming its routes, and serves its own', async () => {
    const account = await funded(10);
    const response = await call('/v1/data/agnt/get-everything', bearer(account.key));
    expect(response.status).toBe(404);
    const { error } = await json(response);
    expect(error.code).toBe('ENDPOINT_NOT_FOUND');
    expect(error.message).toContain('/v1/data/agnt/jobs/{id}/results');
    // Its real routes are untouched: a job that is not there is NOT_FOUND, a wrong method ENDPOINT_NOT_FOUND with Allow.
    expect((await json(await call('/v1/data/agnt/jobs/job_000000000000000000000000', bearer(account.key)))).error.code).toBe('NOT_FOUND');
    expect((await call('/v1/data/agnt/jobs', bearer(account.key))).status).toBe(200);
    const wrongMethod = await call('/v1/data/agnt/jobs/job_000000000000000000000000/cancel', bearer(account.key));
    expect(wrongMethod.status).toBe(404);
    expect(wrongMethod.headers.get('allow')).toBe('POST');
  });

  it('answers a known slug with an unknown operation with 404 ENDPOINT_NOT_FOUND naming its operations', async () => {
    const account = await funded(10);
    const response = await call('/v1/data/tiktok/get-everything', bearer(account.key));
    expect(response.status).toBe(404);
    const { error } = await json(response);
    expect(error.code).toBe('ENDPOINT_NOT_FOUND');
    expect(error.message).toContain('user-info');
  });

  it('answers a known operation asked with the wrong method with 404 ENDPOINT_NOT_FOUND and Allow', async () => {
    const account = await funded(10);
    const response = await call('/v1/data/youtube/search', { method: 'POST', headers: { authorization: `Bearer ${account.key}` } });
    expect(response.status).toBe(404);
    expect((await json(response)).error.code).toBe('ENDPOINT_NOT_FOUND');
    expect(response.headers.get('allow')).toBe('GET');
  });

  it('asks for a key before saying which slugs exist', async () => {
    expect((await call('/v1/data/myspace/anything')).status).toBe(401);
  });
});

describe('the operator switch: ops platform disable / enable', () => {
  const mapCall = (key: string) =>
    call('/v1/data/web/map', { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ url: 'https://plain.example.com/' }) });

  it('answers a switched-off slug with 503 PROVIDER_NOT_FOUND and Retry-After, uncharged, on REST and MCP, until enabled', async () => {
    const account = await funded(10);
    const mcpAccount = await provision({ plan: 'business', scope: 'workspace_mcp' });
    await credit(mcpAccount.organizationId, { purchasedCents: 10 });
    expect((await ops('POST', '/platforms/web/disable')).body.data).toMatchObject({ slug: 'web', serving: false });
    try {
      const response = await mapCall(account.key);
      expect(response.status).toBe(503);
      const { error } = await json(response);
      expect(error.code).toBe('PROVIDER_NOT_FOUND');
      expect(error.retryAfter).toBeGreaterThan(0);
      expect(response.headers.get('retry-after')).toBe(String(error.retryAfter));
      // The root path of the same operation is switched off too.
      expect((await call('/map', { method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' }, body: '{"url":"https://plain.example.com/"}' })).status).toBe(503);
      expect(await wallet(account.organizationId)).toMatchObject({ purchasedBalanceCents: 10, heldCents: 0 });

      const context = createExecutionContext();
      const mcp = await mcpWorker.fetch(
        new Request('http://mcp.test/mcp/web', {
          method: 'POST',
          headers: { authorization: `Bearer ${mcpAccount.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'data_web_map', arguments: { url: 'https://plain.example.com/' } } }),
        }),
        { API: new McpGateway(context, env), MCP_URL: 'http://mcp.test/mcp', APP_URL: 'http://app.test' },
        context,
      );
      await waitOnExecutionContext(context);
      const result = (await json(mcp)).result;
      expect(result.isError).toBe(true);
      expect(toolErrorOf(result)).toMatchObject({ code: 'PROVIDER_NOT_FOUND', retryAfter: error.retryAfter });

      const listed = (await ops('GET', '/platforms')).body.data.platforms;
      expect(listed).toContainEqual({ slug: 'web', serving: false });
      expect(listed).toContainEqual({ slug: 'leads', serving: true });
    } finally {
      expect((await ops('POST', '/platforms/web/enable')).body.data).toMatchObject({ slug: 'web', serving: true, disabledAt: null });
    }
    const response = await mapCall(account.key);
    expect(response.status).toBe(200);
  });

  it('refuses to switch a slug that does not exist, listing the valid ones', async () => {
    const response = await ops('POST', '/platforms/myspace/disable');
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('PROVIDER_NOT_FOUND');
    expect(response.body.error.message).toContain(SLUGS.join(', '));
  });

  it('reads the switch again after a few seconds beside a call, so another isolate\'s switch reaches this one without a call waiting for it', async () => {
    const account = await funded(10);
    const realNow = clock.now;
    try {
      expect((await mapCall(account.key)).status).toBe(200);
      // Another isolate switched it off: written straight to D1, which this isolate remembers for a few seconds.
      await env.DB.prepare("INSERT INTO disabled_platforms (slug, disabled_at) VALUES ('web', '2026-11-23T00:00:00.000Z')").run();
      expect((await mapCall(account.key)).status).toBe(200);
      const later = realNow() + 6_000;
      clock.now = () => later;
      // The call that finds the memory old is answered from it and reads the switch beside itself; the calls after that read see it.
      expect((await mapCall(account.key)).status).toBe(200);
      await vi.waitFor(async () => expect((await mapCall(account.key)).status).toBe(503));
    } finally {
      clock.now = realNow;
      await ops('POST', '/platforms/web/enable');
    }
  });
});
