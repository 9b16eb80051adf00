import { type ApiKeyRecord, listKeys } from './accounts';
import type { Env } from './config';
import { gateOf } from './gate';
import { centsFromUnits } from './money';

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
