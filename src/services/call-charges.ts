import type { Env } from '../core/config';
import { gateOf } from './gate';
import { walletOf } from './wallet';

/**
 * What a call that succeeded was charged, by its id, or null when it did not succeed: read where its charge
 * goes, in the order it goes there. The workspace's gate (a charge not yet handed to the wallet), the wallet's
 * ledger, then D1's usage rows (kept well past a key's day). The gate hands a charge on once the wallet has
 * it, and a capture the wallet folds into its day's row had its usage row in D1 before the fold, so one a read
 * misses the next finds. Read the other way round, a charge that moved on between two reads was missed by both.
 */
export async function chargeOfCall(env: Env, owner: { organizationId: string; workspaceId: string }, callId: string): Promise<number | null> {
  const waiting = await gateOf(env, owner.workspaceId).waitingChargeOf(callId);
  if (waiting !== null) return waiting;
  const captured = await walletOf(env, owner.organizationId).captureOf(callId);
  if (captured !== null) return captured;
  return env.DB.prepare('SELECT cost_units FROM usage WHERE id = ? AND status = 200 AND cost_units > 0').bind(callId).first<number>('cost_units');
}
