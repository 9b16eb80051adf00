import { nowIso } from '../core/clock';
import { planInForceSql } from '../core/records';
import { ApiError } from '../core/errors';
import { CAP_LABELS, CAP_NAMES, type CapName, type Caps, capsOf, type Plan, PLAN_TABLE, PLANS } from '../core/plans';

export interface OrganizationTerms {
  plan: Plan | null;
  /** The caps that apply (the plan's with the operator's overrides); null without a plan. */
  caps: Caps | null;
  overrides: Partial<Caps>;
}

/** The plan and caps of an organization as they apply right now. */
export async function termsOf(db: D1Database, organizationId: string): Promise<OrganizationTerms> {
  const row = await db
    .prepare(`SELECT ${planInForceSql('organizations')} AS plan, cap_overrides AS overrides FROM organizations WHERE id = ?`)
    .bind(nowIso(), organizationId)
    .first<{ plan: Plan | null; overrides: string | null }>();
  if (!row) throw ApiError.notFound(`No organization ${organizationId}.`);
  const overrides = parseOverrides(row.overrides);
  return { plan: row.plan, caps: capsOf(row.plan, overrides), overrides };
}

/** The dashboard page where an organization without a plan starts the free trial or chooses a plan. */
export function plansPageUrl(env: { APP_URL: string }, workspaceId: string): string {
  return `${env.APP_URL.replace(/\/+$/, '')}/w/${workspaceId}/plans`;
}

/** 402 SUBSCRIPTION_REQUIRED, naming the way out: the trial, at the plans page when the workspace is known. */
export function subscriptionRequired(need: string, plansUrl?: string): ApiError {
  const where = plansUrl ? `at ${plansUrl}` : "on the dashboard's Plans page";
  return new ApiError('SUBSCRIPTION_REQUIRED', `This organization has no plan yet, and ${need} need one. Start the free trial or choose a plan ${where}.`);
}

/**
 * Refuses to create one more of a capped resource: 402 SUBSCRIPTION_REQUIRED without a plan (naming
 * `plansUrl` when given), 402 PLAN_LIMIT_REACHED naming the resource and used/limit when the cap is reached.
 */
export function assertRoomFor(
  terms: OrganizationTerms,
  cap: CapName,
  used: number,
  code: 'PLAN_LIMIT_REACHED' | 'SEAT_LIMIT_REACHED' = 'PLAN_LIMIT_REACHED',
  plansUrl?: string,
): void {
  if (!terms.plan || !terms.caps) throw subscriptionRequired(`more ${CAP_LABELS[cap]}`, plansUrl);
  const limit = terms.caps[cap];
  if (used + 1 > limit) {
    const what = code === 'SEAT_LIMIT_REACHED' ? 'seats' : CAP_LABELS[cap];
    const remedy = code === 'SEAT_LIMIT_REACHED' ? ', or remove a member or a pending invitation' : cap === 'agents' ? ' or stop one' : ' or delete one';
    throw new ApiError(code, `The ${PLAN_TABLE[terms.plan].name} plan allows ${limit} ${what}; this organization uses ${used} of ${limit}. Upgrade the plan${remedy}.`);
  }
}

/**
 * The refusal of an insert that counted and found no room: always thrown. The count read after it may be lower
 * already (a delete landed between); answering as if the row had been written would hand out a place that was
 * never stored. The message names the count read, or the cap when the count fell below it.
 */
export function refuseFull(terms: OrganizationTerms, cap: CapName, used: number, code?: 'PLAN_LIMIT_REACHED' | 'SEAT_LIMIT_REACHED', plansUrl?: string): never {
  assertRoomFor(terms, cap, Math.max(used, terms.caps?.[cap] ?? used), code, plansUrl);
  throw new Error(`unreachable: a full ${cap} cap is refused`);
}

/**
 * One cap of an organization as it applies now, as an SQL expression over its row (`table`): the
 * operator's override, else the plan's figure from the plan table; NULL without a plan in force. For a
 * statement that checks a cap and writes in one step, with no read of the terms before it. Binds the
 * current time at `now` (see planInForceSql).
 */
export function capInForceSql(cap: CapName, table: string, now: string): string {
  const plan = planInForceSql(table, now);
  const figures = PLANS.map((name) => `WHEN '${name}' THEN ${PLAN_TABLE[name].caps[cap]}`).join(' ');
  return `CASE WHEN (${plan}) IS NULL THEN NULL ELSE COALESCE(json_extract(${table}.cap_overrides, '$.${cap}'), CASE ${table}.plan ${figures} END) END`;
}

/** The operator's per-organization caps; null clears them all, a cap given as null goes back to the plan's. */
export async function setCapOverrides(db: D1Database, organizationId: string, changes: Partial<Record<CapName, number | null>> | null): Promise<Partial<Caps>> {
  const current = changes === null ? {} : (await termsOf(db, organizationId)).overrides;
  const next: Partial<Caps> = { ...current };
  for (const [name, value] of Object.entries(changes ?? {}) as [CapName, number | null][]) {
    if (value === null) delete next[name];
    else next[name] = value;
  }
  await db.prepare('UPDATE organizations SET cap_overrides = ? WHERE id = ?').bind(Object.keys(next).length ? JSON.stringify(next) : null, organizationId).run();
  return next;
}

function parseOverrides(text: string | null): Partial<Caps> {
  if (!text) return {};
  const parsed = JSON.parse(text) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(parsed).filter(([name, value]) => (CAP_NAMES as readonly string[]).includes(name) && Number.isInteger(value))) as Partial<Caps>;
}
