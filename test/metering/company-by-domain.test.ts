import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { buildApiApp } from '../../src/api';
import { UPSTREAM_RETRY_AFTER_S } from '../../src/core/errors';
import company from '../fixtures/linkedin-data-api/get-company-by-domain.json';
import { bearer, call, companyByDomain, credit, eventually, json, provision, wallet, expectReleasedUncharged } from '../support/api';

async function funded(cents = 10) {
  const account = await provision();
  await credit(account.organizationId, { purchasedCents: cents });
  return account;
}

describe('GET /v1/data/linkedin/get-company-by-domain', () => {
  it('answers the company record with the upstream message beside data, and charges 1 cent', async () => {
    const account = await funded(10);
    const response = await companyByDomain(account.key, 'stripe.com');
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body).toMatchObject({ success: true, message: '', data: { ...company.data, website: 'https://stripe.com' } });
    expect(body.meta).toEqual({ costCents: 1, purchasedBalanceCents: 9, subscriptionRemainingCents: 0, cached: false, latencyMs: expect.any(Number) });
    expect(response.headers.get('ratelimit-limit')).toBe('60');
    expect(response.headers.get('ratelimit-remaining')).toBe('59');
    expect(Number(response.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(9);
  });

  it("answers `message` as a string when the upstream's success carries none", async () => {
    const account = await funded(10);
    const response = await companyByDomain(account.key, 'nomessage.com');
    expect(response.status).toBe(200);
    expect(await json(response)).toMatchObject({ success: true, message: '', data: { website: 'https://nomessage.com' } });
  });

  it('records a usage row for the call', async () => {
    const account = await funded(10);
    const response = await companyByDomain(account.key, 'stripe.com');
    const requestId = response.headers.get('x-request-id');
    const row = await eventually(
      () => env.DB.prepare('SELECT * FROM usage WHERE request_id = ?').bind(requestId).first<Record<string, unknown>>(),
      (found) => found !== null,
    );
    expect(row).toMatchObject({
      workspace_id: account.workspaceId,
      organization_id: account.organizationId,
      key_id: account.keyId,
      operation: 'linkedin.get-company-by-domain',
      status: 200,
      error_code: null,
      cost_units: 10_000,
    });
  });

  it('refuses a missing domain with 400 VALIDATION_ERROR on the query, uncharged', async () => {
    const account = await funded(10);
    const response = await call('/v1/data/linkedin/get-company-by-domain', bearer(account.key));
    expect(response.status).toBe(400);
    expect((await json(response)).error.details).toEqual([{ field: 'domain', location: 'query', message: 'Required.' }]);
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(10);
  });

  it('refuses a URL instead of a domain, and an unknown parameter, naming each', async () => {
    const account = await funded(10);
    const response = await call('/v1/data/linkedin/get-company-by-domain?domain=https://stripe.com/about&colour=red', bearer(account.key));
    expect(response.status).toBe(400);
    const fields = (await json(response)).error.details.map((detail: { field: string }) => detail.field).sort();
    expect(fields).toEqual(['colour', 'domain']);
  });

  it('answers 402 SUBSCRIPTION_REQUIRED for an organization with no plan', async () => {
    const account = await provision({ plan: null });
    const response = await companyByDomain(account.key, 'stripe.com');
    expect(response.status).toBe(402);
    expect((await json(response)).error.code).toBe('SUBSCRIPTION_REQUIRED');
  });

  it('answers 402 INSUFFICIENT_CREDITS stating the required and available amounts', async () => {
    const account = await provision();
    const response = await companyByDomain(account.key, 'stripe.com');
    expect(response.status).toBe(402);
    const { error } = await json(response);
    expect(error.code).toBe('INSUFFICIENT_CREDITS');
    expect(error.message).toContain('needs 1 cent');
    expect(error.message).toContain('has 0 cents available');
  });

  it('answers 503 PROVIDER_UNAVAILABLE naming the missing settings when the vendor is not configured', async () => {
    const account = await funded(10);
    const response = await buildApiApp().fetch(
      new Request('http://sluice.test/v1/data/linkedin/get-company-by-domain?domain=stripe.com', bearer(account.key)),
      { ...env, LINKEDIN_API_KEY: undefined, LINKEDIN_API_HOST: undefined },
      createExecutionContext(),
    );
    expect(response.status).toBe(503);
    const { error } = await json(response);
    expect(error.code).toBe('PROVIDER_UNAVAILABLE');
    expect(error.message).toContain('LINKEDIN_API_KEY');
    expect(error.message).toContain('LINKEDIN_API_HOST');
    expect(response.headers.get('retry-after')).toBe(String(error.retryAfter));
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(10);
  });

  describe('upstream normalization: every failure is billed zero and its hold released', () => {
    it.each([
      ['a 200 with success:false', 'rejected.com', 422, 'PROVIDER_ERROR', /Company not found/],
      ['an upstream 404', 'status404.com', 404, 'PROVIDER_ERROR', /HTTP 404/],
      ['an upstream 400', 'status400.com', 400, 'PROVIDER_ERROR', /Invalid domain/],
      ['an upstream throttle 429', 'throttled.com', 429, 'PROVIDER_ERROR', /HTTP 429/],
      ['an upstream 500', 'status500.com', 502, 'PROVIDER_ERROR', /HTTP 500/],
      ['an upstream 503', 'status503.com', 502, 'PROVIDER_ERROR', /HTTP 503/],
      // A connection that fails for real is proved against npm start: test/node/reference.test.ts.
      ['a 200 that is not JSON', 'notjson.com', 502, 'PROVIDER_ERROR', /not JSON/],
      ['our upstream credential refused', 'forbidden.com', 502, 'PROVIDER_ERROR', /could not authenticate upstream/],
      ['an upstream 402', 'status402.com', 503, 'UPSTREAM_CREDITS_EXHAUSTED', /quota/],
      ['an upstream monthly quota 429', 'quota.com', 503, 'UPSTREAM_CREDITS_EXHAUSTED', /quota/],
    ])('%s becomes %s %s', async (_, domain, status, code, message) => {
      const account = await funded(10);
      const response = await companyByDomain(account.key, domain);
      expect(response.status).toBe(status);
      const { error } = await json(response);
      expect(error.code).toBe(code);
      expect(error.message).toMatch(message);
      await expectReleasedUncharged(account.organizationId, 10);
    });

    it('passes an upstream Retry-After through on a throttle, in seconds or as a date', async () => {
      const account = await funded(10);
      const response = await companyByDomain(account.key, 'throttled.com');
      expect(response.headers.get('retry-after')).toBe('7');
      const dated = await companyByDomain(account.key, 'throttleddate.com');
      expect(dated.status).toBe(429);
      const { error } = await json(dated);
      expect(error.retryAfter).toBeGreaterThanOrEqual(15);
      expect(error.retryAfter).toBeLessThanOrEqual(20);
      expect(dated.headers.get('retry-after')).toBe(String(error.retryAfter));
      // A wait past any sense is told as a day, in the header's own form (not 1e+23).
      const huge = await companyByDomain(account.key, 'throttledhuge.com');
      expect(huge.headers.get('retry-after')).toBe('86400');
    });

    it(`tells how long to wait on a throttle whose upstream named no wait: ${UPSTREAM_RETRY_AFTER_S} s, as a 502`, async () => {
      const account = await funded(10);
      const response = await companyByDomain(account.key, 'throttledbare.com');
      expect(response.status).toBe(429);
      expect((await json(response)).error).toMatchObject({ code: 'PROVIDER_ERROR', retryAfter: UPSTREAM_RETRY_AFTER_S });
      expect(response.headers.get('retry-after')).toBe(String(UPSTREAM_RETRY_AFTER_S));
      await expectReleasedUncharged(account.organizationId, 10);
    });
  });
});
