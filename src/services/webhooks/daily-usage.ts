import { clock } from '../../core/clock';
import { sha256Hex } from '../../core/digest';
import { usageReport } from '../usage-report';
import { announce } from './announce';
import type { WebhookBindings } from './bindings';
import { newEvent } from '../../core/webhook-events';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * usage.daily: for each workspace with an endpoint subscribed to it, the calls and spend of the UTC day
 * before the clock's today. Run by the api worker's cron shortly after midnight UTC. The event id is
 * derived from the workspace and the day, so a cron that runs twice queues nothing twice.
 */
export async function announceDailyUsage(env: WebhookBindings): Promise<{ workspaces: number; day: string }> {
  const to = Math.floor(clock.now() / DAY_MS) * DAY_MS;
  const from = to - DAY_MS;
  const day = new Date(from).toISOString().slice(0, 10);
  const { results } = await env.DB.prepare(
    `SELECT DISTINCT workspace_id AS workspaceId FROM webhook_endpoints WHERE EXISTS (SELECT 1 FROM json_each(events) WHERE json_each.value = 'usage.daily')`,
  ).all<{ workspaceId: string }>();
  for (const { workspaceId } of results) {
    // One workspace's failure is logged and does not keep the others from their report.
    await announceDay(env, workspaceId, day, from, to).catch((error: unknown) => {
      console.error(JSON.stringify({ level: 'error', note: 'usage.daily not announced', workspaceId, day, error: String(error) }));
    });
  }
  return { workspaces: results.length, day };
}

async function announceDay(env: WebhookBindings, workspaceId: string, day: string, from: number, to: number): Promise<void> {
  {
    const report = await usageReport(env.DB, workspaceId, { from: new Date(from).toISOString(), to: new Date(to).toISOString(), limit: 1 });
    const id = `evt_${(await sha256Hex(`usage.daily:${workspaceId}:${day}`)).slice(0, 24)}`;
    const data = { workspaceId, day, from: report.from, to: report.to, totals: report.totals, byOperation: report.byOperation };
    await announce(env, { workspaceId }, 'usage.daily', newEvent('usage.daily', data, id));
  }
}
