import { encryptionSecrets } from '../../core/keys';

/**
 * Password hashing that Cloudflare's hosted runtime accepts. Its WebCrypto refuses PBKDF2 above 100,000
 * iterations (workerd issue 1346), so a new hash is PBKDF2-HMAC-SHA-256 at exactly 100,000 over an
 * HMAC-SHA-256 of the password keyed by a pepper: a stolen database alone cannot be guessed against. The
 * pepper is derived (HKDF) from KEY_ENCRYPTION_KEY, so there is no second secret to lose. A stored hash
 * names its scheme and parameters, `<scheme>$<iterations>$<salt>$<hash>` in base64, so one written before
 * (the unpeppered 600,000-iteration scheme) still verifies and is replaced at the next sign-in.
 */

/** Cloudflare's WebCrypto refuses more PBKDF2 iterations than this; no new hash may ask for more. */
export const PBKDF2_MAX_ITERATIONS = 100_000;
export const PASSWORD_ITERATIONS = PBKDF2_MAX_ITERATIONS;

/** The schemes a stored hash may name; `maxIterations` keeps a tampered row from becoming a CPU sink. */
const SCHEMES = {
  'pbkdf2-sha256-peppered': { peppered: true, maxIterations: PBKDF2_MAX_ITERATIONS },
  // Written by the first version, which Cloudflare could not run: kept so local installations' accounts sign in.
  'pbkdf2-sha256': { peppered: false, maxIterations: 600_000 },
} as const;
type SchemeName = keyof typeof SCHEMES;
const CURRENT_SCHEME: SchemeName = 'pbkdf2-sha256-peppered';

const SALT_BYTES = 16;
const HASH_BITS = 256;
const PEPPER_INFO = 'sluice password pepper v1';

/** `secret` is KEY_ENCRYPTION_KEY, from which the pepper is derived (its first key, during a rotation). */
export async function hashPassword(password: string, secret: string): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  const hash = await derive(CURRENT_SCHEME, password, salt, PASSWORD_ITERATIONS, encryptionSecrets(secret)[0] ?? '');
  return `${CURRENT_SCHEME}$${PASSWORD_ITERATIONS}$${toBase64(salt)}$${toBase64(hash)}`;
}

export interface Verification {
  ok: boolean;
  /** The stored hash is of an older scheme or weaker: store a fresh one now that the password is known. */
  needsRehash: boolean;
}

/** Compares in constant time. A malformed stored hash, or one asking for more than its scheme allows, never matches. */
export async function verifyPassword(password: string, stored: string, secret: string): Promise<Verification> {
  const [scheme, iterationsText, saltText, hashText] = stored.split('$');
  const iterations = Number(iterationsText);
  if (!isScheme(scheme) || !Number.isInteger(iterations) || iterations < 1 || iterations > SCHEMES[scheme].maxIterations || !saltText || !hashText) {
    return { ok: false, needsRehash: false };
  }
  const expected = fromBase64(hashText);
  // During a rotation every key's pepper is tried, all of them whatever matched, so a wrong password, a right one
  // and an unknown address (the decoy) cost the same. A match under an old key is re-hashed under the new one.
  const secrets = SCHEMES[scheme].peppered ? encryptionSecrets(secret) : [secret];
  let matched = -1;
  for (const [index, candidate] of secrets.entries()) {
    const actual = await derive(scheme, password, fromBase64(saltText), iterations, candidate);
    if (expected.byteLength === actual.byteLength && crypto.subtle.timingSafeEqual(expected, actual) && matched === -1) matched = index;
  }
  const ok = matched !== -1;
  return { ok, needsRehash: ok && (scheme !== CURRENT_SCHEME || iterations < PASSWORD_ITERATIONS || matched > 0) };
}

/**
 * A hash of nothing anyone knows, checked when the email is unknown, so an unknown address costs the same
 * time as a wrong password and the answer's timing does not tell which accounts exist.
 */
let decoy: Promise<string> | undefined;
export function decoyHash(secret: string): Promise<string> {
  return (decoy ??= hashPassword(crypto.randomUUID(), secret));
}

function isScheme(name: string | undefined): name is SchemeName {
  return name !== undefined && Object.hasOwn(SCHEMES, name);
}

async function derive(scheme: SchemeName, password: string, salt: Uint8Array, iterations: number, secret: string): Promise<Uint8Array> {
  if (iterations > SCHEMES[scheme].maxIterations) throw new RangeError(`${scheme} allows at most ${SCHEMES[scheme].maxIterations} iterations`);
  const text = new TextEncoder().encode(password);
  const input = SCHEMES[scheme].peppered ? new Uint8Array(await crypto.subtle.sign('HMAC', await pepperKey(secret), text)) : text;
  const key = await crypto.subtle.importKey('raw', input, 'PBKDF2', false, ['deriveBits']);
  const bits = await crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt, iterations }, key, HASH_BITS);
  return new Uint8Array(bits);
}

const derivedKeys = new Map<string, Promise<CryptoKey>>();

/** HMAC key derived from KEY_ENCRYPTION_KEY under its own label, so it is never the AES key itself. */
function pepperKey(secret: string): Promise<CryptoKey> {
  return derivedHmacKey(secret, PEPPER_INFO);
}

/**
 * An HMAC-SHA-256 key derived (HKDF) from one KEY_ENCRYPTION_KEY under `info`: each use of a MAC has a label of
 * its own, so no two share a key, and none is the encryption key itself.
 */
export function derivedHmacKey(secret: string, info: string): Promise<CryptoKey> {
  const cacheKey = `${info}\n${secret}`;
  let key = derivedKeys.get(cacheKey);
  if (!key) {
    const raw = fromBase64(secret ?? '');
    if (raw.byteLength !== 32) throw new Error('KEY_ENCRYPTION_KEY must be the base64 of 32 bytes');
    key = crypto.subtle
      .importKey('raw', raw, 'HKDF', false, ['deriveKey'])
      .then((master) =>
        crypto.subtle.deriveKey(
          { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: new TextEncoder().encode(info) },
          master,
          { name: 'HMAC', hash: 'SHA-256', length: 256 },
          false,
          ['sign', 'verify'],
        ),
      );
    derivedKeys.set(cacheKey, key);
  }
  return key;
}

function toBase64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

function fromBase64(text: string): Uint8Array {
  try {
    return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
  } catch {
    return new Uint8Array(0);
  }
}
