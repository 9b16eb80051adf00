import { clock } from '../../core/clock';
import type { NightlyMessage } from '../../core/protocols/nightly';
import { eventId, newEvent } from '../../core/webhook-events';
import { usageReport } from '../usage-report';
import { announce } from './announce';
import type { WebhookBindings } from './bindings';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface DailyUsageBindings extends WebhookBindings {
  NIGHTLY: Queue<NightlyMessage>;
}

/** Subscribed workspaces a page message reads: one D1 query and a few sends, whatever the number of subscribers. */
export const WORKSPACES_PER_PAGE = 500;
/** What one `sendBatch` takes (Cloudflare Queues' limit). */
const MESSAGES_PER_SEND = 100;

/**
 * usage.daily, started by the api worker's cron shortly after midnight UTC for the UTC day before the clock's
 * today: one message, the first page. The work is the nightly queue's: each page sends its workspaces' reports
 * and the next page, so no invocation's work grows with the number of workspaces, and a report that fails is
 * retried on its own. The event id is derived from the workspace and the day, so a cron run twice, a page sent
 * again or a report retried queues nothing twice at an endpoint.
 */
export async function startDailyUsage(env: DailyUsageBindings): Promise<void> {
  const day = new Date(Math.floor(clock.now() / DAY_MS) * DAY_MS - DAY_MS).toISOString().slice(0, 10);
  await env.NIGHTLY.send({ kind: 'usage.daily page', day, after: '' });
}

/**
 * The next page of subscribed workspaces, by the index of the endpoints subscribed to usage.daily (`migrations/0038`;
 * the condition written as the index's, so SQLite uses it): a report message each, then the page after. A page reads
 * its subscribers, however many endpoints want other events.
 */
export async function sendDailyUsagePage(env: DailyUsageBindings, day: string, after: string): Promise<void> {
  const { results } = await env.DB.prepare(
    `SELECT DISTINCT workspace_id AS workspaceId FROM webhook_endpoints
      WHERE instr(events, '"usage.daily"') > 0 AND workspace_id > ?
      ORDER BY workspace_id LIMIT ?`,
  )
    .bind(after, WORKSPACES_PER_PAGE)
    .all<{ workspaceId: string }>();
  for (let start = 0; start < results.length; start += MESSAGES_PER_SEND) {
    const reports = results.slice(start, start + MESSAGES_PER_SEND).map(({ workspaceId }) => ({ body: { kind: 'usage.daily' as const, day, workspaceId } }));
    await env.NIGHTLY.sendBatch(reports);
  }
  if (results.length === WORKSPACES_PER_PAGE) await env.NIGHTLY.send({ kind: 'usage.daily page', day, after: results.at(-1)!.workspaceId });
}

/** One workspace's calls and spend of `day`, to its endpoints subscribed to usage.daily. */
export async function announceDailyUsage(env: WebhookBindings, workspaceId: string, day: string): Promise<void> {
  const from = new Date(`${day}T00:00:00.000Z`);
  const to = new Date(from.getTime() + DAY_MS);
  const report = await usageReport(env.DB, workspaceId, { from: from.toISOString(), to: to.toISOString(), limit: 1 });
  const id = await eventId(`usage.daily:${workspaceId}:${day}`);
  const data = { workspaceId, day, from: report.from, to: report.to, totals: report.totals, byOperation: report.byOperation };
  await announce(env, { workspaceId }, 'usage.daily', newEvent('usage.daily', data, id));
}
