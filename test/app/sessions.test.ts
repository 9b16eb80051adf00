import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { clock } from '../../src/core/clock';
import { sha256Hex } from '../../src/core/digest';
import { ops } from '../support/api';
import { APP_ORIGIN, dashboard, sessionCookie, setCookies, signUp } from '../support/dashboard';
import { interceptedDb, meetingOf } from '../support/intercepted-db';

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

/** What Cloudflare's edge gives every request it forwards; only then is `cf-connecting-ip` believed. */
const THROUGH_THE_EDGE = { colo: 'AMS' };

function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  return dashboard(path, { method: 'POST', headers: { origin: APP_ORIGIN, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), cf: THROUGH_THE_EDGE });
}

function signIn(email: string, password: string, ip = '203.0.113.7') {
  return post('/api/auth/sign-in', { email, password }, { 'cf-connecting-ip': ip });
}

/** Every route of the dashboard's JSON API, from its own OpenAPI document, with ids of the right shape filled in. */
async function documentedRoutes() {
  const document = (await (await dashboard('/api/openapi.json')).json()) as { paths: Record<string, Record<string, { security?: unknown[] }>> };
  const ids: Record<string, string> = { workspaceId: `ws_${'a'.repeat(24)}`, organizationId: `org_${'b'.repeat(24)}`, keyId: `key_${'c'.repeat(24)}`, tokenId: `key_${'d'.repeat(24)}`, agentId: `agt_${'e'.repeat(24)}` };
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path: path.replace(/\{(\w+)\}/g, (_, name: string) => ids[name]!),
      needsSession: !(Array.isArray(operation.security) && operation.security.length === 0),
    })),
  );
}

describe('sign-up', () => {
  it('creates a user, an organization without a plan, a first workspace, and signs in with a safe cookie', async () => {
    const response = await post('/api/auth/sign-up', { email: '  Linus@Example.COM ', password: 'a long enough passphrase', name: 'Linus' }, { 'cf-connecting-ip': '192.0.2.1' });
    expect(response.status).toBe(201);
    const { data } = (await response.json()) as any;
    expect(data.user).toMatchObject({ email: 'linus@example.com', name: 'Linus' });
    expect(data.organization).toMatchObject({ plan: null });
    expect(data.workspace).toMatchObject({ organizationId: data.organization.id, name: 'Default' });
    const cookie = setCookies(response).find((line) => line.startsWith('sluice_session='))!;
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).not.toMatch(/; Secure/);

    const me = await dashboard('/api/me', { headers: { cookie: `sluice_session=${sessionCookie(response)}` } });
    expect(((await me.json()) as any).data.organizations).toEqual([
      expect.objectContaining({ id: data.organization.id, role: 'owner', plan: null, workspaces: [expect.objectContaining({ id: data.workspace.id })] }),
    ]);
  });

  it('stores a slow salted hash of the password and only a hash of the session id', async () => {
    const person = await signUp({ password: 'correct horse battery staple' });
    const user = await env.DB.prepare('SELECT password_hash AS hash FROM users WHERE id = ?').bind(person.account.user.id).first<{ hash: string }>();
    expect(user!.hash).toMatch(/^pbkdf2-sha256-peppered\$100000\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}$/);
    expect(user!.hash).not.toContain('correct horse');
    const sessions = await env.DB.prepare('SELECT id_hash FROM sessions WHERE user_id = ?').bind(person.account.user.id).all<{ id_hash: string }>();
    expect(sessions.results).toEqual([{ id_hash: await sha256Hex(person.cookie) }]);
  });

  it('refuses a second account for the same address, whatever its case, with 409 CONFLICT', async () => {
    const first = await signUp();
    const response = await post('/api/auth/sign-up', { email: first.account.user.email.toUpperCase(), password: 'another long passphrase', name: 'Twin' }, { 'cf-connecting-ip': '192.0.2.2' });
    expect(response.status).toBe(409);
    expect(((await response.json()) as any).error.code).toBe('CONFLICT');
  });

  it('names every bad field with 400 VALIDATION_ERROR and creates nothing', async () => {
    const before = await env.DB.prepare('SELECT COUNT(*) AS n FROM users').first<{ n: number }>();
    const response = await post('/api/auth/sign-up', { email: 'not-an-address', password: 'short', name: '', plan: 'business' }, { 'cf-connecting-ip': '192.0.2.3' });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as any;
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(Object.fromEntries(error.details.map((detail: any) => [detail.field, detail.location]))).toEqual({ email: 'body', password: 'body', name: 'body', plan: 'body' });
    expect(await env.DB.prepare('SELECT COUNT(*) AS n FROM users').first<{ n: number }>()).toEqual(before);
  });

  it('makes the cookie Secure and __Host- prefixed when the dashboard is served over https', async () => {
    const response = await dashboard(
      '/api/auth/sign-up',
      { method: 'POST', headers: { origin: 'https://app.sluice.test', 'content-type': 'application/json', 'cf-connecting-ip': '192.0.2.4' }, body: JSON.stringify({ email: 'secure@example.com', password: 'a long enough passphrase', name: 'S' }), cf: THROUGH_THE_EDGE },
      { APP_URL: 'https://app.sluice.test' },
    );
    expect(response.status).toBe(201);
    expect(setCookies(response).find((line) => line.startsWith('__Host-sluice_session='))).toMatch(/; Secure/);
  });
});

describe('sign-in and sign-out', () => {
  it('answers a wrong password and an unknown address alike: 401 UNAUTHORIZED, same message', async () => {
    const person = await signUp();
    const wrong = await signIn(person.account.user.email, 'not the passphrase', '203.0.113.10');
    const unknown = await signIn('nobody-here@example.com', 'not the passphrase', '203.0.113.10');
    expect([wrong.status, unknown.status]).toEqual([401, 401]);
    const [a, b] = (await Promise.all([wrong.json(), unknown.json()])) as any[];
    expect(a.error).toEqual(b.error);
    expect(a.error.code).toBe('UNAUTHORIZED');
    expect(sessionCookie(wrong)).toBeUndefined();
  });

  it('starts a fresh session on every sign-in and ends the one the browser had (rotation)', async () => {
    const person = await signUp();
    const response = await signIn(person.account.user.email, 'a long enough passphrase', '203.0.113.11');
    expect(response.status).toBe(200);
    const fresh = sessionCookie(response)!;
    expect(fresh).not.toBe(person.cookie);
    // The same browser signing in again: its old session is gone.
    const again = await dashboard('/api/auth/sign-in', {
      method: 'POST',
      headers: { origin: APP_ORIGIN, 'content-type': 'application/json', cookie: `sluice_session=${fresh}`, 'cf-connecting-ip': '203.0.113.11' },
      body: JSON.stringify({ email: person.account.user.email, password: 'a long enough passphrase' }),
      cf: THROUGH_THE_EDGE,
    });
    expect(again.status).toBe(200);
    expect((await dashboard('/api/me', { headers: { cookie: `sluice_session=${fresh}` } })).status).toBe(401);
    expect((await dashboard('/api/me', { headers: { cookie: `sluice_session=${sessionCookie(again)}` } })).status).toBe(200);
  });

  it('signs out: the session ends on the server and the cookie is cleared', async () => {
    const person = await signUp();
    const response = await person.request('POST', '/api/auth/sign-out');
    expect(response.status).toBe(200);
    expect(setCookies(response).join()).toMatch(/sluice_session=;.*Max-Age=0/);
    expect((await person.request('GET', '/api/me')).status).toBe(401);
  });

  it('ends a session 30 days after sign-in', async () => {
    const person = await signUp();
    clock.now = () => realNow() + 29 * 24 * 3600_000;
    expect((await person.request('GET', '/api/me')).status).toBe(200);
    clock.now = () => realNow() + 30 * 24 * 3600_000 + 1000;
    expect((await person.request('GET', '/api/me')).status).toBe(401);
  });

  it('throttles sign-in per address: after five failures even the right password waits, with 429 and Retry-After', async () => {
    const person = await signUp();
    const email = person.account.user.email;
    for (let attempt = 0; attempt < 5; attempt++) expect((await signIn(email, `wrong guess ${attempt}`, `203.0.113.${20 + attempt}`)).status).toBe(401);
    const throttled = await signIn(email, 'a long enough passphrase', '203.0.113.30');
    expect(throttled.status).toBe(429);
    const { error } = (await throttled.json()) as any;
    expect(error.code).toBe('RATE_LIMITED');
    expect(Number(throttled.headers.get('retry-after'))).toBe(error.retryAfter);
    expect(error.retryAfter).toBeGreaterThan(14 * 60);
    // Once the quarter hour has passed, the right password works again.
    clock.now = () => realNow() + 15 * 60_000 + 1000;
    expect((await signIn(email, 'a long enough passphrase', '203.0.113.31')).status).toBe(200);
  });

  it('lets a browser that signed in to the address before sign in while guesses from elsewhere hold the address at 429', async () => {
    const person = await signUp();
    const email = person.account.user.email;
    const deviceOf = (response: Response) => setCookies(response).find((cookie) => cookie.startsWith('sluice_device='))!.split(';')[0]!;
    const first = await signIn(email, 'a long enough passphrase', '203.0.113.70');
    expect(first.status).toBe(200);
    const device = deviceOf(first);
    expect(setCookies(first).find((cookie) => cookie.startsWith('sluice_device='))).toMatch(/HttpOnly/i);
    expect(setCookies(first).find((cookie) => cookie.startsWith('sluice_device='))).toMatch(/SameSite=Strict/i);
    const withCookie = (cookie: string, password: string, ip: string) => post('/api/auth/sign-in', { email, password }, { 'cf-connecting-ip': ip, cookie });

    // Someone else guesses five times: the address's count is full.
    for (let attempt = 0; attempt < 5; attempt++) expect((await signIn(email, `wrong guess ${attempt}`, `203.0.113.${71 + attempt}`)).status).toBe(401);
    expect((await signIn(email, 'a long enough passphrase', '203.0.113.80')).status).toBe(429);
    // The owner's browser still signs in; a cookie of another address's, or one altered, counts for nothing.
    expect((await withCookie(device, 'a long enough passphrase', '203.0.113.81')).status).toBe(200);
    const other = await signUp();
    const othersDevice = deviceOf(await signIn(other.account.user.email, 'a long enough passphrase', '203.0.113.82'));
    expect((await withCookie(othersDevice, 'a long enough passphrase', '203.0.113.83')).status).toBe(429);
    const altered = device.replace(/.$/, (last) => (last === '0' ? '1' : '0'));
    expect((await withCookie(altered, 'a long enough passphrase', '203.0.113.84')).status).toBe(429);
    // The known browser has five guesses of its own, then waits too.
    for (let attempt = 0; attempt < 5; attempt++) expect((await withCookie(device, `wrong again ${attempt}`, '203.0.113.85')).status).toBe(401);
    expect((await withCookie(device, 'a long enough passphrase', '203.0.113.86')).status).toBe(429);
  });

  it('holds five guesses per address when they arrive at once: the rest are 429 before any password is checked, the right one among them', async () => {
    const person = await signUp();
    const email = person.account.user.email;
    const guesses = 12;
    // Each guess's first statement on the address's count waits until all have reached theirs: the worst interleaving.
    const meeting = meetingOf(guesses);
    const db = interceptedDb(
      () => true,
      (bound, values) => (values.includes(`email:${email}`) ? { first: async () => (await meeting.arrive(), bound.first()), run: async () => (await meeting.arrive(), bound.run()) } : {}),
    );
    const guess = (attempt: number, password: string) =>
      dashboard(
        '/api/auth/sign-in',
        { method: 'POST', headers: { origin: APP_ORIGIN, 'content-type': 'application/json', 'cf-connecting-ip': `203.0.113.${40 + attempt}` }, body: JSON.stringify({ email, password }), cf: THROUGH_THE_EDGE },
        { DB: db },
      );
    const wrong = Array.from({ length: guesses - 1 }, (_, attempt) => guess(attempt, `wrong guess ${attempt}`));
    // The right password comes last, once the wrong ones wait: counted after its check, it signed in however many came before.
    await meeting.reached(guesses - 1);
    const right = guess(guesses - 1, 'a long enough passphrase');
    const answers = [...(await Promise.all(wrong)), await right];
    expect(answers.map((answer) => answer.status).sort()).toEqual([...Array(5).fill(401), ...Array(guesses - 5).fill(429)]);
    expect(answers.at(-1)!.status).toBe(429);
    expect((await signIn(email, 'a long enough passphrase', '203.0.113.60')).status).toBe(429);
  });

  it('throttles sign-in per client address across accounts', { timeout: 60_000 }, async () => {
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 31; attempt++) statuses.push((await signIn(`spray${attempt}@example.com`, 'Password123!', '198.18.0.1')).status);
    expect(statuses.slice(0, 30).every((status) => status === 401)).toBe(true);
    expect(statuses[30]).toBe(429);
    // Refused before its email address is counted: a client past its limit files no row per address it tries.
    const counted = await env.DB.prepare('SELECT bucket FROM auth_throttle WHERE bucket IN (?, ?)').bind('email:spray29@example.com', 'email:spray30@example.com').all<{ bucket: string }>();
    expect(counted.results.map((row) => row.bucket)).toEqual(['email:spray29@example.com']);
  });
});

describe('what every route demands', () => {
  it('answers 401 UNAUTHORIZED on every session route without a session', async () => {
    const routes = (await documentedRoutes()).filter((route) => route.needsSession);
    expect(routes.length).toBeGreaterThanOrEqual(10);
    for (const route of routes) {
      const response = await dashboard(route.path, { method: route.method, headers: { origin: APP_ORIGIN, 'content-type': 'application/json' }, body: route.method === 'GET' ? undefined : '{}' });
      expect({ route, status: response.status }).toEqual({ route, status: 401 });
      expect(((await response.json()) as any).error.code).toBe('UNAUTHORIZED');
    }
  });

  it("refuses every state-changing route with 403 when the Origin is not the dashboard's own", async () => {
    const person = await signUp();
    // Stripe's webhook is the one exception: Stripe sends it, and its signature is checked instead.
    const routes = (await documentedRoutes()).filter((route) => route.method !== 'GET' && route.path !== '/api/billing/stripe-webhook');
    for (const route of routes) {
      for (const headers of [{ origin: 'https://evil.example' }, {}, { 'sec-fetch-site': 'cross-site' }] as Record<string, string>[]) {
        const response = await dashboard(route.path, {
          method: route.method,
          headers: { cookie: `sluice_session=${person.cookie}`, 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ name: 'x', email: 'x@example.com', password: 'a long enough passphrase' }),
        });
        expect({ route, headers, status: response.status }).toEqual({ route, headers, status: 403 });
      }
    }
    // The same browser's own pages, whose Origin a privacy setting stripped, still work.
    await ops('PUT', `/organizations/${person.organizationId}/plan`, { plan: 'team' });
    const sameSite = await dashboard(`/api/organizations/${person.organizationId}/workspaces`, {
      method: 'POST',
      headers: { cookie: `sluice_session=${person.cookie}`, 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' },
      body: JSON.stringify({ name: 'Same site' }),
    });
    expect(sameSite.status).toBe(201);
  });

  it('serves its pages with a strict Content-Security-Policy and never in a frame', async () => {
    const response = await dashboard('/signin');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toMatch(/default-src 'none'; script-src 'self'; style-src 'self'/);
    expect(response.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await response.text();
    // Nothing inline for the policy to allow: no inline script or style attribute, only this origin's assets.
    expect(html).not.toMatch(/<script>|<script [^>]*>[^<]|style="/);
    for (const asset of html.matchAll(/(?:href|src)="(\/assets\/[^"]+)"/g)) expect((await dashboard(asset[1]!)).status).toBe(200);
  });

  it('answers an unknown /api route in the envelope (after the session check) and an unknown page with a page', async () => {
    // Like /v1, the API says nothing about which routes exist to someone who is not signed in.
    expect((await dashboard('/api/nothing-here')).status).toBe(401);
    const person = await signUp();
    const api = await person.request('GET', '/api/nothing-here');
    expect(api.status).toBe(404);
    expect(((await api.json()) as any).error.code).toBe('NOT_FOUND');
    const wrongMethod = await dashboard('/api/auth/sign-in');
    expect(wrongMethod.status).toBe(404);
    expect(((await wrongMethod.json()) as any).error.code).toBe('ENDPOINT_NOT_FOUND');
    const page = await dashboard('/nowhere');
    expect(page.status).toBe(404);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
  });
});
