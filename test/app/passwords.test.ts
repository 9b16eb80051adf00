import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { hashPassword, verifyPassword } from '../../src/app/auth/passwords';
import { APP_ORIGIN, dashboard, signUp } from '../support/dashboard';

/** The password the sign-up helper gives every person. */
const PASSWORD = 'a long enough passphrase';
const CURRENT_FORMAT = /^pbkdf2-sha256-peppered\$100000\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}$/;

afterEach(() => {
  vi.restoreAllMocks();
});

let addresses = 0;
/** A sign-in through Cloudflare's edge, each from an address of its own so the per-client throttle stays out of the way. */
function signIn(email: string, password: string) {
  addresses += 1;
  return dashboard('/api/auth/sign-in', {
    method: 'POST',
    headers: { origin: APP_ORIGIN, 'content-type': 'application/json', 'cf-connecting-ip': `198.18.7.${addresses % 250}` },
    body: JSON.stringify({ email, password }),
    cf: { colo: 'AMS' },
  });
}

function storedHash(userId: string) {
  return env.DB.prepare('SELECT password_hash AS hash FROM users WHERE id = ?').bind(userId).first<{ hash: string }>().then((row) => row!.hash);
}

function storeHash(userId: string, hash: string) {
  return env.DB.prepare('UPDATE users SET password_hash = ? WHERE id = ?').bind(hash, userId).run();
}

/** PBKDF2-HMAC-SHA-256 of the password itself, as WebCrypto computes it (no pepper). */
async function plainPbkdf2(password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(password), 'PBKDF2', false, ['deriveBits']);
  return new Uint8Array(await crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt, iterations }, key, 256));
}

/** A hash as the first version stored it: unpeppered PBKDF2 at 600,000 iterations. Made here, not by the code under test. */
async function firstVersionHash(password: string): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  return `pbkdf2-sha256$600000$${toBase64(salt)}$${toBase64(await plainPbkdf2(password, salt, 600_000))}`;
}

const toBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const fromBase64 = (text: string) => Uint8Array.from(atob(text), (char) => char.charCodeAt(0));

/** WebCrypto as Cloudflare's hosted runtime has it: PBKDF2 above 100,000 iterations is refused (workerd issue 1346). */
function refusePbkdf2Above100kLikeCloudflare() {
  const deriveBits = crypto.subtle.deriveBits.bind(crypto.subtle);
  const asked: number[] = [];
  vi.spyOn(crypto.subtle, 'deriveBits').mockImplementation(async (algorithm, key, length) => {
    const { name, iterations = 0 } = algorithm as { name: string; iterations?: number };
    if (name === 'PBKDF2') {
      asked.push(iterations);
      if (iterations > 100_000) throw new DOMException('Pbkdf2 failed: iteration counts above 100000 are not supported', 'NotSupportedError');
    }
    return deriveBits(algorithm, key, length);
  });
  return asked;
}

describe('passwords on Cloudflare', () => {
  it('signs up and signs in where WebCrypto refuses PBKDF2 above 100,000 iterations, as Cloudflare does', async () => {
    const asked = refusePbkdf2Above100kLikeCloudflare();
    const person = await signUp();
    expect((await signIn(person.account.user.email, PASSWORD)).status).toBe(200);
    expect((await signIn(person.account.user.email, 'not the passphrase')).status).toBe(401);
    expect((await signIn('nobody-at-all@example.com', PASSWORD)).status).toBe(401);
    expect(asked.length).toBeGreaterThanOrEqual(4);
    expect(new Set(asked)).toEqual(new Set([100_000]));
  });

  it('stores the scheme and its parameters with the hash: pbkdf2-sha256-peppered, 100,000 iterations, salt, hash', async () => {
    const person = await signUp();
    expect(await storedHash(person.account.user.id)).toMatch(CURRENT_FORMAT);
  });

  it('peppers the hash: the stored row alone, without KEY_ENCRYPTION_KEY, cannot check a guess', async () => {
    const person = await signUp();
    const [, , salt, hash] = (await storedHash(person.account.user.id)).split('$');
    expect(toBase64(await plainPbkdf2(PASSWORD, fromBase64(salt!), 100_000))).not.toBe(hash);
    const otherSecret = toBase64(crypto.getRandomValues(new Uint8Array(32)));
    expect(await verifyPassword(PASSWORD, await storedHash(person.account.user.id), otherSecret)).toEqual({ ok: false, needsRehash: false });
    expect(await verifyPassword(PASSWORD, await storedHash(person.account.user.id), env.KEY_ENCRYPTION_KEY)).toEqual({ ok: true, needsRehash: false });
  });

  it('signs in with a hash of the first version (600,000 iterations, no pepper) and replaces it with the current scheme', async () => {
    const person = await signUp();
    const old = await firstVersionHash(PASSWORD);
    await storeHash(person.account.user.id, old);
    expect((await signIn(person.account.user.email, PASSWORD)).status).toBe(200);
    const rehashed = await storedHash(person.account.user.id);
    expect(rehashed).toMatch(CURRENT_FORMAT);
    // The new hash works, and is not replaced again.
    expect((await signIn(person.account.user.email, PASSWORD)).status).toBe(200);
    expect(await storedHash(person.account.user.id)).toBe(rehashed);
  });

  it('refuses a wrong password with 401 under either scheme and keeps the stored hash', async () => {
    const person = await signUp();
    const current = await storedHash(person.account.user.id);
    expect((await signIn(person.account.user.email, 'not the passphrase')).status).toBe(401);
    expect(await storedHash(person.account.user.id)).toBe(current);

    const old = await firstVersionHash(PASSWORD);
    await storeHash(person.account.user.id, old);
    const wrong = await signIn(person.account.user.email, 'not the passphrase');
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as any).error.code).toBe('UNAUTHORIZED');
    expect(await storedHash(person.account.user.id)).toBe(old);
  });

  it('compares the derived and the stored hash in constant time, under either scheme', async () => {
    const compare = vi.spyOn(crypto.subtle, 'timingSafeEqual');
    const current = await hashPassword(PASSWORD, env.KEY_ENCRYPTION_KEY);
    expect((await verifyPassword(PASSWORD, current, env.KEY_ENCRYPTION_KEY)).ok).toBe(true);
    expect((await verifyPassword('not the passphrase', await firstVersionHash(PASSWORD), env.KEY_ENCRYPTION_KEY)).ok).toBe(false);
    expect(compare).toHaveBeenCalledTimes(2);
    for (const [a, b] of compare.mock.calls) expect([(a as Uint8Array).byteLength, (b as Uint8Array).byteLength]).toEqual([32, 32]);
  });

  it('never matches, nor derives for, a stored hash beyond its scheme\'s bounds or of an unknown scheme', async () => {
    const asked = refusePbkdf2Above100kLikeCloudflare();
    const [, , salt, hash] = (await hashPassword(PASSWORD, env.KEY_ENCRYPTION_KEY)).split('$');
    asked.length = 0;
    for (const stored of [`pbkdf2-sha256-peppered$100001$${salt}$${hash}`, `pbkdf2-sha256$600001$${salt}$${hash}`, `argon2id$3$${salt}$${hash}`, `pbkdf2-sha256-peppered$0$${salt}$${hash}`, '']) {
      expect(await verifyPassword(PASSWORD, stored, env.KEY_ENCRYPTION_KEY)).toEqual({ ok: false, needsRehash: false });
    }
    expect(asked).toEqual([]);
  });
});
