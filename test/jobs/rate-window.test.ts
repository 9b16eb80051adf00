import { describe, expect, it } from 'vitest';
import { JOBS_PATH } from '../../src/core/protocols/job';
import { bearer, call, json, ops, provision } from '../support/api';
import { holdClockInOneMinute } from '../support/held-minute';

/** A window this small is used up by one call of each route. */
const RPM = 4;

holdClockInOneMinute(30_000);

/** Every route of a job but submitting (jobs.test.ts counts a submission in the window), on a job of another workspace's or none. */
const ROUTES = [
  ['list', 'GET', JOBS_PATH],
  ['read', 'GET', `${JOBS_PATH}/job_missing`],
  ['cancel', 'POST', `${JOBS_PATH}/job_missing/cancel`],
  ['results', 'GET', `${JOBS_PATH}/job_missing/results`],
] as const;

describe("/v1/data/agnt/* in the workspace's request window (spec: a limited route)", () => {
  it('counts every route of a job, and refuses each 429 RATE_LIMITED with Retry-After once the window is used', async () => {
    const account = await provision({ plan: 'payg' });
    expect((await ops('PUT', `/organizations/${account.organizationId}/plan`, { plan: 'payg', rpm: RPM })).status).toBe(200);

    // One of each: each takes a slot (a missing job is 404 after its slot is taken), and together they use the window.
    const served = [];
    for (const [label, method, path] of ROUTES) served.push({ label, status: (await call(path, bearer(account.key, { method }))).status });
    expect(served).toEqual(ROUTES.map(([label]) => ({ label, status: label === 'list' ? 200 : 404 })));

    for (const [label, method, path] of ROUTES) {
      const response = await call(path, bearer(account.key, { method }));
      const body = await json(response);
      expect({ label, status: response.status, code: body.error?.code }).toEqual({ label, status: 429, code: 'RATE_LIMITED' });
      expect(response.headers.get('retry-after'), label).toBe('30');
      expect(response.headers.get('ratelimit-limit'), label).toBe(String(RPM));
      expect(response.headers.get('ratelimit-remaining'), label).toBe('0');
    }
    // Not limited, spec "Request rate": the catalog still answers, with the workspace's key or none.
    expect((await call('/v1/platforms', bearer(account.key))).status).toBe(200);
    expect((await call('/v1/platforms')).status).toBe(200);
  });
});
