import { findPrincipal } from './accounts';
import type { KeyPrincipal } from '../core/records';
import type { Env } from '../core/config';
import { hashKey } from '../core/keys';

/**
 * Who a key is (its workspace, organization and scope), remembered by this isolate for 30 seconds by
 * the key itself, so a busy key costs neither a database read nor a SHA-256 per request. The memory
 * answers "who", never "still valid": every request with a workspace key is checked by its workspace's
 * gate, which learns of a revocation before the revocation is answered. Unknown and revoked keys are
 * never remembered. The plan is not part of it: the gate has it from the wallet.
 */
const REMEMBER_MS = 30_000;
const MAX_REMEMBERED = 10_000;
const remembered = new Map<string, { principal: KeyPrincipal; until: number }>();

export async function resolvePrincipal(env: Env, key: string): Promise<KeyPrincipal | null> {
  const now = Date.now();
  const entry = remembered.get(key);
  if (entry && now < entry.until) return entry.principal;

  const principal = await findPrincipal(env.DB, await hashKey(key));
  if (principal && !principal.revoked) {
    if (remembered.size >= MAX_REMEMBERED) remembered.clear();
    remembered.set(key, { principal, until: now + REMEMBER_MS });
  } else {
    remembered.delete(key);
  }
  return principal;
}
