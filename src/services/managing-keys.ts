import { ApiError } from '../core/errors';
import type { KeyPrincipal } from '../core/records';

/**
 * Whether a key may change what its workspace trusts: the vendor accounts it calls with, where its events go, and its
 * databases' existence. In the dashboard these are its owners' and admins'; through `/v1` they take a key made by
 * someone who is an owner or admin of the organization now (read at each request, so a demotion or a departure counts
 * from the next one), or by the operator (a key with no maker). A member's key reads them, runs them and calls data,
 * as the member's dashboard does: otherwise any member could make a key and do through the API what the dashboard
 * refuses them.
 */
export async function requireManagingKey(db: D1Database, principal: Pick<KeyPrincipal, 'keyId' | 'organizationId'>, action: string): Promise<void> {
  const maker = await db
    .prepare(
      `SELECT k.created_by AS userId, (SELECT m.role FROM memberships m WHERE m.organization_id = ?2 AND m.user_id = k.created_by) AS role
         FROM api_keys k WHERE k.id = ?1`,
    )
    .bind(principal.keyId, principal.organizationId)
    .first<{ userId: string | null; role: string | null }>();
  if (maker && (maker.userId === null || maker.role === 'owner' || maker.role === 'admin')) return;
  const who = maker?.role ? `a ${maker.role} of the organization` : 'someone who is no longer a member of the organization';
  throw ApiError.forbidden(`Only keys made by an owner or admin can ${action}; this key was made by ${who}. Use a key an owner or admin made, or ask one of them.`);
}
