import { clock } from '../core/clock';
import { PruningBudget, STATEMENTS_PER_RUN } from '../core/pruning';

/**
 * How long D1 keeps each call's usage row (and the hourly totals): 13 calendar months, so a year can be
 * compared with the same month a year before. After that a call lives on only in `usage_daily`, the
 * per-workspace, per-operation, per-UTC-day totals kept by a trigger as rows arrive (migrations/0011),
 * which are never pruned: a workspace's history costs a row per operation and day, not per call.
 */
export const USAGE_ROWS_KEPT_MONTHS = 13;


/** The first instant whose rows are still kept at `now`: the start of the UTC day 13 months back. */
export function usageRowsKeptSince(now: number = clock.now()): number {
  const date = new Date(now);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() - USAGE_ROWS_KEPT_MONTHS, date.getUTCDate());
}

/**
 * Deletes usage rows and hourly totals older than the retention, workspace by workspace through the
 * (workspace_id, created_at) index and the hourly table's key, so the work is what is deleted, not the
 * table. The workspaces visited are those with hourly totals past the retention (`usage_hourly_by_hour`): a
 * workspace's old totals go only once its old rows have, so one left half-done is visited again by the next run,
 * and one with nothing to delete costs nothing. (`+workspace_id`: without statistics, SQLite would rather walk the
 * table's key in workspace order, to read DISTINCT off it, than search the index and sort.) Run by the daily cron. Answers how many rows and hourly totals went.
 */
export async function pruneUsage(db: D1Database, now: number = clock.now(), budget = new PruningBudget()): Promise<{ rows: number; hours: number }> {
  const since = new Date(usageRowsKeptSince(now)).toISOString();
  const workspaces = (
    await db.prepare('SELECT DISTINCT +workspace_id AS id FROM usage_hourly WHERE hour < ? LIMIT ?').bind(since.slice(0, 13), STATEMENTS_PER_RUN).all<{ id: string }>()
  ).results.map((row) => row.id);
  let rows = 0;
  let hours = 0;
  for (const workspaceId of workspaces) {
    const usage = await budget.drain((limit) =>
      db.prepare('DELETE FROM usage WHERE rowid IN (SELECT rowid FROM usage WHERE workspace_id = ? AND created_at < ? LIMIT ?)').bind(workspaceId, since, limit),
    );
    rows += usage.deleted;
    if (!usage.done) return { rows, hours };
    budget.count();
    hours += (await db.prepare('DELETE FROM usage_hourly WHERE workspace_id = ? AND hour < ?').bind(workspaceId, since.slice(0, 13)).run()).meta.changes;
  }
  return { rows, hours };
}
