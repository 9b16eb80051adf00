import type { KeyLimit } from '../core/protocols/key-limits';
import { getKey, listKeys } from './accounts';
import { type ApiKeyRecord } from '../core/records';
import type { Env } from '../core/config';
import { gateOf } from './gate';
import { centsFromUnits, unitsFromCents } from '../core/money';

export interface KeyWithSpend extends ApiKeyRecord {
  spentThisMonthCents: number;
  inFlightCents: number;
  monthEndsAt: string;
}

/**
 * A workspace's API keys with what each spent this calendar month, as the workspace's gate counts it:
 * the figure its limit is checked against, exact to the unit (D1's usage rows trail it by up to half a
 * second). One gate message for the whole list.
 */
export async function listKeysWithSpend(env: Env, workspaceId: string): Promise<KeyWithSpend[]> {
  const keys = await listKeys(env.DB, workspaceId, 'workspace');
  if (keys.length === 0) return [];
  const budgets = new Map((await gateOf(env, workspaceId).keyBudgets(keys.map((key) => key.id))).map((budget) => [budget.keyId, budget]));
  return keys.map((key) => {
    const budget = budgets.get(key.id)!;
    return {
      ...key,
      spentThisMonthCents: centsFromUnits(budget.spentUnits),
      inFlightCents: centsFromUnits(budget.heldUnits),
      monthEndsAt: new Date(budget.resetsAt).toISOString(),
    };
  });
}

/**
 * Sets a key's monthly limit only if that lowers it (a limit on a key with none lowers it too), decided by
 * the statement that writes, so a raise cannot slip in between a check of the limit and the write. Null when
 * it would raise the limit or the key is revoked; the gate follows as it does `setKeyLimit`.
 */
export async function lowerKeyLimit(env: Env, key: ApiKeyRecord, monthlyLimitCents: number): Promise<ApiKeyRecord | null> {
  const written = await env.DB.prepare(
    `UPDATE api_keys SET monthly_limit_units = ?1, limit_version = limit_version + 1
      WHERE id = ?2 AND revoked_at IS NULL AND (monthly_limit_units IS NULL OR monthly_limit_units >= ?1)
      RETURNING monthly_limit_units AS limitUnits, limit_version AS version`,
  )
    .bind(unitsFromCents(monthlyLimitCents), key.id)
    .first<KeyLimit>();
  if (!written) return null;
  await gateOf(env, key.workspaceId).setKeyLimit(key.id, written);
  return getKey(env.DB, key.id);
}
