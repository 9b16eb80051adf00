import { afterEach, describe, expect, it } from 'vitest';
import { RETIRED_PATHS } from '../../src/api/routes/retired-paths';
import { clock } from '../../src/core/clock';
import { DEPRECATIONS } from '../../src/core/deprecations';
import { bearer, call, companyByDomain, funded, json, provision } from '../support/api';

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

/** Moves the injectable clock to a moment, for the rest of the test. */
function at(moment: number) {
  clock.now = () => moment;
}

const DAY = 86_400_000;

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
