import { planInForceSql } from '../core/records';
import { clock, utcMonthOf } from '../core/clock';
import { ApiError } from '../core/errors';
import { capInForceSql } from './plan-caps';
import { type Plan, PLAN_TABLE } from '../core/plans';

/**
 * Runtime hours, the plan's monthly `runtimeHours` cap. An agent-hour is a clock hour (UTC) in which a
 * deployed agent made at least one /runtime/data call; the organization's runtime hours of a month are
 * the count of its agents' agent-hours. An agent runs on its owner's infrastructure and calls us, so
 * the hours it is active are what it uses here, as a serverless runtime bills invocations, not uptime.
 */

const HOUR_MS = 60 * 60 * 1000;

/** The UTC clock hour `now` falls in, as it is stored: '2026-11-23T05:00:00.000Z'. */
export function hourOf(now: number): string {
  return new Date(now - (now % HOUR_MS)).toISOString();
}

/** The calendar month (UTC) the runtime hours are counted in, by the injectable clock. */
export function runtimeMonth(now = clock.now()): { start: number; end: number } {
  return utcMonthOf(now);
}

/** This month's bounds as agent-hours are stored (ISO 8601), for range conditions on `hour`. */
export function monthRange(now = clock.now()): [string, string] {
  const { start, end } = runtimeMonth(now);
  return [new Date(start).toISOString(), new Date(end).toISOString()];
}

/**
 * The SQL of an organization's runtime hours in [from, to): its agents' agent-hours and its data jobs'
 * job-hours (the same definition: a clock hour in which it made calls), with the three as parameters.
 */
function usedSql(organization: string, from: string, to: string): string {
  return `((SELECT COUNT(*) FROM agent_hours WHERE organization_id = ${organization} AND hour >= ${from} AND hour < ${to})
         + (SELECT COUNT(*) FROM job_hours WHERE organization_id = ${organization} AND hour >= ${from} AND hour < ${to}))`;
}

/** The organization's runtime hours this month. */
export async function runtimeHoursUsed(db: D1Database, organizationId: string): Promise<number> {
  const [from, to] = monthRange();
  const row = await db.prepare(`SELECT ${usedSql('?1', '?2', '?3')} AS n`).bind(organizationId, from, to).first<{ n: number }>();
  return row?.n ?? 0;
}

/**
 * Agent-hours this isolate knows are counted: a call inside one needs no database. Only this hour's are
 * kept (a call is always in the current hour), so the memory never grows past the agents of one hour.
 */
const counted = new Set<string>();
let countedHour = '';

/** Forgets what this isolate counted, as a new isolate would (tests of the database path). */
export function forgetCountedHours(): void {
  counted.clear();
}

export interface AgentCaller {
  agentId: string;
  keyId: string;
  organizationId: string;
}

/**
 * Admits one /runtime/data call of an agent: inside an agent-hour already counted it goes on; one that
 * opens a new agent-hour is counted if the organization's runtime hours this month are under its cap,
 * in one INSERT whose condition is that count, so calls at once cannot pass the cap together; past it,
 * 402 PLAN_LIMIT_REACHED. The insert and the read that explains a refusal are one batch: one round trip.
 *
 * Answers 'stopped' when the agent's deployment no longer uses this key (the caller then answers as for
 * a revoked key), and 'no_plan' without a plan in force (the pipeline's own refusal says so).
 */
export async function admitAgentHour(db: D1Database, caller: AgentCaller): Promise<'admitted' | 'stopped' | 'no_plan'> {
  const now = clock.now();
  const hour = hourOf(now);
  if (hour !== countedHour) {
    counted.clear();
    countedHour = hour;
  }
  // By key too: a deployment again is checked against the database once, whatever its agent's earlier key had counted.
  const memo = `${caller.agentId} ${caller.keyId} ${hour}`;
  if (counted.has(memo)) return 'admitted';

  const [from, to] = monthRange(now);
  const nowIso = new Date(now).toISOString();
  const used = `SELECT ${usedSql('?3', '?4', '?5')}`;
  const cap = `SELECT ${capInForceSql('runtimeHours', 'o', '?6')} FROM organizations o WHERE o.id = ?3`;
  const deployed = "SELECT 1 FROM agents WHERE id = ?1 AND status = 'deployed' AND key_id = ?7";
  const [, state] = await db.batch<{ counted: number; deployed: number; used: number; cap: number | null; plan: Plan | null }>([
    db
      .prepare(
        `INSERT OR IGNORE INTO agent_hours (agent_id, hour, organization_id)
         SELECT ?1, ?2, ?3 WHERE EXISTS (${deployed}) AND (${used}) < (${cap})`,
      )
      .bind(caller.agentId, hour, caller.organizationId, from, to, nowIso, caller.keyId),
    db
      .prepare(
        `SELECT EXISTS (SELECT 1 FROM agent_hours WHERE agent_id = ?1 AND hour = ?2) AS counted, EXISTS (${deployed}) AS deployed,
                (${used}) AS used, (${cap}) AS cap, (SELECT ${planInForceSql('o', '?6')} FROM organizations o WHERE o.id = ?3) AS plan`,
      )
      .bind(caller.agentId, hour, caller.organizationId, from, to, nowIso, caller.keyId),
  ]);
  const answer = state!.results[0]!;
  if (!answer.deployed) return 'stopped';
  if (answer.counted) {
    if (counted.size >= 10_000) counted.clear();
    counted.add(memo);
    return 'admitted';
  }
  if (answer.cap === null || answer.plan === null) return 'no_plan';
  throw runtimeHoursReached(answer.plan, answer.used, answer.cap, runtimeMonth(now).end);
}

function runtimeHoursReached(plan: Plan, used: number, cap: number, monthEnd: number): ApiError {
  return new ApiError(
    'PLAN_LIMIT_REACHED',
    `The ${PLAN_TABLE[plan].name} plan allows ${cap} agent runtime hours a month; this organization uses ${used} of ${cap} this month. ` +
      'An agent-hour is a clock hour (UTC) in which an agent made a /runtime/data call: calls within hours already counted go on, a new one needs room. ' +
      `Upgrade the plan, or wait for the count to start again on ${new Date(monthEnd).toISOString().slice(0, 10)} (UTC). This call was not charged.`,
  );
}

/**
 * Admits one call of a data job under the same cap: inside a job-hour already counted it goes on; one that
 * opens a new job-hour is counted if the organization's runtime hours this month (agents' and jobs') are
 * under the plan's cap, in one conditional INSERT; past it, 402 PLAN_LIMIT_REACHED, and the job waits.
 */
export async function admitJobHour(db: D1Database, job: { jobId: string; organizationId: string }): Promise<void> {
  const now = clock.now();
  const hour = hourOf(now);
  if (hour !== countedHour) {
    counted.clear();
    countedHour = hour;
  }
  const memo = `${job.jobId} ${hour}`;
  if (counted.has(memo)) return;
  const [from, to] = monthRange(now);
  const nowIso = new Date(now).toISOString();
  const used = `SELECT ${usedSql('?3', '?4', '?5')}`;
  const cap = `SELECT ${capInForceSql('runtimeHours', 'o', '?6')} FROM organizations o WHERE o.id = ?3`;
  const [, state] = await db.batch<{ counted: number; used: number; cap: number | null; plan: Plan | null }>([
    db
      .prepare(`INSERT OR IGNORE INTO job_hours (job_id, hour, organization_id) SELECT ?1, ?2, ?3 WHERE (${used}) < (${cap})`)
      .bind(job.jobId, hour, job.organizationId, from, to, nowIso),
    db
      .prepare(
        `SELECT EXISTS (SELECT 1 FROM job_hours WHERE job_id = ?1 AND hour = ?2) AS counted, (${used}) AS used, (${cap}) AS cap,
                (SELECT ${planInForceSql('o', '?6')} FROM organizations o WHERE o.id = ?3) AS plan`,
      )
      .bind(job.jobId, hour, job.organizationId, from, to, nowIso),
  ]);
  const answer = state!.results[0]!;
  if (answer.counted) {
    if (counted.size >= 10_000) counted.clear();
    counted.add(memo);
    return;
  }
  // Without a plan the pipeline's own refusal (402 SUBSCRIPTION_REQUIRED) says so.
  if (answer.cap === null || answer.plan === null) return;
  throw runtimeHoursReached(answer.plan, answer.used, answer.cap, runtimeMonth(now).end);
}
