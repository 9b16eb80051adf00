import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import worker from '../src/api';
import { clock } from '../src/core/clock';
import { DEPRECATIONS } from '../src/core/deprecations';
import { ApiError } from '../src/core/errors';
import { createApp } from '../src/core/http-app';
import { bearer, call, companyByDomain, funded, json, ops, OPS_TOKEN, provision } from './support/api';
import { signUp } from './support/dashboard';
import { startAMinute } from './support/held-minute';

afterEach(() => {
  vi.restoreAllMocks();
});

const realNow = clock.now;

/** An app from the one factory, with routes that fail in each way a real handler can. */
function appWithFailingRoutes() {
  const app = createApp();
  app.get('/boom', () => {
    throw new Error('secret internals: connection string postgres://user:pw@db');
  });
  app.get('/wait', () => {
    throw new ApiError('RATE_LIMITED', 'Slow down.', { retryAfter: 17.2 });
  });
  return app;
}

/**
 * Each error code of the spec, answered by a real request, with the status the spec gives it. Each request
 * is one that provokes the code in the ordinary way (other tests hold each rule in full).
 */
const PROVOKED: [string, number, () => Promise<Response>][] = [
  ['VALIDATION_ERROR', 400, () => call('/ops/v1/organizations', { method: 'POST', headers: { authorization: `Bearer ${OPS_TOKEN}`, 'content-type': 'application/json' }, body: '{}' })],
  ['UNAUTHORIZED', 401, () => call('/v1/credits')],
  ['INSUFFICIENT_CREDITS', 402, async () => companyByDomain((await provision()).key, 'stripe.com')],
  [
    'PLAN_LIMIT_REACHED',
    402,
    async () => {
      const account = await provision();
      await ops('PUT', `/organizations/${account.organizationId}/plan`, { plan: 'payg', caps: { databases: 0 } });
      return call('/v1/db/databases', { method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'one' }) });
    },
  ],
  [
    'SEAT_LIMIT_REACHED',
    402,
    async () => {
      const owner = await signUp();
      await ops('PUT', `/organizations/${owner.organizationId}/plan`, { plan: 'payg', caps: { seats: 1 } });
      return owner.request('POST', `/api/organizations/${owner.organizationId}/invitations`, { email: `seat-${crypto.randomUUID()}@example.com`, role: 'member' });
    },
  ],
  [
    'DEPLOY_GATE_FAILED',
    402,
    async () => {
      const owner = await signUp();
      return owner.request('POST', `/api/workspaces/${owner.workspaceId}/agents`, { name: 'researcher' });
    },
  ],
  [
    'SUBSCRIPTION_REQUIRED',
    402,
    async () => {
      const owner = await signUp();
      return owner.request('POST', `/api/organizations/${owner.organizationId}/workspaces`, { name: 'Second' });
    },
  ],
  [
    'INVITATION_EMAIL_MISMATCH',
    403,
    async () => {
      const owner = await signUp();
      await ops('PUT', `/organizations/${owner.organizationId}/plan`, { plan: 'team' });
      const invited = await owner.json('POST', `/api/organizations/${owner.organizationId}/invitations`, { email: `invited-${crypto.randomUUID()}@example.com`, role: 'member' });
      return (await signUp()).request('POST', `/api/invitations/${invited.body.data.token}/accept`);
    },
  ],
  ['NOT_FOUND', 404, () => call('/no/such/route')],
  ['PROVIDER_NOT_FOUND', 404, async () => call('/v1/data/myspace/get-profile?username=tom', bearer((await funded(100)).key))],
  ['ENDPOINT_NOT_FOUND', 404, () => call('/health', { method: 'POST' })],
  [
    'ENDPOINT_MIGRATED',
    410,
    async () => {
      const { key } = await provision();
      clock.now = () => DEPRECATIONS.curatedPaths.sunsetAt;
      try {
        return await call('/v1/linkedin/get-company-by-domain?domain=stripe.com', bearer(key));
      } finally {
        clock.now = realNow;
      }
    },
  ],
  [
    'CONFLICT',
    409,
    async () => {
      const owner = await signUp();
      await ops('PUT', `/organizations/${owner.organizationId}/plan`, { plan: 'payg' });
      return owner.request('POST', `/api/organizations/${owner.organizationId}/trial`);
    },
  ],
  [
    'TRIAL_ALREADY_USED',
    409,
    async () => {
      const owner = await signUp();
      expect((await owner.request('POST', `/api/organizations/${owner.organizationId}/trial`)).status).toBe(201);
      return owner.request('POST', `/api/organizations/${owner.organizationId}/trial`);
    },
  ],
  [
    'RATE_LIMITED',
    429,
    async () => {
      startAMinute();
      const account = await funded(100);
      await ops('PUT', `/organizations/${account.organizationId}/plan`, { plan: 'payg', rpm: 1 });
      expect((await companyByDomain(account.key, 'stripe.com')).status).toBe(200);
      return companyByDomain(account.key, 'stripe.com');
    },
  ],
  ['PROVIDER_ERROR', 502, async () => companyByDomain((await funded(100)).key, 'status500.com')],
  [
    'PROVIDER_UNAVAILABLE',
    503,
    async () => {
      const { key } = await funded(100);
      // This server without the vendor's credential.
      const request = new Request('http://sluice.test/v1/data/linkedin/get-company-by-domain?domain=stripe.com', bearer(key));
      return worker.fetch(request, { ...env, LINKEDIN_API_KEY: undefined }, createExecutionContext());
    },
  ],
  ['UPSTREAM_CREDITS_EXHAUSTED', 503, async () => companyByDomain((await funded(100)).key, 'status402.com')],
  ['INTERNAL_ERROR', 500, () => fetchFrom(appWithFailingRoutes(), '/boom')],
];

async function fetchFrom(app: { fetch: (request: Request, env: any, context: ExecutionContext) => Response | Promise<Response> }, path: string) {
  const context = createExecutionContext();
  const response = await app.fetch(new Request(`http://sluice.test${path}`), env, context);
  await waitOnExecutionContext(context);
  return response;
}

describe('the envelope', () => {
  it('answers an unknown route with 404 NOT_FOUND in the envelope', async () => {
    const response = await call('/no/such/route');
    expect(response.status).toBe(404);
    const body = await json(response);
    expect(body).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } });
    expect(body.error.message).toContain('/no/such/route');
  });

  it('answers a wrong method on a known path with 404 ENDPOINT_NOT_FOUND and an Allow header', async () => {
    const response = await call('/health', { method: 'POST' });
    expect(response.status).toBe(404);
    expect(response.headers.get('allow')).toBe('GET');
    expect(await json(response)).toMatchObject({ success: false, error: { code: 'ENDPOINT_NOT_FOUND' } });
  });

  it('answers a known path asked with a trailing slash with 404 NOT_FOUND naming the path without it, never "GET is not served" where GET is', async () => {
    const account = await funded(100);
    const cases: Array<[path: string, init: RequestInit, meant: string]> = [
      ['/v1/credits/', bearer(account.key), '/v1/credits answers GET.'],
      ['/health/', {}, '/health answers GET.'],
      ['/scrape/', bearer(account.key, { method: 'POST', body: { url: 'https://example.com' } }), '/scrape answers POST.'],
      ['/v1/data/linkedin/get-company-by-domain/?domain=stripe.com', bearer(account.key), '/v1/data/linkedin/get-company-by-domain answers GET.'],
    ];
    for (const [path, init, meant] of cases) {
      const response = await call(path, init);
      expect(response.status).toBe(404);
      expect(response.headers.get('allow')).toBeNull();
      const body = await json(response);
      expect(body.error.code).toBe('NOT_FOUND');
      expect(body.error.message).toBe(`No route ${init.method ?? 'GET'} ${path.split('?')[0]}: paths take no trailing slash. ${meant}`);
    }
    // Nothing was charged for them.
    expect((await json(await call('/v1/credits', bearer(account.key)))).data.purchasedBalanceCents).toBe(100);
  });

  it('answers a malformed JSON body with 400 VALIDATION_ERROR naming the body', async () => {
    const response = await call('/ops/v1/organizations', {
      method: 'POST',
      headers: { authorization: `Bearer ${OPS_TOKEN}`, 'content-type': 'application/json' },
      body: '{"name": ',
    });
    expect(response.status).toBe(400);
    const body = await json(response);
    expect(body.error.code).toBe('VALIDATION_ERROR');
    expect(body.error.details).toEqual([{ field: 'body', location: 'body', message: expect.stringMatching(/JSON/) }]);
  });

  it('names each offending field once, with its location', async () => {
    const response = await call('/ops/v1/organizations', {
      method: 'POST',
      headers: { authorization: `Bearer ${OPS_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ plan: 'gold', colour: 'red' }),
    });
    expect(response.status).toBe(400);
    const { error } = await json(response);
    expect(error.code).toBe('VALIDATION_ERROR');
    const fields = error.details.map((detail: { field: string }) => detail.field).sort();
    expect(fields).toEqual(['colour', 'name', 'plan']);
    for (const detail of error.details) expect(detail.location).toBe('body');
    expect(error.details.find((detail: { field: string }) => detail.field === 'name').message).toBe('Required.');
  });

  it('names a path parameter with location path', async () => {
    const response = await call('/ops/v1/keys/not-a-key/reveal', { method: 'POST', headers: { authorization: `Bearer ${OPS_TOKEN}` } });
    expect(response.status).toBe(400);
    expect((await json(response)).error.details).toEqual([{ field: 'id', location: 'path', message: expect.any(String) }]);
  });

  it('answers a thrown exception with 500 INTERNAL_ERROR and leaks nothing', async () => {
    const response = await fetchFrom(appWithFailingRoutes(), '/boom');
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(text).not.toMatch(/postgres|secret|stack|Error:/);
    expect(JSON.parse(text)).toMatchObject({ success: false, error: { code: 'INTERNAL_ERROR' } });
  });

  it('mirrors retryAfter (whole seconds, rounded up) in a Retry-After header', async () => {
    const response = await fetchFrom(appWithFailingRoutes(), '/wait');
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('18');
    expect((await json(response)).error.retryAfter).toBe(18);
  });

  it('puts an x-request-id on every response, success or failure, each one different', async () => {
    const responses = await Promise.all([call('/health'), call('/nope'), call('/v1/credits'), fetchFrom(appWithFailingRoutes(), '/boom')]);
    const ids = responses.map((response) => response.headers.get('x-request-id'));
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{24}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it.each(PROVOKED)('answers %s with %i to a request that provokes it', async (code, status, provoke) => {
    const response = await provoke();
    expect(await json(response)).toMatchObject({ success: false, error: { code } });
    expect(response.status).toBe(status);
  });

  it('names in /openapi.json exactly the codes provoked above: a code is published only with a request that answers it', async () => {
    const document = await json(await call('/openapi.json'));
    const published: string[] = document.components.schemas.ErrorEnvelope.properties.error.properties.code.enum;
    expect([...published].sort()).toEqual(PROVOKED.map(([code]) => code).sort());
  });
});
