import { unitsFromCents } from './money';

/**
 * The plans, as data: the spec's requests-per-minute figures, and everything the spec leaves "not shown"
 * (price, monthly allowance, caps), decided in docs/decisions.md. `GET /v1/plans` and the dashboard show
 * this table; the operator may override any cap per organization.
 */
export const PLAN_TABLE = {
  payg: { name: 'Pay as you go', priceCents: 0, allowanceCents: 0, rpm: 60, connectionFeeCents: 1, caps: { workspaces: 2, seats: 2, agents: 1, databases: 2, webhookEvents: 1_000, runtimeHours: 5 } },
  solo: { name: 'Solo', priceCents: 1_900, allowanceCents: 1_000, rpm: 120, connectionFeeCents: 1, caps: { workspaces: 3, seats: 1, agents: 3, databases: 5, webhookEvents: 10_000, runtimeHours: 20 } },
  toolkit: { name: 'Toolkit', priceCents: 4_900, allowanceCents: 2_500, rpm: 300, connectionFeeCents: 0.5, caps: { workspaces: 5, seats: 3, agents: 5, databases: 10, webhookEvents: 50_000, runtimeHours: 50 } },
  team: { name: 'Team', priceCents: 9_900, allowanceCents: 5_000, rpm: 300, connectionFeeCents: 0.5, caps: { workspaces: 10, seats: 10, agents: 10, databases: 25, webhookEvents: 100_000, runtimeHours: 100 } },
  toolkit_all_access: {
    name: 'Toolkit All-Access',
    priceCents: 14_900,
    allowanceCents: 7_500,
    rpm: 600,
    connectionFeeCents: 0,
    caps: { workspaces: 10, seats: 5, agents: 20, databases: 50, webhookEvents: 250_000, runtimeHours: 250 },
  },
  business: { name: 'Business', priceCents: 39_900, allowanceCents: 20_000, rpm: 600, connectionFeeCents: 0, caps: { workspaces: 50, seats: 50, agents: 100, databases: 200, webhookEvents: 1_000_000, runtimeHours: 1_000 } },
} as const satisfies Record<string, PlanTerms>;

export interface PlanTerms {
  name: string;
  /** Monthly subscription price; pay as you go has none and spends purchased balance only. */
  priceCents: number;
  /** Subscription allowance granted each billing period, spent before purchased balance. */
  allowanceCents: number;
  /** Requests per minute per workspace (spec "Request rate"). */
  rpm: number;
  /** Charged per successful call through one of the workspace's connections (its own vendor account), instead of the operation's price; 0 is valid. */
  connectionFeeCents: number;
  caps: Caps;
}

export const CAP_NAMES = ['workspaces', 'seats', 'agents', 'databases', 'webhookEvents', 'runtimeHours'] as const;
export type CapName = (typeof CAP_NAMES)[number];
export type Caps = Record<CapName, number>;

/** What each cap counts, for messages and the plans page. */
export const CAP_LABELS: Record<CapName, string> = {
  workspaces: 'workspaces',
  seats: 'seats (members and pending invitations)',
  agents: 'deployed agents',
  databases: 'workspace databases',
  webhookEvents: 'webhook events a month',
  runtimeHours: 'agent runtime hours a month',
};

export type Plan = keyof typeof PLAN_TABLE;
export const PLANS = Object.keys(PLAN_TABLE) as [Plan, ...Plan[]];

/** The plan with the lowest requests-per-minute ceiling: the window of free calls for an organization without a plan. */
export const SMALLEST_PLAN: Plan = PLANS.reduce((smallest, plan) => (PLAN_TABLE[plan].rpm < PLAN_TABLE[smallest].rpm ? plan : smallest));

/** Requests-per-minute ceiling of each plan. */
export const PLAN_RPM = Object.fromEntries(PLANS.map((plan) => [plan, PLAN_TABLE[plan].rpm])) as Record<Plan, number>;

/** Monthly subscription allowance of each plan, in cents. */
export const PLAN_ALLOWANCE_CENTS = Object.fromEntries(PLANS.map((plan) => [plan, PLAN_TABLE[plan].allowanceCents])) as Record<Plan, number>;

export function allowanceUnits(plan: Plan | null): number {
  return plan ? unitsFromCents(PLAN_ALLOWANCE_CENTS[plan]) : 0;
}

/** The ceiling that applies to a workspace: a contract's custom figure, else the plan's. */
export function requestsPerMinute(plan: Plan, rpmOverride: number | null): number {
  return rpmOverride ?? PLAN_RPM[plan];
}

/** The caps that apply to an organization: the plan's, with the operator's overrides on top; null without a plan. */
export function capsOf(plan: Plan | null, overrides: Partial<Caps> | null): Caps | null {
  if (!plan) return null;
  return { ...PLAN_TABLE[plan].caps, ...(overrides ?? {}) };
}
