import { env } from 'cloudflare:workers';
import { beforeEach, describe, expect, it } from 'vitest';
import { APP_ORIGIN, dashboard, signUp } from '../support/dashboard';

/** A sign-in as a client sends it; `cf` is what only Cloudflare's edge adds. */
function signIn(email: string, clientIp: string, cf?: { colo: string }) {
  return dashboard('/api/auth/sign-in', {
    method: 'POST',
    headers: { origin: APP_ORIGIN, 'content-type': 'application/json', 'cf-connecting-ip': clientIp },
    body: JSON.stringify({ email, password: 'Password123!' }),
    ...(cf ? { cf } : {}),
  });
}

beforeEach(async () => {
  // Requests that bypass the edge share one bucket, which other files' requests may already have filled.
  await env.DB.prepare("DELETE FROM auth_throttle WHERE bucket = 'ip:unattributed'").run();
});

describe('whom sign-in throttling counts against', () => {
  it('ignores cf-connecting-ip on a request that did not come through Cloudflare: rotating it does not escape the limit', { timeout: 60_000 }, async () => {
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 31; attempt++) statuses.push((await signIn(`rotating${attempt}@example.com`, `192.0.2.${attempt + 1}`)).status);
    expect(statuses.slice(0, 30).every((status) => status === 401)).toBe(true);
    expect(statuses[30]).toBe(429);
  });

  it("believes cf-connecting-ip on a request Cloudflare forwarded: another client's attempts do not count against this one", { timeout: 60_000 }, async () => {
    for (let attempt = 0; attempt < 30; attempt++) expect((await signIn(`edge${attempt}@example.com`, '198.18.9.1', { colo: 'AMS' })).status).toBe(401);
    expect((await signIn('edge30@example.com', '198.18.9.1', { colo: 'AMS' })).status).toBe(429);
    expect((await signIn('edge31@example.com', '198.18.9.2', { colo: 'AMS' })).status).toBe(401);
  });
});

describe('free trials per client address', () => {
  /** A trial started by a newcomer, as Cloudflare's edge forwards their browser's request from `clientIp`. */
  async function trialFrom(clientIp: string): Promise<Response> {
    const person = await signUp();
    return person.request('POST', `/api/organizations/${person.organizationId}/trial`, undefined, { headers: { 'cf-connecting-ip': clientIp }, cf: { colo: 'AMS' } });
  }

  it('starts three a day from one address, then answers 429 with Retry-After; another address starts its own', async () => {
    const address = `203.0.113.${Math.floor(Math.random() * 250) + 1}`;
    for (let trial = 0; trial < 3; trial++) expect((await trialFrom(address)).status).toBe(201);
    const refused = await trialFrom(address);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(23 * 3600);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('free trials started from this address');
    expect((await trialFrom('203.0.113.251')).status).toBe(201);
  });

  it('counts an IPv6 client as its /64: other addresses of the same block share its three', async () => {
    const block = `2001:db8:${Math.floor(Math.random() * 0xffff).toString(16)}:1`;
    for (const host of ['::1', '::2', '::abcd:3']) expect((await trialFrom(`${block}${host}`)).status).toBe(201);
    expect((await trialFrom(`${block}::ffff:4`)).status).toBe(429);
    expect((await trialFrom(`${block.replace(/:1$/, ':2')}::1`)).status).toBe(201);
  });
});
