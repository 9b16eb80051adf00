import { unitsFromCents } from './money';

/** The plans an organization can be on, with their requests-per-minute ceilings (spec "Request rate"). */
export const PLAN_RPM = {
  payg: 60,
  toolkit: 300,
  toolkit_all_access: 600,
  solo: 120,
  team: 300,
  business: 600,
} as const;

export type Plan = keyof typeof PLAN_RPM;
export const PLANS = Object.keys(PLAN_RPM) as [Plan, ...Plan[]];

/**
 * Monthly subscription allowance of each plan, in cents (not shown in the spec: docs/decisions.md).
 * Pay as you go has none: it spends purchased balance only.
 */
export const PLAN_ALLOWANCE_CENTS: Record<Plan, number> = {
  payg: 0,
  solo: 1_000,
  toolkit: 2_500,
  team: 5_000,
  toolkit_all_access: 7_500,
  business: 20_000,
};

export function allowanceUnits(plan: Plan | null): number {
  return plan ? unitsFromCents(PLAN_ALLOWANCE_CENTS[plan]) : 0;
}

/** The ceiling that applies to a workspace: a contract's custom figure, else the plan's. */
export function requestsPerMinute(plan: Plan, rpmOverride: number | null): number {
  return rpmOverride ?? PLAN_RPM[plan];
}
