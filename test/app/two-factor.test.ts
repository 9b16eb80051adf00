import { env } from 'cloudflare:workers';
import { Secret, TOTP } from 'otpauth';
import { afterEach, describe, expect, it } from 'vitest';
import { clock } from '../../src/core/clock';
import { SECOND_FACTOR_FAILURES, SECOND_FACTOR_LIFETIME_MS } from '../../src/app/auth/second-factor';
import { RECOVERY_CODES } from '../../src/app/two-factor';
import { APP_ORIGIN, dashboard, join, Person, sessionCookie, setCookies, signUp } from '../support/dashboard';
import { createExecutionContext } from 'cloudflare:test';
import api from '../../src/api';
import { OPS_TOKEN } from '../support/api';

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

const PASSWORD = 'a long enough passphrase';
const freshClient = () => `2001:db8:${crypto.getRandomValues(new Uint16Array(3)).reduce((text, part) => `${text}${part.toString(16)}:`, '')}:1`;

/** A request as a browser holding `cookies` sends it, through the edge from a client of its own. */
function post(path: string, body: unknown, cookies: string[] = []) {
  return dashboard(
    path,
    {
      method: 'POST',
      headers: { origin: APP_ORIGIN, 'content-type': 'application/json', 'cf-connecting-ip': freshClient(), ...(cookies.length ? { cookie: cookies.join('; ') } : {}) },
      body: JSON.stringify(body),
      cf: { colo: 'AMS' },
    },
    { DEV_OUTBOX: '1' },
  );
}

/** The pending sign-in's cookie a response set (name=value), or undefined. */
const pendingCookie = (response: Response) => setCookies(response).find((cookie) => cookie.startsWith('sluice_second_factor=') && !cookie.startsWith('sluice_second_factor=;'))?.split(';')[0];

/** The code an authenticator app set up from `secret` shows at `at`. */
const codeAt = (secret: string, at: number) => TOTP.generate({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30, timestamp: at });

async function mailTo(email: string, subject: string): Promise<number> {
  return (await env.DB.prepare('SELECT COUNT(*) AS n FROM email_outbox WHERE recipient = ? AND subject = ?').bind(email, subject).first<{ n: number }>())!.n;
}

/** Someone with two-factor sign-in on: their app's secret and their recovery codes. */
async function withTwoFactor(): Promise<{ person: Person; secret: string; recoveryCodes: string[] }> {
  const person = await signUp();
  const setup = await person.json('POST', '/api/me/two-factor/setup', { currentPassword: PASSWORD });
  expect(setup.status).toBe(200);
  const { secret, uri, qrSvg } = setup.body.data;
  expect(uri).toBe(`otpauth://totp/Sluice:${encodeURIComponent(person.account.user.email)}?issuer=Sluice&secret=${secret}&algorithm=SHA1&digits=6&period=30`);
  expect(qrSvg).toMatch(/^<svg /);
  const confirmed = await person.json('POST', '/api/me/two-factor/confirm', { code: codeAt(secret, clock.now()) }, { bindings: { DEV_OUTBOX: '1' } });
  expect(confirmed.status).toBe(200);
  return { person, secret, recoveryCodes: confirmed.body.data.recoveryCodes };
}

/** The password step: answers the pending sign-in's cookie, having checked that no session came with it. */
async function passwordStep(email: string): Promise<string> {
  const response = await post('/api/auth/sign-in', { email, password: PASSWORD });
  expect(response.status).toBe(200);
  expect(((await response.json()) as any).data).toEqual({ twoFactorRequired: true, expiresAt: expect.any(String) });
  expect(sessionCookie(response)).toBeUndefined();
  return pendingCookie(response)!;
}

describe('two-factor sign-in', () => {
  it('is set up from a QR code, confirmed by a code, and then asks every sign-in for a code, each code taken once', async () => {
    clock.now = () => Date.UTC(2026, 11, 1, 12, 0, 10);
    const { person, secret, recoveryCodes } = await withTwoFactor();
    const email = person.account.user.email;
    expect(recoveryCodes).toHaveLength(RECOVERY_CODES);
    expect(new Set(recoveryCodes).size).toBe(RECOVERY_CODES);
    expect((await person.json('GET', '/api/me/two-factor')).body.data).toEqual({ enabled: true, enabledAt: expect.any(String), recoveryCodesLeft: RECOVERY_CODES });
    expect(await mailTo(email, 'Two-factor sign-in is on for your Sluice account')).toBe(1);
    // Kept sealed: neither the secret nor a recovery code is in D1 as it was shown.
    const stored = JSON.stringify(await env.DB.prepare('SELECT * FROM two_factor t JOIN two_factor_recovery_codes r USING (user_id) WHERE user_id = ?').bind(person.account.user.id).all());
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain(recoveryCodes[0]!.replace('-', ''));

    // A right password alone opens nothing: no session, and the page still asks to sign in.
    const pending = await passwordStep(email);
    const wrong = await post('/api/auth/sign-in/two-factor', { code: '000000' === codeAt(secret, clock.now()) ? '111111' : '000000' }, [pending]);
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as any).error.details).toEqual([expect.objectContaining({ field: 'code' })]);
    // The code of the step the setup took is used already; the next step's is not.
    expect((await post('/api/auth/sign-in/two-factor', { code: codeAt(secret, clock.now()) }, [pending])).status).toBe(400);
    clock.now = () => Date.UTC(2026, 11, 1, 12, 0, 40);
    const signedIn = await post('/api/auth/sign-in/two-factor', { code: codeAt(secret, clock.now()) }, [pending]);
    expect(signedIn.status).toBe(200);
    const session = sessionCookie(signedIn)!;
    expect(((await signedIn.json()) as any).data.user.id).toBe(person.account.user.id);
    expect((await new Person(session, person.account).request('GET', '/api/me')).status).toBe(200);
    // The wait is over once used: the same cookie signs in no second browser.
    clock.now = () => Date.UTC(2026, 11, 1, 12, 1, 10);
    expect((await post('/api/auth/sign-in/two-factor', { code: codeAt(secret, clock.now()) }, [pending])).status).toBe(401);
    // Replayed in a new sign-in within its step, the code that signed in is refused.
    clock.now = () => Date.UTC(2026, 11, 1, 12, 0, 50);
    const again = await passwordStep(email);
    const replayed = await post('/api/auth/sign-in/two-factor', { code: codeAt(secret, Date.UTC(2026, 11, 1, 12, 0, 40)) }, [again]);
    expect(replayed.status).toBe(400);
    expect(((await replayed.json()) as any).error.details[0].message).toContain('used already');
  });

  it('skips the code for 30 days on a browser remembered at the second step, until new recovery codes or a new password', async () => {
    const { person, recoveryCodes } = await withTwoFactor();
    const email = person.account.user.email;
    const remembered = (response: Response) => setCookies(response).find((cookie) => cookie.startsWith('sluice_remembered='))?.split(';')[0];
    const signedIn = await post('/api/auth/sign-in/two-factor', { recoveryCode: recoveryCodes[0], rememberBrowser: 'true' }, [await passwordStep(email)]);
    expect(signedIn.status).toBe(200);
    const cookie = remembered(signedIn)!;
    expect(setCookies(signedIn).find((one) => one.startsWith('sluice_remembered='))).toMatch(/HttpOnly.*SameSite=Strict|SameSite=Strict.*HttpOnly/);
    // Not remembered unless asked.
    expect(remembered(await post('/api/auth/sign-in/two-factor', { recoveryCode: recoveryCodes[1] }, [await passwordStep(email)]))).toBeUndefined();

    const fromRemembered = () => post('/api/auth/sign-in', { email, password: PASSWORD }, [cookie]);
    const direct = await fromRemembered();
    expect(direct.status).toBe(200);
    expect(sessionCookie(direct)).toBeDefined();
    // A forged or stretched cookie is nobody's.
    const [until, mac] = cookie.split('=')[1]!.split('.');
    expect(sessionCookie(await post('/api/auth/sign-in', { email, password: PASSWORD }, [`sluice_remembered=${Number(until) + 86_400_000}.${mac}`]))).toBeUndefined();
    // 30 days on, the code again.
    const realNow = clock.now;
    clock.now = () => Number(until) + 1;
    expect(sessionCookie(await fromRemembered())).toBeUndefined();
    clock.now = realNow;
    // New recovery codes forget it.
    const signedInPerson = new Person(sessionCookie(direct)!, person.account);
    expect((await signedInPerson.json('POST', '/api/me/two-factor/recovery-codes', { currentPassword: PASSWORD })).status).toBe(200);
    const after = await fromRemembered();
    expect(sessionCookie(after)).toBeUndefined();
    expect(((await after.json()) as any).data.twoFactorRequired).toBe(true);
  });

  it('takes each recovery code once in place of the app, and tells the address', async () => {
    const { person, recoveryCodes } = await withTwoFactor();
    const email = person.account.user.email;
    const [first] = recoveryCodes;
    const signedIn = await post('/api/auth/sign-in/two-factor', { recoveryCode: first!.toUpperCase() }, [await passwordStep(email)]);
    expect(signedIn.status).toBe(200);
    expect(sessionCookie(signedIn)).toBeDefined();
    const reused = await post('/api/auth/sign-in/two-factor', { recoveryCode: first }, [await passwordStep(email)]);
    expect(reused.status).toBe(400);
    expect(((await reused.json()) as any).error.details).toEqual([expect.objectContaining({ field: 'recoveryCode' })]);
    expect((await person.json('GET', '/api/me/two-factor')).body.data.recoveryCodesLeft).toBe(RECOVERY_CODES - 1);
    expect(await mailTo(email, 'A recovery code signed in to your Sluice account')).toBe(1);

    // New codes replace the old ones, which stop working.
    const replaced = await person.json('POST', '/api/me/two-factor/recovery-codes', { currentPassword: PASSWORD }, { bindings: { DEV_OUTBOX: '1' } });
    expect(replaced.status).toBe(200);
    expect((await post('/api/auth/sign-in/two-factor', { recoveryCode: recoveryCodes[1] }, [await passwordStep(email)])).status).toBe(400);
    expect((await post('/api/auth/sign-in/two-factor', { recoveryCode: replaced.body.data.recoveryCodes[0] }, [await passwordStep(email)])).status).toBe(200);
  });

  it(`ends a sign-in after ${SECOND_FACTOR_FAILURES} wrong codes, after ten minutes, and when the password changes meanwhile`, async () => {
    const start = Date.UTC(2026, 11, 1, 13, 0, 5);
    clock.now = () => start;
    const { person, secret } = await withTwoFactor();
    const email = person.account.user.email;
    const wrongCode = String((Number(codeAt(secret, start + 30_000)) + 1) % 1_000_000).padStart(6, '0');

    const pending = await passwordStep(email);
    for (let attempt = 1; attempt < SECOND_FACTOR_FAILURES; attempt++) expect((await post('/api/auth/sign-in/two-factor', { code: wrongCode }, [pending])).status).toBe(400);
    expect((await post('/api/auth/sign-in/two-factor', { code: wrongCode }, [pending])).status).toBe(401);
    clock.now = () => start + 30_000;
    expect((await post('/api/auth/sign-in/two-factor', { code: codeAt(secret, clock.now()) }, [pending])).status).toBe(401);

    const late = await passwordStep(email);
    clock.now = () => start + 30_000 + SECOND_FACTOR_LIFETIME_MS;
    expect((await post('/api/auth/sign-in/two-factor', { code: codeAt(secret, clock.now()) }, [late])).status).toBe(401);

    const overtaken = await passwordStep(email);
    expect((await person.json('POST', '/api/me/password', { currentPassword: PASSWORD, newPassword: 'another long passphrase' }, { bindings: { DEV_OUTBOX: '1' } })).status).toBe(200);
    clock.now = () => start + 60_000 + SECOND_FACTOR_LIFETIME_MS;
    expect((await post('/api/auth/sign-in/two-factor', { code: codeAt(secret, clock.now()) }, [overtaken])).status).toBe(401);
  });

  it('asks a password reset by the emailed link for the code too, before the link is spent or the password set', async () => {
    const { person, secret } = await withTwoFactor();
    const email = person.account.user.email;
    expect((await post('/api/auth/password-reset', { email })).status).toBe(202);
    const message = await env.DB.prepare("SELECT body FROM email_outbox WHERE recipient = ? AND subject = 'Reset your Sluice password'").bind(email).first<{ body: string }>();
    const token = /token=([0-9a-f]{64})/.exec(message!.body)![1]!;
    expect(await (await dashboard(`/reset-password?token=${token}`)).text()).toContain('name="code"');
    const reset = (code?: string) => post('/api/auth/password-reset/confirm', { token, password: 'a brand new passphrase', ...(code === undefined ? {} : { code }) });
    clock.now = () => realNow() + 30_000;
    const wrong = String((Number(codeAt(secret, clock.now())) + 1) % 1_000_000).padStart(6, '0');
    for (const refused of [await reset(), await reset(wrong)]) {
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as any).error.details).toEqual([expect.objectContaining({ field: 'code' })]);
    }
    // Refused twice, the link still works and the password is the old one.
    expect(((await (await post('/api/auth/sign-in', { email, password: PASSWORD })).json()) as any).data.twoFactorRequired).toBe(true);
    const signedIn = await reset(codeAt(secret, clock.now()));
    expect(signedIn.status).toBe(200);
    expect(sessionCookie(signedIn)).toBeDefined();
    expect((await reset(codeAt(secret, clock.now() + 30_000))).status).toBe(400);
  });

  it('is not set up before the address is confirmed: whoever signed up with it first could otherwise keep its owner out', async () => {
    const squatter = await signUp({}, { confirmed: false });
    const refused = await squatter.json('POST', '/api/me/two-factor/setup', { currentPassword: PASSWORD });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain('Confirm your email address');
  });

  it('keeps the recovery codes of the confirmation that turned it on, when two arrive at once', async () => {
    const person = await signUp();
    const { secret } = (await person.json('POST', '/api/me/two-factor/setup', { currentPassword: PASSWORD })).body.data;
    const code = codeAt(secret, clock.now());
    const answers = await Promise.all([1, 2].map(() => person.json('POST', '/api/me/two-factor/confirm', { code })));
    const won = answers.filter((answer) => answer.status === 200);
    expect(won).toHaveLength(1);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
    const stored = await env.DB.prepare('SELECT code_hash FROM two_factor_recovery_codes WHERE user_id = ?').bind(person.account.user.id).all<{ code_hash: string }>();
    expect(stored.results).toHaveLength(RECOVERY_CODES);
    // Kept as a keyed HMAC over the account, not the bare SHA-256 a copy of D1 could sweep.
    const [first] = won[0]!.body.data.recoveryCodes as string[];
    const bare = [...new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(first!.replace('-', ''))))].map((byte) => byte.toString(16).padStart(2, '0')).join('');
    expect(stored.results.map((row) => row.code_hash)).not.toContain(bare);
    const signedIn = await post('/api/auth/sign-in/two-factor', { recoveryCode: first }, [await passwordStep(person.account.user.email)]);
    expect(signedIn.status).toBe(200);
  });

  it('counts the codes of a browser the owner signed in from apart, so someone with the password cannot keep them out, and tells the owner once', async () => {
    const person = await signUp();
    const email = person.account.user.email;
    // The owner's browser, known to the account from a sign-in before two-factor sign-in was on.
    const device = setCookies(await post('/api/auth/sign-in', { email, password: PASSWORD })).find((cookie) => cookie.startsWith('sluice_device='))!.split(';')[0]!;
    const { secret } = (await person.json('POST', '/api/me/two-factor/setup', { currentPassword: PASSWORD })).body.data;
    expect((await person.json('POST', '/api/me/two-factor/confirm', { code: codeAt(secret, clock.now()) })).status).toBe(200);

    clock.now = () => realNow() + 30_000;
    const wrong = String((Number(codeAt(secret, clock.now())) + 1) % 1_000_000).padStart(6, '0');
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 11; attempt++) {
      const pending = await passwordStep(email);
      statuses.push((await post('/api/auth/sign-in/two-factor', { code: wrong }, [pending])).status);
    }
    expect(statuses).toEqual([...Array<number>(10).fill(400), 429]);
    expect(await mailTo(email, 'A sign-in to your Sluice account gave a wrong code')).toBe(1);

    const ownersStep = await post('/api/auth/sign-in', { email, password: PASSWORD }, [device]);
    const signedIn = await post('/api/auth/sign-in/two-factor', { code: codeAt(secret, clock.now()) }, [device, pendingCookie(ownersStep)!]);
    expect(signedIn.status).toBe(200);
  });

  it('is turned off with the password, after which the password alone signs in; setting up twice or with a wrong password is refused', async () => {
    const { person } = await withTwoFactor();
    const email = person.account.user.email;
    expect((await person.json('POST', '/api/me/two-factor/setup', { currentPassword: PASSWORD })).status).toBe(409);
    const wrong = await person.json('DELETE', '/api/me/two-factor', { currentPassword: 'not the password' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.details[0].field).toBe('currentPassword');
    expect((await person.json('DELETE', '/api/me/two-factor', { currentPassword: PASSWORD }, { bindings: { DEV_OUTBOX: '1' } })).status).toBe(200);
    expect(await mailTo(email, 'Two-factor sign-in is off for your Sluice account')).toBe(1);
    const signedIn = await post('/api/auth/sign-in', { email, password: PASSWORD });
    expect(((await signedIn.json()) as any).data.user.email).toBe(email);
    expect(sessionCookie(signedIn)).toBeDefined();
  });

  it("is reset by the operator for someone who lost the app and the codes: every browser signed out, the address told, the password alone signs in", async () => {
    const { person, secret } = await withTwoFactor();
    const email = person.account.user.email;
    const owner = await signUp();
    await join(person, owner.organizationId, 'member');
    // An organization that requires it keeps requiring it: the reset lets the person in, not past the organization's rule.
    const ownerSetup = (await owner.json('POST', '/api/me/two-factor/setup', { currentPassword: PASSWORD })).body.data;
    expect((await owner.json('POST', '/api/me/two-factor/confirm', { code: codeAt(ownerSetup.secret, clock.now()) })).status).toBe(200);
    expect((await owner.json('PUT', `/api/organizations/${owner.organizationId}/two-factor-requirement`, { required: true })).status).toBe(200);
    const pending = await passwordStep(email);
    const reset = (body: unknown) =>
      api.fetch(
        new Request('http://sluice.test/ops/v1/users/two-factor-reset', { method: 'POST', headers: { authorization: `Bearer ${OPS_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }),
        { ...env, DEV_OUTBOX: '1' },
        createExecutionContext(),
      );

    // Someone with the password used up the day's codes of the lost app: the app set up after the reset is not refused for them.
    const wrong = '000000' === codeAt(secret, clock.now()) ? '000001' : '000000';
    for (let attempt = 0; attempt < 10; attempt++) expect((await post('/api/auth/sign-in/two-factor', { code: wrong }, [await passwordStep(email)])).status).toBe(400);
    expect((await post('/api/auth/sign-in/two-factor', { code: wrong }, [await passwordStep(email)])).status).toBe(429);

    const { name: organizationName } = (await env.DB.prepare('SELECT name FROM organizations WHERE id = ?').bind(owner.organizationId).first<{ name: string }>())!;
    const done = await reset({ email: email.toUpperCase() });
    expect(done.status).toBe(200);
    expect(((await done.json()) as any).data).toEqual({ userId: person.account.user.id, email, signedOut: 1, requiredBy: [organizationName] });
    expect((await person.json('GET', '/api/me')).status).toBe(401);
    // The sign-in that was waiting for a code is gone with the factor.
    expect((await post('/api/auth/sign-in/two-factor', { code: '123456' }, [pending])).status).toBe(401);
    expect(await mailTo(email, 'Two-factor sign-in was reset for your Sluice account')).toBe(1);
    const signedIn = await post('/api/auth/sign-in', { email, password: PASSWORD });
    expect(((await signedIn.json()) as any).data.user.email).toBe(email);
    const again = new Person(sessionCookie(signedIn)!, person.account);
    expect((await again.json('GET', `/api/workspaces/${owner.workspaceId}/keys`)).status).toBe(403);

    // Off now, or only begun and never confirmed: nothing to reset, and nothing changed (still signed in, nobody told).
    expect((await reset({ email })).status).toBe(409);
    expect((await again.json('POST', '/api/me/two-factor/setup', { currentPassword: PASSWORD })).status).toBe(200);
    expect((await reset({ email })).status).toBe(409);
    expect((await again.json('GET', '/api/me')).status).toBe(200);
    expect(await mailTo(email, 'Two-factor sign-in was reset for your Sluice account')).toBe(1);
    // Turned on again with a new app, its first code signs in.
    const newApp = (await again.json('POST', '/api/me/two-factor/setup', { currentPassword: PASSWORD })).body.data.secret;
    expect((await again.json('POST', '/api/me/two-factor/confirm', { code: codeAt(newApp, clock.now()) })).status).toBe(200);
    clock.now = () => realNow() + 30_000;
    expect((await post('/api/auth/sign-in/two-factor', { code: codeAt(newApp, clock.now()) }, [await passwordStep(email)])).status).toBe(200);
    expect((await reset({ email: 'nobody-here@example.com' })).status).toBe(404);
    const invalid = await reset({ email: 'not an address' });
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as any).error.details).toEqual([expect.objectContaining({ field: 'email' })]);
  });

  it('confirms only a code of the secret being set up, and forgets everything with the account', async () => {
    const person = await signUp();
    const { secret } = (await person.json('POST', '/api/me/two-factor/setup', { currentPassword: PASSWORD })).body.data;
    // Set up again before confirming: the first secret's code no longer confirms.
    const second = (await person.json('POST', '/api/me/two-factor/setup', { currentPassword: PASSWORD })).body.data.secret;
    expect((await person.json('POST', '/api/me/two-factor/confirm', { code: codeAt(secret, clock.now()) })).status).toBe(400);
    expect((await person.json('POST', '/api/me/two-factor/confirm', { code: 'abcdef' })).status).toBe(400);
    expect((await person.json('POST', '/api/me/two-factor/confirm', { code: codeAt(second, clock.now()) })).status).toBe(200);
    expect((await person.json('DELETE', '/api/me', { currentPassword: PASSWORD }, { bindings: { DEV_OUTBOX: '1' } })).status).toBe(200);
    const left = await env.DB.prepare('SELECT (SELECT COUNT(*) FROM two_factor WHERE user_id = ?1) + (SELECT COUNT(*) FROM two_factor_recovery_codes WHERE user_id = ?1) AS n').bind(person.account.user.id).first<{ n: number }>();
    expect(left!.n).toBe(0);
  });
});
