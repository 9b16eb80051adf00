import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { clock } from '../../src/core/clock';
import { PASSWORD_CHANGES_PER_USER, RESET_LIFETIME_MS, RESETS_PER_CLIENT, RESETS_PER_EMAIL } from '../../src/app/password-changes';
import { APP_ORIGIN, dashboard, Person, sessionCookie, setCookies, signUp } from '../support/dashboard';
import { eventually, ops } from '../support/api';
import { FAKE_RECEIVER, type ReceivedRequest } from '../fakes/webhook-receiver';

const HUNTER_KEY = (env as unknown as Record<string, string>).HUNTER_API_KEY!;

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

const PASSWORD = 'a long enough passphrase';
const THROUGH_THE_EDGE = { colo: 'AMS' };
/** A client address of its own for each request (an IPv6 /64, what the throttles count), so no count reaches another test's, in this file or another. */
const freshClient = () => `2001:db8:${crypto.getRandomValues(new Uint16Array(3)).reduce((text, part) => `${text}${part.toString(16)}:`, '')}:1`;

function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  return dashboard(path, { method: 'POST', headers: { origin: APP_ORIGIN, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), cf: THROUGH_THE_EDGE }, { DEV_OUTBOX: '1' });
}
const signIn = (email: string, password: string, headers: Record<string, string> = {}) => post('/api/auth/sign-in', { email, password }, { 'cf-connecting-ip': freshClient(), ...headers });
const askForReset = (email: string, client = freshClient()) => post('/api/auth/password-reset', { email }, { 'cf-connecting-ip': client });
const useReset = (token: string, password: string) => post('/api/auth/password-reset/confirm', { token, password });
const changePassword = (person: Person, currentPassword: string, newPassword: string) => person.json('POST', '/api/me/password', { currentPassword, newPassword }, { bindings: { DEV_OUTBOX: '1' } });

/** The development outbox's messages to `email` whose subject starts with `subject`, newest first. */
async function mailTo(email: string, subject: string): Promise<string[]> {
  const { results } = await env.DB.prepare('SELECT body FROM email_outbox WHERE recipient = ? AND subject LIKE ? ORDER BY created_at DESC, rowid DESC').bind(email, `${subject}%`).all<{ body: string }>();
  return results.map((row) => row.body);
}

/** The token of the newest reset link sent to `email`. */
async function resetToken(email: string): Promise<string> {
  const [body] = await mailTo(email, 'Reset your Sluice password');
  const token = body && /\/reset-password\?token=([0-9a-f]{64})/.exec(body)?.[1];
  if (!token) throw new Error(`no reset link for ${email} in the outbox`);
  return token;
}

/** A hash of `password` in the first, unpeppered scheme (auth/passwords.ts), at few iterations: sign-in rehashes it. */
async function legacyHash(password: string): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(password), 'PBKDF2', false, ['deriveBits']);
  const bits = new Uint8Array(await crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt, iterations: 1000 }, key, 256));
  const base64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
  return `pbkdf2-sha256$1000$${base64(salt)}$${base64(bits)}`;
}

const openLink = async (token: string) => {
  const response = await dashboard(`/reset-password?token=${token}`);
  return { status: response.status, html: await response.text(), referrerPolicy: response.headers.get('referrer-policy') };
};

describe('a forgotten password, set again by a link sent to the address', () => {
  it('emails a link whose page names the account and spends nothing; the form sets the password, signs every browser out and this one in', async () => {
    const person = await signUp();
    const email = person.account.user.email;
    const elsewhere = sessionCookie(await signIn(email, PASSWORD))!;

    const asked = await askForReset(email);
    expect(asked.status).toBe(202);
    expect(((await asked.json()) as any).data).toEqual({ emailed: 'outbox' });
    const token = await resetToken(email);

    // Opening the link, as a mail scanner would, twice: it still works, and its page sends no Referer with the token.
    for (let opened = 0; opened < 2; opened++) {
      const page = await openLink(token);
      expect(page.status).toBe(200);
      expect(page.html).toContain(email);
      expect(page.html).toContain(`value="${token}"`);
      expect(page.referrerPolicy).toBe('no-referrer');
    }

    const reset = await useReset(token, 'a brand new passphrase');
    expect(reset.status).toBe(200);
    const fresh = sessionCookie(reset);
    expect(fresh).toMatch(/^[0-9a-f]{64}$/);
    expect(((await reset.json()) as any).data.user).toMatchObject({ email, passwordChangedAt: expect.any(String) });

    // Every session the account had is over; the browser that reset is signed in.
    expect((await person.request('GET', '/api/me')).status).toBe(401);
    expect((await new Person(elsewhere, person.account).request('GET', '/api/me')).status).toBe(401);
    expect((await new Person(fresh!, person.account).request('GET', '/api/me')).status).toBe(200);
    expect((await signIn(email, PASSWORD)).status).toBe(401);
    expect((await signIn(email, 'a brand new passphrase')).status).toBe(200);

    // Spent: neither the form nor the page does anything with it again.
    const again = await useReset(token, 'yet another passphrase');
    expect(again.status).toBe(400);
    expect(((await again.json()) as any).error.details).toEqual([expect.objectContaining({ field: 'token' })]);
    const spentPage = await openLink(token);
    expect(spentPage.status).toBe(404);
    expect(spentPage.html).toContain('was used already');
  });

  it('answers an address without an account exactly as one with, and sends it nothing', async () => {
    const person = await signUp();
    const nobody = `nobody-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const known = await askForReset(person.account.user.email);
    const unknown = await askForReset(nobody);
    expect(unknown.status).toBe(known.status);
    expect(await unknown.json()).toEqual(await known.json());
    expect(await mailTo(nobody, '')).toEqual([]);
    expect(await mailTo(person.account.user.email, 'Reset your Sluice password')).toHaveLength(1);
  });

  it('says where links go when the installation cannot email: nowhere, for every address alike', async () => {
    const person = await signUp();
    const response = await dashboard(
      '/api/auth/password-reset',
      { method: 'POST', headers: { origin: APP_ORIGIN, 'content-type': 'application/json', 'cf-connecting-ip': freshClient() }, body: JSON.stringify({ email: person.account.user.email }), cf: THROUGH_THE_EDGE },
      { DEV_OUTBOX: '0', RESEND_API_KEY: '' },
    );
    expect(((await response.json()) as any).data).toEqual({ emailed: 'nowhere' });
    const page = await (await dashboard('/forgot-password', {}, { DEV_OUTBOX: '0', RESEND_API_KEY: '' })).text();
    expect(page).toContain('no email provider');
  });

  it("keeps the last three links, so a request from someone else does not void the owner's; a new password voids them all, as its hour does", async () => {
    const person = await signUp();
    const email = person.account.user.email;
    await askForReset(email);
    const first = await resetToken(email);
    await askForReset(email);
    const second = await resetToken(email);
    expect(second).not.toBe(first);
    expect((await openLink(first)).status).toBe(200);
    expect((await useReset(second, 'a brand new passphrase')).status).toBe(200);
    expect((await useReset(first, 'another passphrase')).status).toBe(400);

    await askForReset(email);
    const late = await resetToken(email);
    clock.now = () => realNow() + RESET_LIFETIME_MS + 1_000;
    expect((await openLink(late)).status).toBe(404);
    expect((await useReset(late, 'another passphrase')).status).toBe(400);
    clock.now = realNow;

    // A change in Settings voids a link asked for before it.
    await askForReset(email);
    const before = await resetToken(email);
    const signedIn = new Person(sessionCookie(await signIn(email, 'a brand new passphrase'))!, person.account);
    expect((await changePassword(signedIn, 'a brand new passphrase', 'the owner chose this')).status).toBe(200);
    expect((await useReset(before, 'someone else chose this')).status).toBe(400);
  });

  it('sets nothing with a link for an address the account no longer has', async () => {
    const person = await signUp();
    const email = person.account.user.email;
    await askForReset(email);
    const token = await resetToken(email);
    await env.DB.prepare('UPDATE users SET email = ? WHERE id = ?').bind(`moved-${email}`, person.account.user.id).run();
    expect((await useReset(token, 'a brand new passphrase')).status).toBe(400);
    expect((await signIn(`moved-${email}`, PASSWORD)).status).toBe(200);
  });

  it('lets no sign-in with the old password outlast a reset it overlaps: its session goes, and its rehash does not bring the old password back', async () => {
    for (const legacy of [false, true]) {
      const person = await signUp();
      const email = person.account.user.email;
      // An old scheme's hash: sign-in rehashes it, a write racing the reset's.
      if (legacy) await env.DB.prepare('UPDATE users SET password_hash = ? WHERE id = ?').bind(await legacyHash(PASSWORD), person.account.user.id).run();
      await askForReset(email);
      const token = await resetToken(email);
      const [intruder, reset] = await Promise.all([signIn(email, PASSWORD), useReset(token, 'a brand new passphrase')]);
      expect(reset.status).toBe(200);
      const cookie = sessionCookie(intruder);
      if (cookie) expect((await new Person(cookie, person.account).request('GET', '/api/me')).status).toBe(401);
      expect((await signIn(email, 'a brand new passphrase')).status).toBe(200);
      expect((await signIn(email, PASSWORD)).status).toBe(401);
    }
  });

  it("revokes what an unconfirmed account made when its address's owner resets it: whoever signed up with the address first keeps no way in", async () => {
    const squatter = await signUp({}, { confirmed: false });
    const email = squatter.account.user.email;
    const token = await squatter.json('POST', `/api/workspaces/${squatter.workspaceId}/mcp-tokens`, { name: 'mine' });
    expect(token.status).toBe(201);
    // Nor can it bring anyone in: an unconfirmed address sends no invitation.
    const invitation = await squatter.json('POST', `/api/organizations/${squatter.organizationId}/invitations`, { email: `accomplice-${crypto.randomUUID().slice(0, 8)}@example.com`, role: 'admin' });
    expect(invitation.status).toBe(403);
    expect(invitation.body.error.message).toContain('Confirm your email address to invite people');
    const page = await (await squatter.request('GET', `/w/${squatter.workspaceId}/members`)).text();
    expect(page).toContain('Confirm your email address to invite people');
    expect(page).not.toContain('Send invitation');
    // Nor send the organization's data out: its events to a receiver of the squatter's, calls through its vendor account.
    await ops('PUT', `/organizations/${squatter.organizationId}/plan`, { plan: 'team' });
    const base = `/api/workspaces/${squatter.workspaceId}`;
    const agent = await squatter.json('POST', `${base}/agents`, { name: 'listener' });
    expect(agent.status).toBe(201);
    const hook = `${FAKE_RECEIVER}/ok/squatter-${crypto.randomUUID()}`;
    expect((await squatter.json('POST', `${base}/webhook-endpoints`, { url: hook, events: ['key.created'] })).status).toBe(201);
    const heard = () => eventually(async () => (await (await fetch(`${FAKE_RECEIVER}/_received?path=${encodeURIComponent(new URL(hook).pathname)}`)).json()) as ReceivedRequest[], (all) => all.length > 0);
    expect((await squatter.json('POST', `${base}/keys`, { name: 'the squatter’s' })).status).toBe(201);
    expect((await heard()).map((delivery) => JSON.parse(delivery.body).data.key.name)).toEqual(['the squatter’s']);
    expect((await squatter.json('POST', `${base}/vendor-connections`, { vendor: 'hunter', name: 'mine', login: '', secret: HUNTER_KEY })).status).toBe(201);

    await askForReset(email);
    const reset = await useReset(await resetToken(email), 'the real owner chose this');
    expect(reset.status).toBe(200);
    const left = await env.DB.prepare('SELECT id FROM api_keys WHERE created_by = ? AND revoked_at IS NULL').bind(squatter.account.user.id).all();
    expect(left.results).toEqual([]);
    const rightful = new Person(sessionCookie(reset)!, squatter.account);
    expect((await rightful.json('POST', `${base}/keys`, { name: 'the owner’s own' })).status).toBe(201);
    expect((await rightful.json('GET', `${base}/webhook-endpoints`)).body.data.endpoints).toEqual([]);
    expect((await rightful.json('GET', `${base}/vendor-connections`)).body.data.connections).toEqual([]);
    expect((await rightful.json('GET', `${base}/agents`)).body.data.agents).toEqual([expect.objectContaining({ id: agent.body.data.id, status: 'stopped' })]);

    // A confirmed account's reset is a person who forgot: their MCP clients go on working.
    const owner = await signUp();
    const kept = await owner.json('POST', `/api/workspaces/${owner.workspaceId}/mcp-tokens`, { name: 'mine' });
    await askForReset(owner.account.user.email);
    expect((await useReset(await resetToken(owner.account.user.email), 'a brand new passphrase')).status).toBe(200);
    expect(await env.DB.prepare('SELECT revoked_at AS revokedAt FROM api_keys WHERE id = ?').bind(kept.body.data.id).first()).toEqual({ revokedAt: null });
  });

  it('refuses a malformed token and a short password with VALIDATION_ERROR naming the field, spending nothing', async () => {
    const person = await signUp();
    await askForReset(person.account.user.email);
    const token = await resetToken(person.account.user.email);
    const malformed = await useReset('not-a-token', 'a brand new passphrase');
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as any).error.details[0].field).toBe('token');
    const short = await useReset(token, 'short');
    expect(short.status).toBe(400);
    expect(((await short.json()) as any).error.details[0].field).toBe('password');
    expect((await useReset(token, 'a brand new passphrase')).status).toBe(200);
  });

  it('confirms the address it reached, and starts its sign-in count again', async () => {
    const person = await signUp({}, { confirmed: false });
    const email = person.account.user.email;
    for (let guess = 0; guess < 5; guess++) expect((await signIn(email, `wrong guess ${guess}`)).status).toBe(401);
    expect((await signIn(email, PASSWORD)).status).toBe(429);
    await askForReset(email);
    const reset = await useReset(await resetToken(email), 'a brand new passphrase');
    expect(((await reset.json()) as any).data.user.emailVerifiedAt).toEqual(expect.any(String));
    expect((await signIn(email, 'a brand new passphrase')).status).toBe(200);
  });

  it(`sends at most ${RESETS_PER_EMAIL.limit} links an hour to one address, and takes ${RESETS_PER_CLIENT.limit} requests an hour from one client, account or not`, async () => {
    const person = await signUp();
    const email = person.account.user.email;
    for (let asked = 0; asked < RESETS_PER_EMAIL.limit; asked++) expect((await askForReset(email)).status).toBe(202);
    const over = await askForReset(email);
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(59 * 60);
    expect(await mailTo(email, 'Reset your Sluice password')).toHaveLength(RESETS_PER_EMAIL.limit);

    const client = freshClient();
    const tag = crypto.randomUUID().slice(0, 8);
    for (let asked = 0; asked < RESETS_PER_CLIENT.limit; asked++) expect((await askForReset(`someone-${asked}-${tag}@example.com`, client)).status).toBe(202);
    expect((await askForReset(`one-more-${tag}@example.com`, client)).status).toBe(429);
  });
});

it("gives a browser that signed in to the account a reset count of its own, so requests from elsewhere cannot use up its owner's", async () => {
  const person = await signUp();
  const email = person.account.user.email;
  const device = setCookies(await signIn(email, PASSWORD)).find((cookie) => cookie.startsWith('sluice_device='))!.split(';')[0]!;
  for (let asked = 0; asked < RESETS_PER_EMAIL.limit; asked++) expect((await askForReset(email)).status).toBe(202);
  expect((await askForReset(email)).status).toBe(429);
  const owners = await post('/api/auth/password-reset', { email }, { 'cf-connecting-ip': freshClient(), cookie: device });
  expect(owners.status).toBe(202);
  expect(await mailTo(email, 'Reset your Sluice password')).toHaveLength(RESETS_PER_EMAIL.limit + 1);
});

describe('changing the password in Settings', () => {
  it('needs the current password; then signs every other browser out, keeps this one signed in, and tells the address', async () => {
    const person = await signUp();
    const email = person.account.user.email;
    const elsewhere = new Person(sessionCookie(await signIn(email, PASSWORD))!, person.account);

    const wrong = await changePassword(person, 'not my password', 'a brand new passphrase');
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.details).toEqual([expect.objectContaining({ field: 'currentPassword' })]);
    const same = await changePassword(person, PASSWORD, PASSWORD);
    expect(same.status).toBe(400);
    expect(same.body.error.details).toEqual([expect.objectContaining({ field: 'newPassword' })]);
    expect((await elsewhere.request('GET', '/api/me')).status).toBe(200);

    const response = await person.request('POST', '/api/me/password', { currentPassword: PASSWORD, newPassword: 'a brand new passphrase' }, { bindings: { DEV_OUTBOX: '1' } });
    expect(response.status).toBe(200);
    const fresh = new Person(sessionCookie(response)!, person.account);
    expect(fresh.cookie).not.toBe(person.cookie);
    expect((await fresh.json('GET', '/api/me')).body.data.user.passwordChangedAt).toEqual(expect.any(String));
    expect((await person.request('GET', '/api/me')).status).toBe(401);
    expect((await elsewhere.request('GET', '/api/me')).status).toBe(401);
    expect((await signIn(email, PASSWORD)).status).toBe(401);
    expect((await signIn(email, 'a brand new passphrase')).status).toBe(200);
    const [notice] = await mailTo(email, 'Your Sluice password was changed');
    expect(notice).toContain('/forgot-password');
  });

  it(`allows ${PASSWORD_CHANGES_PER_USER.limit} wrong current passwords a quarter hour, then waits even for the right one`, async () => {
    const person = await signUp();
    for (let guess = 0; guess < PASSWORD_CHANGES_PER_USER.limit; guess++) expect((await changePassword(person, `wrong guess ${guess}`, 'a brand new passphrase')).status).toBe(400);
    expect((await changePassword(person, PASSWORD, 'a brand new passphrase')).status).toBe(429);
    clock.now = () => realNow() + PASSWORD_CHANGES_PER_USER.windowMs + 1_000;
    expect((await changePassword(person, PASSWORD, 'a brand new passphrase')).status).toBe(200);
  });

  it("ends what a browser that knew the old password kept: its known-device count, while the changer's browser keeps its own", async () => {
    const person = await signUp();
    const email = person.account.user.email;
    const deviceOf = (response: Response) => setCookies(response).find((cookie) => cookie.startsWith('sluice_device='))!.split(';')[0]!;
    const intruder = deviceOf(await signIn(email, PASSWORD));
    const owner = await signIn(email, PASSWORD);
    const ownerDevice = deviceOf(owner);
    const changed = await new Person(sessionCookie(owner)!, person.account).request('POST', '/api/me/password', { currentPassword: PASSWORD, newPassword: 'a brand new passphrase' }, {
      headers: { cookie: `sluice_session=${sessionCookie(owner)}; ${ownerDevice}` },
      bindings: { DEV_OUTBOX: '1' },
    });
    expect(changed.status).toBe(200);
    const ownerDeviceNow = deviceOf(changed);
    expect(ownerDeviceNow.split('.')[0]).toBe(ownerDevice.split('.')[0]);

    // Guesses from anywhere fill the address's count.
    for (let guess = 0; guess < 5; guess++) expect((await signIn(email, `wrong guess ${guess}`)).status).toBe(401);
    // The intruder's cookie, signed before the change, now counts as no device: it waits with everyone else.
    expect((await signIn(email, 'a brand new passphrase', { cookie: intruder })).status).toBe(429);
    expect((await signIn(email, 'a brand new passphrase', { cookie: ownerDevice })).status).toBe(429);
    // The cookie the change signed anew still has a count of its own.
    expect((await signIn(email, 'a brand new passphrase', { cookie: ownerDeviceNow })).status).toBe(200);
  });
});
