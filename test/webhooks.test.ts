import { createExecutionContext, createScheduledController, runDurableObjectAlarm, runInDurableObject, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import type { OrgWallet } from '../durable-objects/org-wallet';
import { CREDIT_AUDIENCE_FRESH_MS, CreditWatch } from '../durable-objects/credit-watch';
import { unitsFromCents } from '../src/core/money';
import type { Charge, SyncMessage } from '../src/core/protocols/lease';
import worker from '../src/api';
import { clock } from '../src/core/clock';
import { gateOf } from '../src/services/gate';
import { walletOf } from '../src/services/wallet';
import { sendDailyUsagePage, WORKSPACES_PER_PAGE } from '../src/services/webhooks/daily-usage';
import { MAX_ENDPOINTS_PER_WORKSPACE, PREVIOUS_SECRET_KEPT_MS } from '../src/services/webhooks/endpoints';
import { webhookEventsUsed } from '../src/services/webhooks/event-cap';
import { RETRY_DELAYS_MS } from '../src/services/webhooks/retry-schedule';
import { FAKE_RECEIVER, type ReceivedRequest } from './fakes/webhook-receiver';
import type { WebhookEvent } from '../src/core/webhook-events';
import type { Env } from '../src/core/config';
import type { ApiKeyRecord } from '../src/core/records';
import type { JobRecord } from '../src/services/jobs/store';
import { announceJobEnd } from '../src/services/jobs/events';
import { announceKey } from '../src/services/webhooks/announce';
import { call, companyByDomain, credit, eventually, json, ops, provision, type Provisioned } from './support/api';
import { handToConsumer, keptNightly } from './support/nightly';
import type { NightlyMessage } from '../src/core/protocols/nightly';
import { join, signUp } from './support/dashboard';
import { objectRowsReadWhile, rowsReadBy } from './support/rows-read';
import { startAMinute } from './support/held-minute';

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

function hooks(key: string, method: string, path = '', body?: unknown) {
  return call(`/v1/webhook-endpoints${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function create(account: Provisioned, body: Record<string, unknown>) {
  const response = await hooks(account.key, 'POST', '', body);
  return { status: response.status, body: await json(response) };
}

/** A receiver path of its own for each test, so what it received is only this test's. */
function receiverUrl(behaviour: 'ok' | `fail-${number}` | `slow-${number}`) {
  return `${FAKE_RECEIVER}/${behaviour}/${crypto.randomUUID()}`;
}

async function received(url: string): Promise<ReceivedRequest[]> {
  return (await fetch(`${FAKE_RECEIVER}/_received?path=${encodeURIComponent(new URL(url).pathname)}`)).json();
}

/**
 * Waits until the wallet has announced what its balance calls for: its credit watch has caught up with the
 * balance and holds no refusal still unsaid (the watch is written after the alarm's announcements are queued).
 */
async function walletSaidAll(organizationId: string) {
  const behind = () =>
    runInDurableObject(walletOf(env, organizationId), (_wallet, state) =>
      state.storage.sql
        .exec<{ behind: number }>('SELECT (watch.refused = 1 OR watch.reported_units IS NOT account.subscription_units + account.purchased_units) AS behind FROM credit_watch watch, account')
        .one().behind,
    );
  expect(await eventually(behind, (value) => value === 0)).toBe(0);
}

function sender(endpointId: string) {
  return env.WEBHOOK_SENDER.get(env.WEBHOOK_SENDER.idFromName(endpointId));
}

async function deliveries(key: string, endpointId: string) {
  return (await json(await hooks(key, 'GET', `/${endpointId}/deliveries`))).data.deliveries as {
    id: string;
    type: string;
    state: string;
    reason: string | null;
    nextAttemptAt: string | null;
    attempts: { attempt: number; at: string; status: number | null; error: string | null }[];
  }[];
}

describe('/v1/webhook-endpoints', () => {
  it('creates an endpoint and answers its signing secret once; the list, a read and a change never show it again', async () => {
    const account = await provision();
    const url = receiverUrl('ok');
    const created = await create(account, { url, events: ['key.created', 'credits.low', 'key.created'], creditsLowThresholdCents: 250 });
    expect(created.status).toBe(201);
    const endpoint = created.body.data;
    expect(endpoint).toMatchObject({ id: expect.stringMatching(/^we_[0-9a-f]{24}$/), url, events: ['key.created', 'credits.low'], creditsLowThresholdCents: 250 });
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    const stored = await env.DB.prepare('SELECT secret_ciphertext AS ciphertext FROM webhook_endpoints WHERE id = ?').bind(endpoint.id).first<{ ciphertext: string }>();
    expect(stored!.ciphertext).not.toContain(endpoint.secret.slice(6));

    const listed = await json(await hooks(account.key, 'GET'));
    expect(listed.data.endpoints).toEqual([expect.objectContaining({ id: endpoint.id, url })]);
    expect(JSON.stringify(listed)).not.toContain(endpoint.secret);

    const changed = await json(await hooks(account.key, 'PATCH', `/${endpoint.id}`, { events: ['usage.daily'], creditsLowThresholdCents: 10 }));
    expect(changed.data).toMatchObject({ id: endpoint.id, url, events: ['usage.daily'], creditsLowThresholdCents: 10 });
    expect(changed.data.secret).toBeUndefined();
    expect((await json(await hooks(account.key, 'GET', `/${endpoint.id}`))).data.events).toEqual(['usage.daily']);

    expect((await hooks(account.key, 'DELETE', `/${endpoint.id}`)).status).toBe(200);
    expect((await hooks(account.key, 'GET', `/${endpoint.id}`)).status).toBe(404);
  });

  it.each([
    ['a loopback address', 'http://127.0.0.1:8080/hook'],
    ['a private address', 'https://10.0.0.5/hook'],
    ['the cloud metadata address', 'http://169.254.169.254/latest'],
    ['an IPv6 loopback', 'http://[::1]/hook'],
    ['a name that resolves to loopback', 'https://loopback.example.com/hook'],
    ['a name that resolves to a private address', 'https://private.example.com/hook'],
    ['localhost', 'http://localhost:3000/hook'],
    ['not http', 'ftp://hooks.example.com/hook'],
    // A typo: the URL is what must change, so not a 502 a client would retry.
    ['a name that does not resolve', 'https://hooks.exmaple.com/hook'],
    // Public, but in the clear: what events carry would be read on the way.
    ['plain http', 'http://hooks.example.com/hook'],
  ])('refuses %s with 400 VALIDATION_ERROR on url, at creation and on a change', async (_what, url) => {
    const account = await provision();
    const refused = await create(account, { url, events: ['key.created'] });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('VALIDATION_ERROR');
    expect(refused.body.error.details).toEqual([expect.objectContaining({ field: 'url', location: 'body' })]);
    expect((await json(await hooks(account.key, 'GET'))).data.endpoints).toEqual([]);

    const endpoint = (await create(account, { url: receiverUrl('ok'), events: ['key.created'] })).body.data;
    const patched = await hooks(account.key, 'PATCH', `/${endpoint.id}`, { url });
    expect(patched.status).toBe(400);
  });

  it('refuses unknown events, no events and unknown fields, naming each', async () => {
    const account = await provision();
    const refused = await create(account, { url: receiverUrl('ok'), events: ['credits.low', 'key.rotated'], secret: 'mine' });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.map((detail: { field: string }) => detail.field).sort()).toEqual(['events[1]', 'secret']);
    expect((await create(account, { url: receiverUrl('ok'), events: [] })).body.error.details).toEqual([expect.objectContaining({ field: 'events' })]);
  });

  it(`keeps at most ${MAX_ENDPOINTS_PER_WORKSPACE} a workspace: two asked at once for the last place get one, and removing one makes room`, async () => {
    const account = await provision();
    await env.DB.batch(
      Array.from({ length: MAX_ENDPOINTS_PER_WORKSPACE - 1 }, (_, i) =>
        env.DB.prepare(
          `INSERT INTO webhook_endpoints (id, workspace_id, url, events, credits_low_threshold_cents, secret_ciphertext, created_at, updated_at) VALUES (?, ?, ?, '["key.created"]', 100, 'sealed', ?, ?)`,
        ).bind(`we_filled_${crypto.randomUUID()}`, account.workspaceId, receiverUrl('ok'), new Date(Date.now() - 1000 * (i + 1)).toISOString(), new Date().toISOString()),
      ),
    );
    const make = () => create(account, { url: receiverUrl('ok'), events: ['key.created'] });
    const both = await Promise.all([make(), make()]);
    expect(both.map((answer) => answer.status).sort()).toEqual([201, 409]);
    expect(both.find((answer) => answer.status === 409)!.body.error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('delete one first') });
    expect((await make()).status).toBe(409);
    const listed = (await json(await hooks(account.key, 'GET'))).data.endpoints as { id: string }[];
    expect(listed).toHaveLength(MAX_ENDPOINTS_PER_WORKSPACE);
    expect((await hooks(account.key, 'DELETE', `/${listed[0]!.id}`)).status).toBe(200);
    expect((await make()).status).toBe(201);
  });

  it("reads another workspace's endpoint as 404, and is not rate limited", async () => {
    startAMinute();
    const owner = await provision();
    const stranger = await provision();
    const endpoint = (await create(owner, { url: receiverUrl('ok'), events: ['key.created'] })).body.data;
    for (const [method, path] of [['GET', ''], ['PATCH', ''], ['DELETE', ''], ['GET', '/deliveries'], ['POST', '/test']] as const) {
      const response = await hooks(stranger.key, method, `/${endpoint.id}${path}`, method === 'PATCH' ? { events: ['key.revoked'] } : undefined);
      expect(response.status, `${method} ${path}`).toBe(404);
    }
    // One request a minute for metered routes; the webhook routes do not count.
    expect((await ops('PUT', `/organizations/${owner.organizationId}/plan`, { plan: 'payg', rpm: 1 })).status).toBe(200);
    await companyByDomain(owner.key, 'stripe.com');
    expect((await companyByDomain(owner.key, 'stripe.com')).status).toBe(429);
    const answers = await Promise.all(Array.from({ length: 5 }, () => hooks(owner.key, 'GET')));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
  });

  it('delivers an event signed per Standard Webhooks, which the standardwebhooks verifier accepts', async () => {
    const account = await provision();
    const url = receiverUrl('ok');
    const { id, secret } = (await create(account, { url, events: ['key.created'] })).body.data;
    const key = await ops('POST', '/keys', { workspaceId: account.workspaceId, scope: 'workspace', name: 'ci' });

    const [delivery] = await eventually(() => received(url), (requests) => requests.length > 0);
    expect(delivery!.headers['content-type']).toBe('application/json');
    const payload = new Webhook(secret).verify(delivery!.body, delivery!.headers) as { type: string; data: { workspaceId: string; key: { id: string; name: string; scope: string } } };
    expect(payload).toMatchObject({ type: 'key.created', data: { workspaceId: account.workspaceId, key: { id: key.body.data.id, name: 'ci', scope: 'workspace' } } });
    expect(delivery!.body).not.toContain(key.body.data.key);
    // The same bytes with one changed, or another endpoint's secret, do not verify.
    expect(() => new Webhook(secret).verify(delivery!.body.replace('"ci"', '"cj"'), delivery!.headers)).toThrow('No matching signature');
    const other = (await create(account, { url: receiverUrl('ok'), events: ['key.revoked'] })).body.data;
    expect(() => new Webhook(other.secret).verify(delivery!.body, delivery!.headers)).toThrow('No matching signature');

    const [listed] = await deliveries(account.key, id);
    expect(listed).toMatchObject({ id: delivery!.headers['webhook-id'], type: 'key.created', state: 'delivered', attempts: [expect.objectContaining({ attempt: 1, status: 204, error: null })] });
  });

  it('rotates the signing secret: the replaced one signs beside the new one for a day, then only the new one does', async () => {
    const account = await provision();
    const url = receiverUrl('ok');
    const { id, secret: first } = (await create(account, { url, events: ['key.created'] })).body.data;
    /** Whether the delivery carries the signature `secret` makes of it (the header's signatures are space-separated). */
    const signedBy = (secret: string, delivery: ReceivedRequest) =>
      delivery.headers['webhook-signature']!.split(' ').includes(new Webhook(secret).sign(delivery.headers['webhook-id']!, new Date(Number(delivery.headers['webhook-timestamp']) * 1000), delivery.body));
    const ping = async () => {
      expect((await hooks(account.key, 'POST', `/${id}/test`)).status).toBe(200);
      return (await received(url)).at(-1)!;
    };

    const rotated = await json(await hooks(account.key, 'POST', `/${id}/rotate-secret`));
    const second = rotated.data.secret as string;
    expect(second).toMatch(/^whsec_/);
    expect(second).not.toBe(first);
    expect(Date.parse(rotated.data.previousSecretExpiresAt) - clock.now()).toBeGreaterThan(PREVIOUS_SECRET_KEPT_MS - 60_000);
    // Neither secret is shown again.
    expect((await json(await hooks(account.key, 'GET', `/${id}`))).data).toMatchObject({ previousSecretExpiresAt: rotated.data.previousSecretExpiresAt });
    expect((await json(await hooks(account.key, 'GET', `/${id}`))).data.secret).toBeUndefined();

    const during = await ping();
    expect([signedBy(first, during), signedBy(second, during)]).toEqual([true, true]);
    // A receiver still on the old secret, or already on the new one, accepts it.
    for (const secret of [first, second]) expect(new Webhook(secret).verify(during.body, during.headers)).toMatchObject({ type: 'ping' });

    clock.now = () => realNow() + PREVIOUS_SECRET_KEPT_MS + 1_000;
    const after = await ping();
    expect([signedBy(first, after), signedBy(second, after)]).toEqual([false, true]);
    expect((await json(await hooks(account.key, 'GET', `/${id}`))).data.previousSecretExpiresAt).toBeNull();
    // The nightly run forgets it: no sealed copy of a secret with no use left stays at rest.
    const sealed = () => env.DB.prepare('SELECT previous_secret_ciphertext AS previous FROM webhook_endpoints WHERE id = ?').bind(id).first<{ previous: string | null }>();
    expect((await sealed())!.previous).toEqual(expect.any(String));
    const context = createExecutionContext();
    await worker.scheduled(createScheduledController({ scheduledTime: clock.now(), cron: '5 0 * * *' }), keptNightly().bindings, context);
    await waitOnExecutionContext(context);
    expect((await sealed())!.previous).toBeNull();
    clock.now = realNow;

    // Rotating again at once (a leaked secret) drops the one before it: only the two newest sign.
    const third = (await json(await hooks(account.key, 'POST', `/${id}/rotate-secret`))).data.secret as string;
    const fourth = (await json(await hooks(account.key, 'POST', `/${id}/rotate-secret`))).data.secret as string;
    const last = await ping();
    expect([first, second, third, fourth].map((secret) => signedBy(secret, last))).toEqual([false, false, true, true]);
    expect((await hooks(account.key, 'POST', '/we_000000000000000000000000/rotate-secret')).status).toBe(404);
  });

  it('sends key.revoked from the dashboard, and the test call sends a ping', async () => {
    const person = await signUp();
    await ops('PUT', `/organizations/${person.organizationId}/plan`, { plan: 'payg' });
    const key = await person.json('POST', `/api/workspaces/${person.workspaceId}/keys`, { name: 'to revoke' });
    const apiKey = key.body.data.key as string;
    const url = receiverUrl('ok');
    const endpoint = (await create({ key: apiKey } as Provisioned, { url, events: ['key.revoked'] })).body.data;

    const ping = await json(await hooks(apiKey, 'POST', `/${endpoint.id}/test`));
    expect(ping.data).toMatchObject({ type: 'ping', state: 'delivered', attempts: [expect.objectContaining({ status: 204 })] });
    expect((await received(url)).map((request) => JSON.parse(request.body).type)).toEqual(['ping']);

    const other = await person.json('POST', `/api/workspaces/${person.workspaceId}/keys`, { name: 'other', expiresInDays: 30 });
    await person.json('POST', `/api/workspaces/${person.workspaceId}/keys/${other.body.data.id}/revoke`);
    const requests = await eventually(() => received(url), (all) => all.length === 2);
    const revoked = JSON.parse(requests[1]!.body);
    // The key as it was: revoked now, and made to expire.
    expect(revoked).toMatchObject({ type: 'key.revoked', data: { key: { id: other.body.data.id, revokedAt: expect.any(String), expiresAt: other.body.data.expiresAt } } });
    // Revoking it again changes nothing and says nothing: an event is queued on the endpoint before the
    // revocation is answered, and once what is queued is delivered nothing more is to come.
    await person.json('POST', `/api/workspaces/${person.workspaceId}/keys/${other.body.data.id}/revoke`);
    const settled = await eventually(() => deliveries(apiKey, endpoint.id), (all) => all.every((delivery) => delivery.state !== 'pending'));
    expect(settled.map((delivery) => [delivery.type, delivery.state])).toEqual([
      ['key.revoked', 'delivered'],
      ['ping', 'delivered'],
    ]);
    expect(await received(url)).toHaveLength(2);
  });

  it('retries a receiver that fails twice (within 10 s, then within a minute) and it gets the event exactly once more', async () => {
    const account = await provision();
    const url = receiverUrl('fail-2');
    const endpoint = (await create(account, { url, events: ['key.created'] })).body.data;
    let now = Date.now();
    clock.now = () => now;

    const first = (await json(await hooks(account.key, 'POST', `/${endpoint.id}/test`))).data;
    expect(first).toMatchObject({ state: 'pending', attempts: [expect.objectContaining({ attempt: 1, status: 503 })] });
    const firstRetryIn = Date.parse(first.nextAttemptAt) - Date.parse(first.attempts[0].at);
    expect(firstRetryIn).toBeGreaterThanOrEqual(RETRY_DELAYS_MS[0]!);
    expect(firstRetryIn).toBeLessThanOrEqual(10_000);

    // Not due yet: the alarm sends nothing.
    now += 1_000;
    await runDurableObjectAlarm(sender(endpoint.id));
    expect(await received(url)).toHaveLength(1);

    now = Date.parse(first.nextAttemptAt);
    await runDurableObjectAlarm(sender(endpoint.id));
    const [second] = await deliveries(account.key, endpoint.id);
    expect(second!.attempts.map((attempt) => attempt.status)).toEqual([503, 503]);
    const secondRetryIn = Date.parse(second!.nextAttemptAt!) - Date.parse(second!.attempts[1]!.at);
    expect(secondRetryIn).toBeGreaterThan(firstRetryIn);
    expect(secondRetryIn).toBeLessThanOrEqual(60_000);

    now = Date.parse(second!.nextAttemptAt!);
    await runDurableObjectAlarm(sender(endpoint.id));
    // A day later nothing more is sent: the delivery is done.
    now += 2 * 24 * 3_600_000;
    await runDurableObjectAlarm(sender(endpoint.id));

    const requests = await received(url);
    expect(requests.map((request) => request.answered)).toEqual([503, 503, 204]);
    expect(new Set(requests.map((request) => request.headers['webhook-id']))).toEqual(new Set([first.id]));
    // Each attempt is signed at its own time.
    expect(new Set(requests.map((request) => request.headers['webhook-timestamp'])).size).toBe(3);
    const [done] = await deliveries(account.key, endpoint.id);
    expect(done).toMatchObject({ id: first.id, state: 'delivered', nextAttemptAt: null });
    expect(done!.attempts.map((attempt) => attempt.status)).toEqual([503, 503, 204]);
  });

  it('gives up after the last retry, about a day later, and marks the delivery failed', async () => {
    const account = await provision();
    const url = receiverUrl('fail-99');
    const endpoint = (await create(account, { url, events: ['key.created'] })).body.data;
    const start = Date.now();
    let now = start;
    clock.now = () => now;
    await hooks(account.key, 'POST', `/${endpoint.id}/test`);
    for (let retry = 0; retry < RETRY_DELAYS_MS.length; retry++) {
      const [pending] = await deliveries(account.key, endpoint.id);
      now = Date.parse(pending!.nextAttemptAt!);
      await runDurableObjectAlarm(sender(endpoint.id));
    }
    const [failed] = await deliveries(account.key, endpoint.id);
    expect(failed).toMatchObject({ state: 'failed', nextAttemptAt: null, reason: expect.stringContaining('8 attempts') });
    expect(failed!.attempts).toHaveLength(8);
    const span = Date.parse(failed!.attempts.at(-1)!.at) - start;
    expect(span).toBeGreaterThan(24 * 3_600_000);
    expect(span).toBeLessThan(30 * 3_600_000);
    expect(await received(url)).toHaveLength(8);
  });

  it('counts events against the monthly cap: the test call answers 402 PLAN_LIMIT_REACHED, and an event past it is recorded as skipped', async () => {
    const account = await provision();
    expect((await ops('PUT', `/organizations/${account.organizationId}/plan`, { plan: 'payg', caps: { webhookEvents: 2 } })).status).toBe(200);
    const url = receiverUrl('ok');
    const endpoint = (await create(account, { url, events: ['key.created'] })).body.data;

    expect((await hooks(account.key, 'POST', `/${endpoint.id}/test`)).status).toBe(200);
    await ops('POST', '/keys', { workspaceId: account.workspaceId, scope: 'workspace', name: 'second event' });
    await eventually(() => received(url), (requests) => requests.length === 2);

    const refused = await hooks(account.key, 'POST', `/${endpoint.id}/test`);
    expect(refused.status).toBe(402);
    const error = (await json(refused)).error;
    expect(error.code).toBe('PLAN_LIMIT_REACHED');
    expect(error.message).toContain('2 of 2');

    await ops('POST', '/keys', { workspaceId: account.workspaceId, scope: 'workspace', name: 'past the cap' });
    const [skipped] = await eventually(() => deliveries(account.key, endpoint.id), (all) => all.length === 3);
    expect(skipped).toMatchObject({ type: 'key.created', state: 'skipped', reason: expect.stringContaining('PLAN_LIMIT_REACHED'), attempts: [] });
    expect(await received(url)).toHaveLength(2);

    // Raising the cap makes room again.
    await ops('PUT', `/organizations/${account.organizationId}/plan`, { plan: 'payg', caps: { webhookEvents: 3 } });
    expect((await hooks(account.key, 'POST', `/${endpoint.id}/test`)).status).toBe(200);
  });

  it('sends credits.low once when the balance falls below the threshold, and credits.exhausted once when it runs out', async () => {
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 3 });
    const url = receiverUrl('ok');
    const endpoint = (await create(account, { url, events: ['credits.low', 'credits.exhausted'], creditsLowThresholdCents: 3 })).body.data;
    // A second workspace of the same organization hears of its credits too.
    const sibling = await ops('POST', '/workspaces', { organizationId: account.organizationId, name: 'Sibling' });
    const siblingKey = await ops('POST', '/keys', { workspaceId: sibling.body.data.id, scope: 'workspace', name: 'sibling' });
    const siblingUrl = receiverUrl('ok');
    await create({ ...account, key: siblingKey.body.data.key }, { url: siblingUrl, events: ['credits.low'], creditsLowThresholdCents: 1 });

    const types = async (at: string) => (await received(at)).map((request) => JSON.parse(request.body));
    expect((await json(await companyByDomain(account.key, 'stripe.com'))).success).toBe(true);
    const low = await eventually(() => types(url), (events) => events.length > 0);
    expect(low).toEqual([expect.objectContaining({ type: 'credits.low', data: expect.objectContaining({ organizationId: account.organizationId, availableCents: 2, thresholdCents: 3 }) })]);

    await companyByDomain(account.key, 'stripe.com');
    await companyByDomain(account.key, 'stripe.com');
    const refused = await companyByDomain(account.key, 'stripe.com');
    expect(refused.status).toBe(402);
    const events = await eventually(() => types(url), (all) => all.some((event) => event.type === 'credits.exhausted'));
    // Nothing more is to come: every report has reached the wallet (the refused call's too), the wallet has
    // said what its balance calls for, and a further alarm of its own says nothing; then what is queued is delivered.
    await gateOf(env, account.workspaceId).flush();
    await walletSaidAll(account.organizationId);
    await runInDurableObject(walletOf(env, account.organizationId), (wallet) => (wallet as unknown as OrgWallet).alarm());
    const settled = await eventually(() => deliveries(account.key, endpoint.id), (all) => all.every((delivery) => delivery.state !== 'pending'));
    expect(settled.map((delivery) => [delivery.type, delivery.state])).toEqual([
      ['credits.exhausted', 'delivered'],
      ['credits.low', 'delivered'],
    ]);
    expect((await types(url)).map((event) => event.type)).toEqual(['credits.low', 'credits.exhausted']);
    expect(events.at(-1).data).toMatchObject({ availableCents: 0 });
    expect((await types(siblingUrl)).map((event) => [event.type, event.data.thresholdCents])).toEqual([['credits.low', 1]]);
  }, 20_000);

  it("does not send credits.exhausted for a success's settle asked again and refused for money: that call was charged", async () => {
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 10 });
    const url = receiverUrl('ok');
    const endpoint = (await create(account, { url, events: ['credits.exhausted'] })).body.data;
    const wallet = walletOf(env, account.organizationId);
    // A gate's messages as pipeline.ts's settle leads to them: the call's charge handed on, then, its answer lost,
    // the settle asked again, which finds no hold, asks for the money anew and is refused: a 402 row under the same id.
    const workspaceId = `ws_repeat_${crypto.randomUUID()}`;
    const row = (id: string, status: number, costUnits: number) => ({
      id, requestId: `req_${id}`, organizationId: account.organizationId, workspaceId, keyId: 'key_repeat', operation: 'test.op',
      status, errorCode: status === 402 ? 'INSUFFICIENT_CREDITS' : null, costUnits, cached: false, latencyMs: 1, createdAt: new Date().toISOString(),
    });
    const message = (seq: number, charges: Charge[], needUnits = 0): SyncMessage => ({
      seq, generation: 0, charges, giveBack: { subscriptionUnits: 0, purchasedUnits: 0 }, needUnits, targetUnits: needUnits, keyUses: [],
    });
    const charged = `use_${crypto.randomUUID()}`;
    const nineCents = unitsFromCents(9);
    await wallet.sync(workspaceId, message(1, [], nineCents));
    await wallet.sync(workspaceId, message(2, [{ id: charged, generation: 0, subscriptionUnits: 0, purchasedUnits: nineCents, usage: row(charged, 200, nineCents) }]));
    await wallet.sync(workspaceId, message(3, [{ id: charged, generation: 0, subscriptionUnits: 0, purchasedUnits: 0, usage: row(charged, 402, 0) }]));
    await runInDurableObject(wallet, (instance) => (instance as unknown as OrgWallet).alarm());
    await walletSaidAll(account.organizationId);
    expect(await deliveries(account.key, endpoint.id)).toEqual([]);

    // A call refused under an id never charged is one, with the same cent left.
    const refused = `use_${crypto.randomUUID()}`;
    await wallet.sync(workspaceId, message(4, [{ id: refused, generation: 0, subscriptionUnits: 0, purchasedUnits: 0, usage: row(refused, 402, 0) }]));
    await runInDurableObject(wallet, (instance) => (instance as unknown as OrgWallet).alarm());
    const exhausted = await eventually(() => deliveries(account.key, endpoint.id), (all) => all.length > 0);
    expect(exhausted.map((delivery) => delivery.type)).toEqual(['credits.exhausted']);
    expect((await eventually(() => received(url), (all) => all.length > 0)).map((request) => JSON.parse(request.body).data.availableCents)).toEqual([1]);
  });

  it("does not send credits.exhausted for a call refused by its key's own monthly limit: the balance did not stop it", async () => {
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 100 });
    const url = receiverUrl('ok');
    const endpoint = (await create(account, { url, events: ['credits.exhausted'] })).body.data;
    expect((await ops('PUT', `/keys/${account.keyId}/limit`, { monthlyLimitCents: 1 })).status).toBe(200);
    expect((await companyByDomain(account.key, 'stripe.com')).status).toBe(200);
    const refused = await companyByDomain(account.key, 'example.com');
    expect(refused.status).toBe(402);
    expect((await json(refused)).error.message).toContain('its own monthly spend limit');
    // Every report has reached the wallet (the refusal's too), and the wallet has said what its balance calls for.
    await gateOf(env, account.workspaceId).flush();
    await runInDurableObject(walletOf(env, account.organizationId), (wallet) => (wallet as unknown as OrgWallet).alarm());
    await walletSaidAll(account.organizationId);
    expect(await deliveries(account.key, endpoint.id)).toEqual([]);
  });

  it('reads who hears of its credits once, not at each alarm: told of an endpoint the API adds at once, and of any other within CREDIT_AUDIENCE_FRESH_MS', async () => {
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 10 });
    await create(account, { url: receiverUrl('ok'), events: ['credits.low'], creditsLowThresholdCents: 5 });
    const spend = async () => {
      expect((await companyByDomain(account.key, 'stripe.com')).status).toBe(200);
      await gateOf(env, account.workspaceId).flush();
      await runInDurableObject(walletOf(env, account.organizationId), (wallet) => (wallet as unknown as OrgWallet).alarm());
      await walletSaidAll(account.organizationId);
    };
    await spend(); // 10 → 9 cents: the wallet reads who hears of its credits (5 cents).
    // An endpoint written around the API, which the wallet is not told of: its fall from 9 to 8 goes unsaid.
    const unseenId = `we_${crypto.randomUUID().replace(/-/g, '').slice(0, 24)}`;
    await env.DB.prepare(
      `INSERT INTO webhook_endpoints (id, workspace_id, url, events, credits_low_threshold_cents, secret_ciphertext, created_at, updated_at)
       VALUES (?, ?, 'https://hooks.example.com/unseen', '["credits.low"]', 9, 'x', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`,
    ).bind(unseenId, account.workspaceId).run();
    await spend();
    expect(await deliveries(account.key, unseenId)).toEqual([]);

    // One the API adds is heard of at the next fall: 8 → 7 cents.
    const added = (await create(account, { url: receiverUrl('ok'), events: ['credits.low'], creditsLowThresholdCents: 8 })).body.data;
    await spend();
    expect((await eventually(() => deliveries(account.key, added.id), (all) => all.length > 0)).map((delivery) => delivery.type)).toEqual(['credits.low']);
    expect(await deliveries(account.key, unseenId)).toEqual([]);

    // Past CREDIT_AUDIENCE_FRESH_MS the wallet reads again, and the endpoint it was not told of hears of 7 → 6.
    await env.DB.prepare('UPDATE webhook_endpoints SET credits_low_threshold_cents = 7 WHERE id = ?').bind(unseenId).run();
    const later = realNow() + CREDIT_AUDIENCE_FRESH_MS + 1_000;
    clock.now = () => later;
    await spend();
    clock.now = realNow;
    expect((await eventually(() => deliveries(account.key, unseenId), (all) => all.length > 0)).map((delivery) => delivery.type)).toEqual(['credits.low']);
  });

  it("gives a fall after a rise ids of its own, even when the alarm that told of the fall before stopped before noting it", async () => {
    const organizationId = `org_watch_${crypto.randomUUID()}`;
    await runInDurableObject(walletOf(env, organizationId), (_wallet, state) => {
      const watch = new CreditWatch(state.storage.sql);
      const balance = (cents: number) => ({ subscriptionUnits: 0, purchasedUnits: unitsFromCents(cents) });
      watch.beforeCharges(organizationId, unitsFromCents(10));
      // 10 → 4 cents: told to some endpoints, and the alarm stopped before `reported`.
      const first = watch.movement(balance(4))!;
      // A top-up before its retry: the retry finds no fall (14 cents), only a rise.
      expect(watch.movement(balance(14))).toBeNull();
      watch.reported(unitsFromCents(14), null);
      // 14 → 4 again: a fall of its own, which the endpoints told of the first must hear of too.
      const second = watch.movement(balance(4))!;
      expect([first.fromUnits, second.fromUnits]).toEqual([unitsFromCents(10), unitsFromCents(14)]);
      expect(second.seq).not.toBe(first.seq);
    });
  });

  it('says a fall once to each endpoint when its alarm runs again before it could note what it said (stopped partway)', async () => {
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 3 });
    const endpoints: { id: string }[] = [];
    for (const events of [['credits.low', 'credits.exhausted'], ['credits.low']]) {
      endpoints.push((await create(account, { url: receiverUrl('ok'), events, creditsLowThresholdCents: 3 })).body.data);
    }
    expect((await companyByDomain(account.key, 'stripe.com')).status).toBe(200);
    await gateOf(env, account.workspaceId).flush();
    await runInDurableObject(walletOf(env, account.organizationId), async (instance, state) => {
      const wallet = instance as unknown as OrgWallet;
      const watch = () => state.storage.sql.exec<Record<string, SqlStorageValue>>('SELECT * FROM credit_watch').one();
      const before = watch();
      // The fall from 3 cents to 2 is still to be said (the wallet's own alarm has not run yet).
      expect(before.reported_units).toBe(unitsFromCents(3));
      await wallet.alarm();
      // As if the alarm had stopped after telling the endpoints and before noting it: it runs again from the same watch.
      state.storage.sql.exec('UPDATE credit_watch SET reported_units = ?, exhausted = ?, refused = ?, said = ?', before.reported_units, before.exhausted, before.refused, before.said);
      await wallet.alarm();
    });
    for (const endpoint of endpoints) {
      const all = await eventually(() => deliveries(account.key, endpoint.id), (list) => list.length > 0 && list.every((delivery) => delivery.state !== 'pending'));
      expect(all.map((delivery) => [delivery.type, delivery.state])).toEqual([['credits.low', 'delivered']]);
    }
    expect(await webhookEventsUsed(env.DB, account.organizationId)).toBe(2);

    // The next fall is a movement of its own: told again, under a new id.
    await credit(account.organizationId, { purchasedCents: 4 });
    await runInDurableObject(walletOf(env, account.organizationId), (wallet) => (wallet as unknown as OrgWallet).alarm());
    for (let cents = 6; cents > 2; cents--) expect((await companyByDomain(account.key, 'stripe.com')).status).toBe(200);
    await gateOf(env, account.workspaceId).flush();
    await runInDurableObject(walletOf(env, account.organizationId), (wallet) => (wallet as unknown as OrgWallet).alarm());
    const again = await eventually(() => deliveries(account.key, endpoints[1]!.id), (list) => list.length > 1);
    expect(again.map((delivery) => delivery.type)).toEqual(['credits.low', 'credits.low']);
    expect(new Set(again.map((delivery) => delivery.id)).size).toBe(2);
  });

  it('sends usage.daily with the previous UTC day, by way of its queue', async () => {
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 5 });
    const url = receiverUrl('ok');
    const endpoint = (await create(account, { url, events: ['usage.daily'] })).body.data;
    const today = new Date().toISOString().slice(0, 10);
    await companyByDomain(account.key, 'stripe.com');
    await eventually(
      () => env.DB.prepare('SELECT COUNT(*) AS n FROM usage WHERE workspace_id = ?').bind(account.workspaceId).first<{ n: number }>(),
      (row) => row!.n === 1,
    );

    clock.now = () => Date.parse(`${today}T00:00:00Z`) + 24 * 3_600_000 + 5 * 60_000;
    // The cron and the pages on a queue that keeps their messages: on the real one, the prunes it carries on and
    // the reports of every subscriber in this workerd's database would run into the files after this one.
    const { sent, bindings } = keptNightly();
    const context = createExecutionContext();
    await worker.scheduled(createScheduledController({ scheduledTime: clock.now(), cron: '5 0 * * *' }), bindings, context);
    await waitOnExecutionContext(context);
    const ours = (message: NightlyMessage) => message.kind === 'usage.daily' && message.workspaceId === account.workspaceId;
    for (let page = sent.find((message) => message.kind === 'usage.daily page'); page && !sent.some(ours); page = sent.find((message) => message.kind === 'usage.daily page')) {
      sent.splice(sent.indexOf(page), 1);
      await handToConsumer(bindings, [page]);
    }
    // This workspace's report on the real queue: Miniflare hands it to the worker's consumer (max_batch_timeout 1 s).
    await env.NIGHTLY.send(sent.find(ours)!);
    const settled = await eventually(() => deliveries(account.key, endpoint.id), (all) => all.length > 0 && all.every((delivery) => delivery.state !== 'pending'), 1_000);
    expect(settled.map((delivery) => [delivery.type, delivery.state])).toEqual([['usage.daily', 'delivered']]);
    const [report] = await received(url);
    expect(JSON.parse(report!.body)).toMatchObject({
      type: 'usage.daily',
      data: { workspaceId: account.workspaceId, day: today, totals: { calls: 1, succeeded: 1, failed: 0, costCents: 1 }, byOperation: [expect.objectContaining({ operation: 'linkedin.get-company-by-domain', calls: 1 })] },
    });
  }, 30_000);
});

/**
 * An organization of its own (`org_<prefix>`), and what adds workspaces to it in one batch: `count` of them, numbered
 * from `from` after `prefix` (so they sort together), each with one endpoint that wants `events` (a JSON array).
 */
async function seededOrganization(prefix: string, name: string) {
  const organizationId = `org_${prefix}`;
  await env.DB.prepare("INSERT INTO organizations (id, name, created_at) VALUES (?, ?, '2031-01-01T00:00:00.000Z')").bind(organizationId, name).run();
  return (count: number, from: number, events: string) =>
    env.DB.batch([
      env.DB.prepare(
        `WITH RECURSIVE n(i) AS (SELECT ?2 UNION ALL SELECT i + 1 FROM n WHERE i < ?2 + ?1 - 1)
         INSERT INTO workspaces (id, organization_id, name, created_at) SELECT ?3 || printf('%05d', i), ?4, 'W', '2031-01-01T00:00:00.000Z' FROM n`,
      ).bind(count, from, prefix, organizationId),
      env.DB.prepare(
        `WITH RECURSIVE n(i) AS (SELECT ?2 UNION ALL SELECT i + 1 FROM n WHERE i < ?2 + ?1 - 1)
         INSERT INTO webhook_endpoints (id, workspace_id, url, events, credits_low_threshold_cents, secret_ciphertext, created_at, updated_at)
         SELECT 'whe_' || ?3 || i, ?3 || printf('%05d', i), 'https://hooks.example.com', ?4, 100, 'x', '2031-01-01T00:00:00.000Z', '2031-01-01T00:00:00.000Z' FROM n`,
      ).bind(count, from, prefix, events),
    ]);
}

describe('usage.daily over its queue', () => {
  it('reads a page of its subscribers, however many endpoints between them want other events', async () => {
    const prefix = `ws_zz_sparse_${crypto.randomUUID().slice(0, 8)}_`;
    const seed = await seededOrganization(prefix, 'Sparse');
    // 2,000 workspaces whose endpoints want other events, and 10 after them that want usage.daily.
    await seed(2_000, 0, '["key.created","credits.low"]');
    await seed(10, 5_000, '["usage.daily"]');
    const { sent, bindings } = keptNightly();
    const { rows } = await rowsReadBy((db) => sendDailyUsagePage({ ...bindings, DB: db }, '2031-03-01', prefix));
    const ours = sent.flatMap((message) => (message.kind === 'usage.daily' && message.workspaceId.startsWith(prefix) ? [message.workspaceId] : []));
    expect(ours).toHaveLength(10);
    expect(rows).toBeLessThan(WORKSPACES_PER_PAGE + 50);
  });

  it('starts with one message whatever the number of subscribers; each page sends its workspaces one report message each and the next page', async () => {
    // 1,234 workspaces subscribed to usage.daily, 300 whose endpoints want other events.
    const prefix = `ws_daily_${crypto.randomUUID().slice(0, 8)}_`;
    const seed = await seededOrganization(prefix, 'Daily');
    await seed(1_234, 0, '["usage.daily"]');
    await seed(300, 5_000, '["key.created","credits.low"]');

    const { sent, bindings } = keptNightly();
    clock.now = () => Date.parse('2031-03-02T00:05:00.000Z');
    const context = createExecutionContext();
    await worker.scheduled(createScheduledController({ scheduledTime: clock.now(), cron: '5 0 * * *' }), bindings, context);
    await waitOnExecutionContext(context);
    expect(sent).toEqual([{ kind: 'usage.daily page', day: '2031-03-01', after: '' }]);

    const reports: string[] = [];
    let pages = 0;
    for (let page = sent.shift(); page; page = sent.shift()) {
      pages += 1;
      const result = await handToConsumer(bindings, [page]);
      expect(result.explicitAcks).toEqual(['msg_0']);
      const pageReports = sent.filter((message) => message.kind === 'usage.daily');
      expect(pageReports.length).toBeLessThanOrEqual(WORKSPACES_PER_PAGE);
      expect(pageReports.every((message) => message.day === '2031-03-01')).toBe(true);
      reports.push(...pageReports.map((message) => (message as { workspaceId: string }).workspaceId));
      const next = sent.filter((message) => message.kind === 'usage.daily page');
      sent.length = 0;
      sent.push(...next);
      expect(next.length).toBeLessThanOrEqual(1);
    }
    const ours = reports.filter((workspaceId) => workspaceId.startsWith(prefix));
    expect(ours).toHaveLength(1_234);
    expect(new Set(ours).size).toBe(1_234);
    expect(ours.every((workspaceId) => Number(workspaceId.slice(prefix.length)) < 5_000)).toBe(true);
    // Other files' subscribers share this database: every subscriber is reached once, WORKSPACES_PER_PAGE a page.
    expect(new Set(reports).size).toBe(reports.length);
    expect(pages).toBe(Math.floor(reports.length / WORKSPACES_PER_PAGE) + 1);
  }, 30_000);

  it("retries a workspace's report that failed on its own, and a report handed over twice is sent once", async () => {
    const [failing, passing] = [await provision(), await provision()];
    const [failingUrl, passingUrl] = [receiverUrl('ok'), receiverUrl('ok')];
    const failingEndpoint = (await create(failing, { url: failingUrl, events: ['usage.daily'] })).body.data;
    const passingEndpoint = (await create(passing, { url: passingUrl, events: ['usage.daily'] })).body.data;
    // The failing workspace's endpoint cannot be reached: its sender's stub throws.
    const senders = env.WEBHOOK_SENDER;
    const unreachable = senders.idFromName(failingEndpoint.id);
    const bindings = {
      ...env,
      WEBHOOK_SENDER: {
        idFromName: (name: string) => senders.idFromName(name),
        get: (id: DurableObjectId) => {
          if (id.equals(unreachable)) throw new Error('Network connection lost.');
          return senders.get(id);
        },
      } as unknown as typeof env.WEBHOOK_SENDER,
    };
    const day = '2031-03-01';
    const result = await handToConsumer(bindings, [{ kind: 'usage.daily', day, workspaceId: failing.workspaceId }, { kind: 'usage.daily', day, workspaceId: passing.workspaceId }]);
    expect(result.explicitAcks).toEqual(['msg_1']);
    expect(result.retryMessages.map((message: { msgId: string }) => message.msgId)).toEqual(['msg_0']);
    const passed = await eventually(() => deliveries(passing.key, passingEndpoint.id), (all) => all.length > 0 && all.every((delivery) => delivery.state !== 'pending'));
    expect(passed.map((delivery) => [delivery.type, delivery.state])).toEqual([['usage.daily', 'delivered']]);
    expect(await deliveries(failing.key, failingEndpoint.id)).toEqual([]);

    // Its next attempt reaches it; the same report handed over again (a page sent twice, a cron run twice) adds nothing.
    expect((await handToConsumer(env, [{ kind: 'usage.daily', day, workspaceId: failing.workspaceId }], 2)).explicitAcks).toEqual(['msg_0']);
    expect((await handToConsumer(env, [{ kind: 'usage.daily', day, workspaceId: failing.workspaceId }, { kind: 'usage.daily', day, workspaceId: passing.workspaceId }])).explicitAcks).toEqual(['msg_0', 'msg_1']);
    const settled = await eventually(() => deliveries(failing.key, failingEndpoint.id), (all) => all.length > 0 && all.every((delivery) => delivery.state !== 'pending'));
    expect(settled.map((delivery) => [delivery.type, delivery.state])).toEqual([['usage.daily', 'delivered']]);
    expect((await deliveries(passing.key, passingEndpoint.id)).map((delivery) => delivery.type)).toEqual(['usage.daily']);
    expect((await received(failingUrl)).map((request) => JSON.parse(request.body).data.day)).toEqual([day]);
    expect(await received(passingUrl)).toHaveLength(1);
    // Each counts once against its organization's monthly cap of webhook events, however often it was handed over.
    expect([await webhookEventsUsed(env.DB, failing.organizationId), await webhookEventsUsed(env.DB, passing.organizationId)]).toEqual([1, 1]);
  });
});

describe('the dashboard Webhooks page and its API', () => {
  it('adds an endpoint (secret shown once), lists it with its deliveries, sends a test, rotates its secret, and removes it', async () => {
    const stranger = () => signUp();
    const owner = await signUp();
    await ops('PUT', `/organizations/${owner.organizationId}/plan`, { plan: 'payg' });
    const base = `/api/workspaces/${owner.workspaceId}/webhook-endpoints`;
    const url = receiverUrl('ok');

    const refused = await owner.json('POST', base, { url: 'http://192.168.1.1/hook', events: ['key.created'] });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual([expect.objectContaining({ field: 'url' })]);

    const created = await owner.json('POST', base, { url, events: ['key.created', 'key.revoked'] });
    expect(created.status).toBe(201);
    expect(created.body.data.secret).toMatch(/^whsec_/);
    const tested = await owner.json('POST', `${base}/${created.body.data.id}/test`);
    expect(tested.body.data).toMatchObject({ type: 'ping', state: 'delivered' });

    const page = await owner.request('GET', `/w/${owner.workspaceId}/webhooks`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(url);
    expect(html).toContain(tested.body.data.id);
    expect(html).not.toContain(created.body.data.secret);
    expect(html).toContain(`${base}/${created.body.data.id}/rotate-secret`);

    // Rotated from the page: the new secret is answered once, and the page says until when the old one signs too.
    const rotated = await owner.json('POST', `${base}/${created.body.data.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.secret).toMatch(/^whsec_/);
    const after = await (await owner.request('GET', `/w/${owner.workspaceId}/webhooks`)).text();
    expect(after).toContain('the replaced secret signs too until');
    expect(after).not.toContain(rotated.body.data.secret);
    expect((await (await stranger()).json('POST', `/api/workspaces/${owner.workspaceId}/webhook-endpoints/${created.body.data.id}/rotate-secret`)).status).toBe(404);
    const member = await signUp();
    await join(member, owner.organizationId, 'member');
    expect((await member.json('POST', `${base}/${created.body.data.id}/rotate-secret`)).status).toBe(403);

    const deliveriesAnswer = await owner.json('GET', `${base}/${created.body.data.id}/deliveries`);
    expect(deliveriesAnswer.body.data.deliveries.map((delivery: { id: string }) => delivery.id)).toEqual([tested.body.data.id]);
    const outsider = await stranger();
    expect((await outsider.json('GET', `/api/workspaces/${outsider.workspaceId}/webhook-endpoints/${created.body.data.id}/deliveries`)).status).toBe(404);

    expect((await owner.json('DELETE', `${base}/${created.body.data.id}`)).status).toBe(200);
    expect((await owner.json('GET', base)).body.data.endpoints).toEqual([]);
  });
});

describe("a webhook endpoint's deliveries", () => {
  it('cost an event and the list the same rows whatever waits for an endpoint that is down, and are pruned to the newest finished', async () => {
    const endpointId = `whe_rows_${crypto.randomUUID()}`;
    await runInDurableObject(sender(endpointId), (instance, state) => {
      const { sql } = state.storage;
      const outbox = instance as unknown as {
        enqueue(endpointId: string, event: WebhookEvent): void;
        skip(endpointId: string, event: WebhookEvent, reason: string): void;
        deliveries(limit?: number): unknown[];
      };
      const rowsReadWhile = (run: () => void) => objectRowsReadWhile(sql, run);
      const event = (n: string): WebhookEvent => ({ id: `evt_${n}`, type: 'job.completed', timestamp: new Date().toISOString(), data: {} });
      // 300 skipped events (finished: 200 are kept), then one more event queued: what an event costs with few waiting.
      for (let n = 0; n < 300; n++) outbox.skip(endpointId, event(`skipped${n}`), 'over the cap');
      const few = rowsReadWhile(() => outbox.enqueue(endpointId, event('first')));
      // An endpoint down: 2,000 events wait for their retries.
      for (let n = 0; n < 2_000; n++) outbox.enqueue(endpointId, event(`waiting${n}`));
      const many = rowsReadWhile(() => outbox.enqueue(endpointId, event('last')));
      expect(many).toBeLessThanOrEqual(few + 5);
      // The list the dashboard shows, the newest 25 and their attempts: not every delivery sorted.
      expect(rowsReadWhile(() => expect(outbox.deliveries()).toHaveLength(25))).toBeLessThan(100);
      const kept = sql.exec<{ state: string; n: number }>('SELECT state, COUNT(*) AS n FROM deliveries GROUP BY state ORDER BY state').toArray();
      expect(kept).toEqual([
        { state: 'pending', n: 2_002 },
        { state: 'skipped', n: 200 },
      ]);
    });
  });
});

describe('an event no endpoint may lose', () => {
  /** The bindings as they are, but the sender of `endpointId` unreachable for the next `times` calls. */
  function unreachableSender(endpointId: string, times = Infinity) {
    const broken = env.WEBHOOK_SENDER.idFromName(endpointId);
    let left = times;
    const namespace = {
      idFromName: (name: string) => env.WEBHOOK_SENDER.idFromName(name),
      get: (id: DurableObjectId) =>
        id.equals(broken) && left-- > 0
          ? { has: () => Promise.reject(new Error('the sender could not be reached')) }
          : env.WEBHOOK_SENDER.get(id),
    };
    return { ...env, WEBHOOK_SENDER: namespace } as unknown as Env;
  }

  async function twoEndpoints(events: string[]) {
    const account = await provision();
    const urls = [receiverUrl('ok'), receiverUrl('ok')];
    const ids: string[] = [];
    for (const url of urls) ids.push((await create(account, { url, events })).body.data.id);
    return { account, urls, ids };
  }

  it("reaches every other endpoint when one's sender fails, fails the job's finishing step, and its retry reaches only the one missed", async () => {
    const { account, urls, ids } = await twoEndpoints(['job.completed']);
    const job = { id: `job_${crypto.randomUUID().replaceAll('-', '')}`, workspaceId: account.workspaceId, operation: 'get-company-by-domain', name: null, status: 'succeeded', reason: null, items: 1, succeeded: 1, failed: 0, spentUnits: 0, quotedUnits: 0, maxCostUnits: null, connectionId: null, intoDatabaseId: null, intoTable: null, resumeAt: 0, waitingOn: null, createdAt: new Date().toISOString(), startedAt: null, finishedAt: new Date().toISOString(), resultsPrunedAt: null } as unknown as JobRecord;

    await expect(announceJobEnd(unreachableSender(ids[0]!), job)).rejects.toThrow('job.completed reached 1 of 2 endpoints');
    expect(await eventually(() => received(urls[1]!), (all) => all.length === 1)).toHaveLength(1);
    expect(await received(urls[0]!)).toEqual([]);

    await announceJobEnd(env as unknown as Env, job);
    const first = await eventually(() => received(urls[0]!), (all) => all.length === 1);
    expect(JSON.parse(first[0]!.body)).toMatchObject({ type: 'job.completed', data: { job: { id: job.id } } });
    expect(first[0]!.headers['webhook-id']).toBe(`evt_${job.id.slice('job_'.length)}`);
    await eventually(() => deliveries(account.key, ids[0]!), (all) => all.every((delivery) => delivery.state !== 'pending'));
    expect(await received(urls[1]!)).toHaveLength(1);
  });

  it('tries a key event again at once, reaching the endpoint the first try missed and the other only once', async () => {
    const { account, urls, ids } = await twoEndpoints(['key.created']);
    const key = { id: `key_${crypto.randomUUID()}`, workspaceId: account.workspaceId, name: 'k', scope: 'workspace', hint: 'sluice_live_…abcd', createdAt: new Date().toISOString(), revokedAt: null, expiresAt: null } as unknown as ApiKeyRecord;
    await announceKey(unreachableSender(ids[0]!, 1), 'key.created', key);
    for (const url of urls) expect(await eventually(() => received(url), (all) => all.length === 1)).toHaveLength(1);
    await eventually(() => deliveries(account.key, ids[1]!), (all) => all.length > 0 && all.every((delivery) => delivery.state !== 'pending'));
    expect((await received(urls[1]!)).map((request) => JSON.parse(request.body).data.key.id)).toEqual([key.id]);
  });
});

describe("a delivery's first attempt", () => {
  it('has its alarm set before the request leaves, so an object reset while the receiver answers still retries it', async () => {
    const account = await provision();
    const endpoint = (await create(account, { url: receiverUrl('slow-400'), events: ['key.created'] })).body.data;
    const ping: WebhookEvent = { id: `evt_slow_${crypto.randomUUID()}`, type: 'ping', timestamp: new Date().toISOString(), data: {} };
    const alarmWhileWaiting = await runInDurableObject(sender(endpoint.id), async (instance, state) => {
      const sending = (instance as unknown as { sendNow(endpointId: string, event: WebhookEvent): Promise<unknown> }).sendNow(endpoint.id, ping);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const alarm = await state.storage.getAlarm();
      await sending;
      return alarm;
    });
    expect(alarmWhileWaiting).not.toBeNull();
  });
});
