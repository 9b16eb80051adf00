import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { createApp } from '../src/core/http-app';
import { ApiError, ERROR_STATUS } from '../src/core/errors';
import { call, json, OPS_TOKEN } from './support/api';

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

  it('has exactly the 19 error codes of the spec, each with its status', () => {
    expect(ERROR_STATUS).toEqual({
      VALIDATION_ERROR: 400,
      UNAUTHORIZED: 401,
      INSUFFICIENT_CREDITS: 402,
      PLAN_LIMIT_REACHED: 402,
      SEAT_LIMIT_REACHED: 402,
      DEPLOY_GATE_FAILED: 402,
      SUBSCRIPTION_REQUIRED: 402,
      INVITATION_EMAIL_MISMATCH: 403,
      NOT_FOUND: 404,
      PROVIDER_NOT_FOUND: 404,
      ENDPOINT_NOT_FOUND: 404,
      ENDPOINT_MIGRATED: 410,
      CONFLICT: 409,
      TRIAL_ALREADY_USED: 409,
      RATE_LIMITED: 429,
      PROVIDER_ERROR: 502,
      PROVIDER_UNAVAILABLE: 503,
      UPSTREAM_CREDITS_EXHAUSTED: 503,
      INTERNAL_ERROR: 500,
    });
  });
});
