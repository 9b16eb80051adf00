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
