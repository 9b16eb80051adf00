import { sha256Hex } from './digest';
import { randomHex } from './ids';

export const KEY_PREFIX = 'sluice_live_';
export const KEY_PATTERN = /^sluice_live_[0-9a-f]{32}$/;
/**
 * The longest an isolate serves a key's principal from memory, unread, before it waits for D1 again
 * (services/principal-cache.ts); a workspace gate remembers a revocation well past it (durable-objects/revoked-keys.ts).
 */
export const PRINCIPAL_USABLE_MS = 10 * 60_000;

export const KEY_SCOPES = ['workspace', 'agent', 'data_job', 'workspace_dryrun', 'workspace_mcp', 'meta_agent'] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

/** A new key: the brand prefix and 128 bits from the platform CSPRNG as 32 lowercase hex. */
export function generateKey(): string {
  return `${KEY_PREFIX}${randomHex(16)}`;
}

/** What the database stores and looks keys up by: the hex SHA-256 of the whole key. */
export function hashKey(key: string): Promise<string> {
  return sha256Hex(key);
}

/** A display hint that is safe to show: the prefix and the last four characters. */
export function keyHint(key: string): string {
  return `${KEY_PREFIX}…${key.slice(-4)}`;
}

const importedKeys = new Map<string, Promise<CryptoKey>>();

function encryptionKey(secret: string): Promise<CryptoKey> {
  let key = importedKeys.get(secret);
  if (!key) {
    const raw = fromBase64(secret);
    if (raw.byteLength !== 32) throw new Error('KEY_ENCRYPTION_KEY must be the base64 of 32 bytes');
    key = crypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt']);
    importedKeys.set(secret, key);
  }
  return key;
}

/**
 * KEY_ENCRYPTION_KEY is one key, or during a rotation `<new>,<old>[,...]`: the first encrypts (and peppers new
 * password hashes), every one is tried to read, so what was written under an old key stays readable.
 */
export function encryptionSecrets(secret: string): string[] {
  return secret.split(',').map((part) => part.trim()).filter(Boolean);
}

/** AES-256-GCM with a fresh 96-bit nonce; stored as base64(nonce || ciphertext). The key id is bound as associated data. */
export async function encryptKey(plaintext: string, keyId: string, secret: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv, additionalData: new TextEncoder().encode(keyId) },
    await encryptionKey(encryptionSecrets(secret)[0] ?? ''),
    new TextEncoder().encode(plaintext),
  );
  const joined = new Uint8Array(iv.byteLength + sealed.byteLength);
  joined.set(iv, 0);
  joined.set(new Uint8Array(sealed), iv.byteLength);
  return toBase64(joined);
}

/** Opens with the first key of KEY_ENCRYPTION_KEY that authenticates the ciphertext (GCM's tag tells a wrong key). */
export async function decryptKey(stored: string, keyId: string, secret: string): Promise<string> {
  const joined = fromBase64(stored);
  const secrets = encryptionSecrets(secret);
  let failure: unknown = new Error('KEY_ENCRYPTION_KEY is empty');
  for (const candidate of secrets) {
    try {
      const opened = await crypto.subtle.decrypt(
        { name: 'AES-GCM', iv: joined.slice(0, 12), additionalData: new TextEncoder().encode(keyId) },
        await encryptionKey(candidate),
        joined.slice(12),
      );
      return new TextDecoder().decode(opened);
    } catch (error) {
      failure = error;
    }
  }
  throw failure;
}

/**
 * Compares two secrets in constant time. Both sides are hashed first so the platform's
 * `timingSafeEqual` always sees equal lengths and the length of the secret is not revealed either.
 */
export async function secretsEqual(given: string, expected: string): Promise<boolean> {
  const encoder = new TextEncoder();
  const [left, right] = await Promise.all([
    crypto.subtle.digest('SHA-256', encoder.encode(given)),
    crypto.subtle.digest('SHA-256', encoder.encode(expected)),
  ]);
  return crypto.subtle.timingSafeEqual(left, right);
}

function toBase64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
}
