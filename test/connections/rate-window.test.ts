import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { exampleOf } from '../../src/api/examples';
import { dataPathsOf } from '../../src/api/routes/data';
import { CONNECTABLE_VENDORS } from '../../src/services/connections-vendors';
import { bearer, call, companyByDomain, credit, json, provision, wallet } from '../support/api';
import { holdClockInOneMinute } from '../support/held-minute';

const SETTINGS = env as unknown as Record<string, string>;
/** Spec "Request rate": pay as you go allows 60 requests a minute. */
const PAYG_CEILING = 60;

const hunter = CONNECTABLE_VENDORS.find((vendor) => vendor.slug === 'hunter')!;
const hunterOperation = hunter.operations.find((operation) => operation.method === 'GET' && exampleOf(operation))!;
/** The credentials the fakes accept: this installation's own settings for the vendor. */
const hunterCredentials = Object.fromEntries(hunter.fields.map((field) => [field.name, SETTINGS[field.setting]!]));

const held = holdClockInOneMinute(30_000);

function send(method: string, path: string, key: string, body?: unknown): Promise<Response> {
  return call(path, bearer(key, { method, body }));
}

function vendors(key: string): Promise<Response> {
  return send('GET', '/v1/connections/vendors', key);
}

/** `count` calls to /v1/connections/vendors at once; every one must be served. */
async function connectionCalls(key: string, count: number): Promise<void> {
  const statuses = await Promise.all(Array.from({ length: count }, async () => (await vendors(key)).status));
  expect(statuses.filter((status) => status !== 200)).toEqual([]);
}

/** `count` metered /v1/data calls at once; every one must be served. */
async function meteredCalls(key: string, count: number): Promise<void> {
  const statuses = await Promise.all(Array.from({ length: count }, async () => (await companyByDomain(key, 'stripe.com')).status));
  expect(statuses.filter((status) => status !== 200)).toEqual([]);
}

async function expectRateLimited(response: Response, label: string): Promise<void> {
  const body = await json(response);
  expect({ label, status: response.status, code: body.error?.code }).toEqual({ label, status: 429, code: 'RATE_LIMITED' });
  expect(body.error.retryAfter, label).toBe(30);
  expect(response.headers.get('retry-after'), label).toBe('30');
  expect(response.headers.get('ratelimit-limit'), label).toBe(String(PAYG_CEILING));
  expect(response.headers.get('ratelimit-remaining'), label).toBe('0');
  expect(response.headers.get('ratelimit-reset'), label).toBe('30');
}

describe("/v1/connections/* in the workspace's request window", () => {
  it('answers every connections route 429 RATE_LIMITED with Retry-After and RateLimit-* headers once the window is used up, and does nothing', async () => {
    const account = await provision({ plan: 'payg' });
    await credit(account.organizationId, { purchasedCents: 100 });
    const created = await send('POST', '/v1/connections', account.key, { vendor: hunter.slug, name: 'ours', credentials: hunterCredentials });
    expect(created.status).toBe(201);
    const connection = (await json(created)).data as { id: string };
    const first = await vendors(account.key);
    expect(first.headers.get('ratelimit-remaining')).toBe(String(PAYG_CEILING - 2));

    await connectionCalls(account.key, PAYG_CEILING - 2);
    const query = new URLSearchParams(Object.entries(exampleOf(hunterOperation)!.input).map(([name, value]): [string, string] => [name, String(value)]));
    const attempts: [string, string, unknown?][] = [
      ['GET', '/v1/connections/vendors'],
      ['GET', '/v1/connections'],
      ['POST', '/v1/connections', { vendor: hunter.slug, name: 'another', credentials: hunterCredentials }],
      ['GET', `/v1/connections/${connection.id}`],
      ['POST', `/v1/connections/${connection.id}/check`],
      ['DELETE', `/v1/connections/${connection.id}`],
      ['GET', `${dataPathsOf(hunterOperation, `/v1/connections/${connection.id}/data/`)[0]!}?${query}`],
    ];
    for (const [method, path, body] of attempts) await expectRateLimited(await send(method, path, account.key, body), `${method} ${path}`);

    // The next minute: the refused create stored nothing, the refused delete removed nothing, nothing was charged.
    held.moveTo(60_000);
    const listed = await send('GET', '/v1/connections', account.key);
    expect(listed.status).toBe(200);
    expect(listed.headers.get('ratelimit-remaining')).toBe(String(PAYG_CEILING - 1));
    expect((await json(listed)).data.connections.map((entry: { id: string }) => entry.id)).toEqual([connection.id]);
    expect(await wallet(account.organizationId)).toMatchObject({ purchasedBalanceCents: 100, heldCents: 0 });
  });

  it('takes its slots from the same window as metered calls: a minute of connections calls leaves a /v1/data call 429, uncharged', async () => {
    const account = await provision({ plan: 'payg' });
    await credit(account.organizationId, { purchasedCents: 100 });
    await connectionCalls(account.key, PAYG_CEILING);
    await expectRateLimited(await companyByDomain(account.key, 'stripe.com'), 'metered call after the connections calls');
    expect(await wallet(account.organizationId)).toMatchObject({ purchasedBalanceCents: 100, heldCents: 0 });
  });

  it('is refused once metered calls have used up the window: a minute of /v1/data calls leaves a connections call 429', async () => {
    const account = await provision({ plan: 'payg' });
    await credit(account.organizationId, { purchasedCents: 100 });
    await meteredCalls(account.key, PAYG_CEILING);
    await expectRateLimited(await vendors(account.key), 'connections call after the metered calls');
  });

  it('counts one slot a call in the shared window, whichever kind of call takes it', async () => {
    const account = await provision({ plan: 'payg' });
    await credit(account.organizationId, { purchasedCents: 100 });
    const remaining = [];
    for (const next of [() => companyByDomain(account.key, 'stripe.com'), () => vendors(account.key), () => companyByDomain(account.key, 'stripe.com'), () => vendors(account.key)]) {
      remaining.push((await next()).headers.get('ratelimit-remaining'));
    }
    expect(remaining).toEqual([1, 2, 3, 4].map((used) => String(PAYG_CEILING - used)));
  });
});
