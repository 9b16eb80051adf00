/**
 * Rotating KEY_ENCRYPTION_KEY (docs/deploying.md): set `<new>,<old>` and deploy. What was written under the old
 * key stays readable (keys revealable, webhook secrets and connections usable), new writes use the new key,
 * and a password is re-hashed under the new key at its next sign-in.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from '../src/app/auth/passwords';
import { decryptKey, encryptKey } from '../src/core/keys';
import { APP_ORIGIN, dashboard, signUp } from './support/dashboard';

const freshKey = () => btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));

describe('KEY_ENCRYPTION_KEY as <new>,<old>', () => {
  it('reads what either key wrote and writes with the first', async () => {
    const [oldKey, newKey] = [freshKey(), freshKey()];
    const written = await encryptKey('sk_live_secret', 'key_1', oldKey);
    expect(await decryptKey(written, 'key_1', `${newKey},${oldKey}`)).toBe('sk_live_secret');
    const rewritten = await encryptKey('sk_live_secret', 'key_1', `${newKey},${oldKey}`);
    expect(await decryptKey(rewritten, 'key_1', newKey)).toBe('sk_live_secret');
    await expect(decryptKey(rewritten, 'key_1', oldKey)).rejects.toThrow();
    await expect(decryptKey(written, 'key_1', `${freshKey()},${newKey}`)).rejects.toThrow();
  });

  it('verifies a password peppered by the old key and asks for a re-hash; a wrong one fails under every key', async () => {
    const [oldKey, newKey] = [freshKey(), freshKey()];
    const stored = await hashPassword('correct horse battery', oldKey);
    expect(await verifyPassword('correct horse battery', stored, `${newKey},${oldKey}`)).toEqual({ ok: true, needsRehash: true });
    expect(await verifyPassword('wrong horse battery', stored, `${newKey},${oldKey}`)).toEqual({ ok: false, needsRehash: false });
    expect(await verifyPassword('correct horse battery', stored, newKey)).toEqual({ ok: false, needsRehash: false });
    const fresh = await hashPassword('correct horse battery', `${newKey},${oldKey}`);
    expect(await verifyPassword('correct horse battery', fresh, newKey)).toEqual({ ok: true, needsRehash: false });
  });

  it('a person signed up under the old key signs in during the rotation, and after it with the new key alone', async () => {
    const person = await signUp({ password: 'a long enough passphrase' });
    const newKey = freshKey();
    const signIn = (key: string) =>
      dashboard(
        '/api/auth/sign-in',
        { method: 'POST', headers: { origin: APP_ORIGIN, 'content-type': 'application/json' }, body: JSON.stringify({ email: person.account.user.email, password: 'a long enough passphrase' }) },
        { KEY_ENCRYPTION_KEY: key },
      );
    expect((await signIn(newKey)).status).toBe(401);
    expect((await signIn(`${newKey},${env.KEY_ENCRYPTION_KEY}`)).status).toBe(200);
    expect((await signIn(newKey)).status).toBe(200);
  });
});
