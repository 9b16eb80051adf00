import { findPrincipal } from './accounts';
import { hasExpired, type KeyPrincipal } from '../core/records';
import type { Env } from '../core/config';
import { hashKey, PRINCIPAL_USABLE_MS } from '../core/keys';
import { ReadBehind } from '../core/read-behind';

/**
 * Who a key is (its workspace, organization and scope), remembered by this isolate by the key itself, so a
 * busy key costs neither a database read nor a SHA-256 per request. The memory answers "who", never "still
 * valid": every request with a workspace key is checked by its workspace's gate, which learns of a revocation
 * before the revocation is answered. Unknown and revoked keys are never remembered. The plan is not part of
 * it: the gate has it from the wallet. After 30 seconds a key's principal is read again beside the call that
 * finds it that old, which goes on with what was remembered; only a key's first call in an isolate, or its
 * first after ten minutes unread, waits for D1 (a key's limit reaches its gate directly when it is set: accounts.ts,
 * `setKeyLimit`; a new expiry is a day away at the soonest, so every isolate has read it by then: `setKeyExpiry`).
 */
const principals = new ReadBehind<KeyPrincipal | null>({
  name: "a key's principal",
  freshMs: 30_000,
  usableMs: PRINCIPAL_USABLE_MS,
  maxEntries: 10_000,
  keeps: (principal) => principal !== null && !principal.revoked && !hasExpired(principal),
});

/**
 * An expired key is never remembered, and one the memory holds that has expired since it was read is read again
 * before it is refused: its expiry may have been moved later meanwhile (accounts.ts, `setKeyExpiry`).
 */
export async function resolvePrincipal(env: Env, key: string, waitUntil: (promise: Promise<unknown>) => void): Promise<KeyPrincipal | null> {
  const read = async () => findPrincipal(env.DB, await hashKey(key));
  const principal = await principals.get(key, read, waitUntil);
  return principal !== null && hasExpired(principal) ? principals.readNow(key, read) : principal;
}
