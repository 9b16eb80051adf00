import type { Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { clock } from '../../core/clock';
import { toHex } from '../../core/digest';
import { randomHex } from '../../core/ids';
import { encryptionSecrets } from '../../core/keys';
import type { DashboardEnv } from '../context';
import { derivedHmacKey } from './passwords';
import { isSecure } from './sessions';

/**
 * Browsers a person has signed in from (OWASP's "device cookies"). Sign-in failures are counted per email
 * address, five a quarter hour, so anyone who knows an address can keep its owner at 429 by guessing wrong five
 * times every quarter hour. A browser that signed in to that address before carries a cookie saying so, signed
 * with a key derived from KEY_ENCRYPTION_KEY; its attempts are counted apart (five a quarter hour of its own), so
 * the owner signs in while the address's count is full. A guesser has no such cookie for an account not theirs.
 * The signature covers when the password was last set, so a new password (changed or reset) makes every cookie
 * signed before it worthless: whoever once knew the old one keeps no count of their own.
 */
const DEVICE_INFO = 'sluice known device v1';
/** A year and a month: browsers keep a cookie at most 400 days. */
const DEVICE_COOKIE_MAX_AGE_S = 400 * 24 * 60 * 60;

function cookieName(c: Context<DashboardEnv>): string {
  return isSecure(c) ? '__Host-sluice_device' : 'sluice_device';
}

/**
 * The account a device cookie is signed for: the account itself (an address deleted with its account and signed up
 * again is another account), its address, and when its password was last set (null: at sign-up).
 */
export interface DeviceAccount {
  id: string;
  email: string;
  passwordChangedAt: string | null;
}

/** `payload` signed under the key for `info` derived from the newest KEY_ENCRYPTION_KEY, as hex. */
async function signed(c: Context<DashboardEnv>, info: string, payload: Uint8Array): Promise<string> {
  const key = await derivedHmacKey(encryptionSecrets(c.env.KEY_ENCRYPTION_KEY)[0] ?? '', info);
  return toHex(new Uint8Array(await crypto.subtle.sign('HMAC', key, payload)));
}

/** Whether the hex `signature` signs `payload` under the key for `info` of any KEY_ENCRYPTION_KEY of a rotation. */
async function signedUnderAnyKey(c: Context<DashboardEnv>, info: string, signature: string, payload: Uint8Array): Promise<boolean> {
  const mac = Uint8Array.from(signature.match(/../g) ?? [], (pair) => parseInt(pair, 16));
  for (const secret of encryptionSecrets(c.env.KEY_ENCRYPTION_KEY)) {
    // HMAC verification in WebCrypto compares in constant time.
    if (await crypto.subtle.verify('HMAC', await derivedHmacKey(secret, info), mac, payload)) return true;
  }
  return false;
}

const encode = (id: string, account: DeviceAccount) => new TextEncoder().encode(`${id}\n${account.id}\n${account.email}\n${account.passwordChangedAt ?? ''}`);

/** This browser's device id when its cookie was signed for `account` as it is now (under any key of a rotation), else null. */
export async function knownDevice(c: Context<DashboardEnv>, account: DeviceAccount): Promise<string | null> {
  const match = /^([0-9a-f]{32})\.([0-9a-f]{64})$/.exec(getCookie(c, cookieName(c)) ?? '');
  if (!match) return null;
  const [, id, signature] = match as unknown as [string, string, string];
  return (await signedUnderAnyKey(c, DEVICE_INFO, signature, encode(id, account))) ? id : null;
}

/**
 * A browser the person chose to remember at the second step of a sign-in: for 30 days its sign-ins take the password
 * alone. Its cookie holds the day it ends, signed (a key derived from KEY_ENCRYPTION_KEY) over that day, the account,
 * when its password was last set and the two-factor setup in force: a new password, new recovery codes or two-factor
 * turned off and on again make every such cookie worthless.
 */
const TRUSTED_INFO = 'sluice browser remembered for the second factor v1';
export const REMEMBERED_BROWSER_DAYS = 30;

function trustedCookieName(c: Context<DashboardEnv>): string {
  return isSecure(c) ? '__Host-sluice_remembered' : 'sluice_remembered';
}

const trustedPayload = (until: string, account: DeviceAccount, setupId: string) =>
  new TextEncoder().encode(`${until}\n${account.id}\n${account.passwordChangedAt ?? ''}\n${setupId}`);

/** Whether this browser was remembered by `account` under its setup `setupId`, and its 30 days have not ended. */
export async function rememberedForSecondFactor(c: Context<DashboardEnv>, account: DeviceAccount, setupId: string): Promise<boolean> {
  const match = /^(\d{1,15})\.([0-9a-f]{64})$/.exec(getCookie(c, trustedCookieName(c)) ?? '');
  if (!match || Number(match[1]) <= clock.now()) return false;
  return signedUnderAnyKey(c, TRUSTED_INFO, match[2]!, trustedPayload(match[1]!, account, setupId));
}

/** Remembers this browser for `account`'s second factor, for 30 days. */
export async function rememberForSecondFactor(c: Context<DashboardEnv>, account: DeviceAccount, setupId: string): Promise<void> {
  const until = String(clock.now() + REMEMBERED_BROWSER_DAYS * 86_400_000);
  const signature = await signed(c, TRUSTED_INFO, trustedPayload(until, account, setupId));
  setCookie(c, trustedCookieName(c), `${until}.${signature}`, { httpOnly: true, secure: isSecure(c), sameSite: 'Strict', path: '/', maxAge: REMEMBERED_BROWSER_DAYS * 86_400 });
}

/** Marks this browser as one `account` signed in from: its id kept when it had one, the cookie signed anew. */
export async function rememberDevice(c: Context<DashboardEnv>, account: DeviceAccount, id: string = randomHex(16)): Promise<void> {
  const signature = await signed(c, DEVICE_INFO, encode(id, account));
  setCookie(c, cookieName(c), `${id}.${signature}`, { httpOnly: true, secure: isSecure(c), sameSite: 'Strict', path: '/', maxAge: DEVICE_COOKIE_MAX_AGE_S });
}
