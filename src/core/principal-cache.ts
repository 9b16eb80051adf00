import { findPrincipal, type KeyPrincipal } from './accounts';
import type { Env } from './config';
import { gateOf } from './gate';

/**
 * Who a key is (its workspace, organization, scope and plan), remembered by this isolate for 30 seconds
 * so a busy key does not cost a database read per request. The memory answers "who", never "still
 * valid": a remembered key is checked against its workspace's gate, which learns of a revocation
 * before the revocation is answered. Unknown and revoked keys are never remembered. A plan change
 * reaches remembered keys within the 30 seconds.
 */
const REMEMBER_MS = 30_000;
const MAX_REMEMBERED = 10_000;
const remembered = new Map<string, { principal: KeyPrincipal; until: number }>();

export async function resolvePrincipal(env: Env, keyHash: string): Promise<KeyPrincipal | null> {
  const now = Date.now();
  const entry = remembered.get(keyHash);
  if (entry && now < entry.until) {
    if (!(await gateOf(env, entry.principal.workspaceId).isRevoked(entry.principal.keyId))) return entry.principal;
    remembered.delete(keyHash);
    return { ...entry.principal, revoked: true };
  }

  const principal = await findPrincipal(env.DB, keyHash);
  if (principal && !principal.revoked) {
    if (remembered.size >= MAX_REMEMBERED) remembered.clear();
    remembered.set(keyHash, { principal, until: now + REMEMBER_MS });
  }
  return principal;
}
