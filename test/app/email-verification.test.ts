import { afterEach, describe, expect, it } from 'vitest';
import { clock } from '../../src/core/clock';
import { VERIFICATION_LIFETIME_MS, VERIFICATIONS_PER_USER } from '../../src/app/email-verification';
import { inboxOf } from '../../src/app/trial';
import { ops } from '../support/api';
import { APP_ORIGIN, confirmationLink, dashboard, followEmailLink, type Person, signUp } from '../support/dashboard';

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

const startTrial = (person: Person) => person.json('POST', `/api/organizations/${person.organizationId}/trial`);
/** Opens a confirmation link as its recipient's browser would, and presses its button: no session needed. */
const open = followEmailLink;
const resend = (person: Person) => person.json('POST', '/api/me/email-verification', undefined, { bindings: { DEV_OUTBOX: '1' } });

describe('the free trial waits for a confirmed email address', () => {
  it('refuses the trial with 403 naming the address until the link sent at sign-up is opened, then starts it', async () => {
    const person = await signUp({}, { confirmed: false });
    const email = person.account.user.email;
    expect((await person.json('GET', '/api/me')).body.data.user).toMatchObject({ email, emailVerifiedAt: null });

    const refused = await startTrial(person);
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain(`open the link we sent to ${email}`);

    // Opened by a mail scanner, which follows every link of a message but presses no button: nothing is confirmed.
    const link = await confirmationLink(email);
    const scanned = await dashboard(new URL(link).pathname + new URL(link).search);
    expect([scanned.status, scanned.headers.get('referrer-policy')]).toEqual([200, 'no-referrer']);
    expect(await scanned.text()).toContain(`Confirm ${email}`);
    expect((await person.json('GET', '/api/me')).body.data.user.emailVerifiedAt).toBeNull();

    const opened = await open(link);
    expect(opened.status).toBe(200);
    expect(await (await dashboard('/verify-email?confirmed=1')).text()).toContain('Email address confirmed');
    expect((await person.json('GET', '/api/me')).body.data.user.emailVerifiedAt).toEqual(expect.any(String));
    expect((await startTrial(person)).status).toBe(201);
  });

  it('says at sign-up where the link went: the development outbox here, nowhere without an email provider', async () => {
    const signUpAs = (bindings: Record<string, unknown>) =>
      dashboard('/api/auth/sign-up', { method: 'POST', headers: { origin: APP_ORIGIN, 'content-type': 'application/json' }, body: JSON.stringify(newcomer()) }, bindings);
    expect(((await (await signUpAs({ DEV_OUTBOX: '1' })).json()) as any).data.verification).toMatchObject({ emailed: 'outbox' });
    expect(((await (await signUpAs({})).json()) as any).data.verification).toMatchObject({ emailed: 'nowhere' });
  });

  it('confirms once: the link is spent, and a link past its day confirms nothing', async () => {
    const person = await signUp({}, { confirmed: false });
    const link = await confirmationLink(person.account.user.email);
    expect((await open(link)).status).toBe(200);
    const again = await open(link);
    expect(again.status).toBe(404);
    expect(again.page).toContain('was used already, has expired');

    const late = await signUp({}, { confirmed: false });
    const lateLink = await confirmationLink(late.account.user.email);
    clock.now = () => realNow() + VERIFICATION_LIFETIME_MS + 1_000;
    expect((await open(lateLink)).status).toBe(404);
    clock.now = realNow;
    expect((await startTrial(late)).status).toBe(403);
  });

  it('sends a new link that replaces the old one, at most five an hour, and none once confirmed', async () => {
    const person = await signUp({}, { confirmed: false });
    const first = await confirmationLink(person.account.user.email);
    const sent = await resend(person);
    expect(sent.status).toBe(200);
    expect(sent.body.data).toEqual({ sentTo: person.account.user.email, emailed: 'outbox' });
    const second = await confirmationLink(person.account.user.email);
    expect(second).not.toBe(first);
    expect((await open(first)).status).toBe(404);

    // The sign-up's link and this one: three more, then the hour is full.
    for (let more = 2; more < VERIFICATIONS_PER_USER.limit; more++) expect((await resend(person)).status).toBe(200);
    const throttled = await resend(person);
    expect(throttled.status).toBe(429);

    expect((await open(await confirmationLink(person.account.user.email))).status).toBe(200);
    expect((await resend(person)).status).toBe(409);
  });

  it('shows the Plans page the way to the trial: the link to open and a button for a new one until confirmed, then the Start button', async () => {
    const person = await signUp({}, { confirmed: false });
    const page = async () => (await person.request('GET', `/w/${person.workspaceId}/plans`)).text();
    const before = await page();
    expect(before).toContain('Confirm your email address first');
    expect(before).toContain('data-api="/api/me/email-verification"');
    expect(before).not.toContain(`data-api="/api/organizations/${person.organizationId}/trial"`);
    await open(await confirmationLink(person.account.user.email));
    const after = await page();
    expect(after).not.toContain('Confirm your email address first');
    expect(after).toContain(`data-api="/api/organizations/${person.organizationId}/trial"`);
  });
});

let newcomers = 0;
function newcomer() {
  newcomers += 1;
  return { email: `newcomer${newcomers}-${crypto.randomUUID().slice(0, 8)}@example.com`, password: 'a long enough passphrase', name: `Newcomer ${newcomers}` };
}


describe('an operator confirms an address by hand (an installation that sends no email)', () => {
  it('confirms the account of that address, answers 404 for an unknown one, and the trial then starts', async () => {
    const person = await signUp({}, { confirmed: false });
    const confirmed = await ops('POST', '/users/confirm-email', { email: person.account.user.email.toUpperCase() });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.data).toMatchObject({ userId: person.account.user.id, emailVerifiedAt: expect.any(String) });
    expect((await startTrial(person)).status).toBe(201);
    expect((await ops('POST', '/users/confirm-email', { email: 'nobody-here@example.com' })).status).toBe(404);
    expect((await ops('POST', '/users/confirm-email', { email: 'not an address' })).status).toBe(400);
  });
});

describe('one free trial an inbox', () => {
  it('refuses a second organization whose confirmed address reaches the same inbox (+tags, Gmail dots)', async () => {
    const name = `inbox${crypto.randomUUID().slice(0, 8)}`;
    const first = await signUp({ email: `${name}+first@gmail.com` });
    expect((await startTrial(first)).status).toBe(201);
    const again = await signUp({ email: `${name.slice(0, 3)}.${name.slice(3)}+second@googlemail.com` });
    const refused = await startTrial(again);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'TRIAL_ALREADY_USED', message: expect.stringContaining('one trial an inbox') });
    // Another inbox of the same provider is another person.
    expect((await startTrial(await signUp({ email: `${name}x@gmail.com` }))).status).toBe(201);
  });

  it.each([
    ['Ada.Lovelace+sluice@Gmail.com', 'adalovelace@gmail.com'],
    ['a.d.a@googlemail.com', 'ada@gmail.com'],
    ['ada+one+two@example.com', 'ada@example.com'],
    ['Ada.Lovelace@example.com', 'ada.lovelace@example.com'],
  ])('reads %s as the inbox %s', (email, inbox) => {
    expect(inboxOf(email)).toBe(inbox);
  });
});
