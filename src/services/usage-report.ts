import { z } from '@hono/zod-openapi';
import Papa from 'papaparse';
import { clock } from '../core/clock';
import { ApiError } from '../core/errors';
import { centsFromUnits } from '../core/money';
import { USAGE_ROWS_KEPT_MONTHS, usageRowsKeptSince } from './usage-retention';

const DEFAULT_SPAN_MS = 30 * 24 * 60 * 60 * 1000;
/**
 * The longest range a report covers: 13 months and a few days, so a month compares with the same month a year
 * before. Its sums read a row per day and operation used, so a range of years would read a row for each; what
 * one request reads is bounded by this, not by how long the workspace has been calling.
 */
export const MAX_SPAN_DAYS = 400;

/** The query of a usage report, the same on REST (`/v1/usage`) and in the dashboard. */
export const UsageQuery = z.strictObject({
  from: z.iso.datetime({ offset: true }).optional().openapi({ description: `Start (inclusive), ISO 8601. Default: 30 days before \`to\`. At most ${MAX_SPAN_DAYS} days before \`to\`: ask for a longer period in parts.`, example: '2026-11-01T00:00:00Z' }),
  to: z.iso.datetime({ offset: true }).optional().openapi({ description: 'End (exclusive), ISO 8601. Default: now.', example: '2026-11-22T00:00:00Z' }),
  limit: z.coerce.number().int().min(1).max(500).default(50).openapi({ description: 'Rows per page, 1-500.', example: 50 }),
  cursor: z.string().optional().openapi({ description: 'nextCursor of the previous page.', example: 'WyIyMDI2LTExLTIyVDA5OjU4OjAxLjAwMFoiLCJ1c2VfMDFhMjAyYjBmMjhjOWY4ZTdkNmM1YjRhMzkyODE3MDZmNWU0Il0' }),
});

const Totals = z.object({ calls: z.number().int(), succeeded: z.number().int(), failed: z.number().int(), costCents: z.number() });

export const UsageReport = z
  .object({
    workspaceId: z.string(),
    from: z.string().openapi({ description: 'Start of the range reported (inclusive): the one asked, widened to the start of its UTC day when it lies before `summarizedBefore`.' }),
    to: z.string().openapi({ description: 'End of the range reported (exclusive), widened likewise.' }),
    summarizedBefore: z
      .string()
      .nullable()
      .openapi({
        description: `Set when the range reaches back past the ${USAGE_ROWS_KEPT_MONTHS} months each call's row is kept: before this instant only daily totals per operation remain, so the totals count whole UTC days there and \`rows\` begin at it. Null when every call of the range is listed.`,
        example: null,
      }),
    totals: Totals.openapi({ description: 'The live calls: a sandbox key\'s calls are counted apart, in `sandbox`.' }),
    byOperation: z.array(Totals.extend({ operation: z.string() })),
    sandbox: z
      .object({ calls: z.number().int(), byOperation: z.array(z.object({ operation: z.string(), calls: z.number().int() })) })
      .openapi({ description: "Sandbox keys' calls of the range (answered with the documented example, never billed), kept out of `totals` and `byOperation`." }),
    rows: z.array(
      z.object({
        id: z.string(),
        requestId: z.string(),
        keyId: z.string(),
        operation: z.string(),
        status: z.number().int(),
        errorCode: z.string().nullable(),
        costCents: z.number(),
        cached: z.boolean(),
        latencyMs: z.number().int(),
        createdAt: z.string(),
        sandbox: z.boolean().openapi({ description: "A sandbox key's call: answered with the operation's documented example, never billed." }),
        connectionId: z.string().nullable().openapi({ description: "The connection (the workspace's own vendor account) the call went through; null for Sluice's own." }),
        jobId: z.string().nullable().openapi({ description: 'The data job whose item this call was (made with the key minted for its run); null for every other call.' }),
      }),
    ),
    nextCursor: z.string().nullable(),
  })
  .openapi('Usage');

export type UsageReport = z.infer<typeof UsageReport>;

interface UsageRow {
  id: string;
  requestId: string;
  keyId: string;
  operation: string;
  status: number;
  errorCode: string | null;
  costUnits: number;
  cached: number;
  latencyMs: number;
  createdAt: string;
  sandbox: number;
  connectionId: string | null;
  jobId: string | null;
}

interface TotalsRow {
  operation: string;
  calls: number;
  succeeded: number;
  costUnits: number;
  sandboxCalls: number;
}

/**
 * Up to `limit` rows of [from, to) newest first, after the cursor's row. A cursor within the range is the
 * page's upper bound, so the index's walk starts at the cursor: as a condition beside the range, it was only a
 * filter, and the page k pages deep walked every row newer than it (test/metering/usage-totals.test.ts). A cursor
 * at or past `to` leaves every row of the range after it: the range alone.
 */
function pageOf(db: D1Database, [workspaceId, from, to]: readonly [string, string, string], after: { createdAt: string; id: string } | undefined, limit: number): D1PreparedStatement {
  // A job's key is minted for its run alone (data_jobs.key_id is unique), so the key names the job.
  const select = `SELECT usage.id, usage.request_id AS requestId, usage.key_id AS keyId, usage.operation, usage.status, usage.error_code AS errorCode,
                         usage.cost_units AS costUnits, usage.cached, usage.latency_ms AS latencyMs, usage.created_at AS createdAt, usage.sandbox,
                         usage.connection_id AS connectionId, data_jobs.id AS jobId
                    FROM usage LEFT JOIN data_jobs ON data_jobs.key_id = usage.key_id`;
  const order = 'ORDER BY usage.created_at DESC, usage.id DESC LIMIT ?';
  if (after && after.createdAt < to) {
    return db
      .prepare(`${select} WHERE usage.workspace_id = ? AND usage.created_at >= ? AND usage.created_at <= ? AND (usage.created_at < ? OR usage.id < ?) ${order}`)
      .bind(workspaceId, from, after.createdAt, after.createdAt, after.id, limit);
  }
  return db.prepare(`${select} WHERE usage.workspace_id = ? AND usage.created_at >= ? AND usage.created_at < ? ${order}`).bind(workspaceId, from, to, limit);
}

/** Totals, a per-operation breakdown and rows newest first, of one workspace over [from, to). */
export async function usageReport(db: D1Database, workspaceId: string, query: z.infer<typeof UsageQuery>): Promise<UsageReport> {
  const { from, to, summarizedBefore } = keptRangeOf(rangeOf(query));
  const after = query.cursor ? decodeCursor(query.cursor) : undefined;
  const range = [workspaceId, from.toISOString(), to.toISOString()] as const;

  const [perOperation, page] = await db.batch<TotalsRow | UsageRow>([
    db
      .prepare(
        `SELECT operation, SUM(calls) AS calls, SUM(succeeded) AS succeeded, SUM(cost_units) AS costUnits, SUM(sandbox_calls) AS sandboxCalls FROM (${summedOver(() => 'operation', 'operation', 'operation')})
          GROUP BY operation ORDER BY calls DESC, operation`,
      )
      .bind(...summedBindings(workspaceId, from, to)),
    pageOf(db, range, after, query.limit + 1),
  ]);

  const groups = perOperation!.results as TotalsRow[];
  const rows = (page!.results as UsageRow[]).slice(0, query.limit);
  const last = rows.at(-1);
  const overall = groups.reduce(
    (sum, group) => ({ calls: sum.calls + group.calls, succeeded: sum.succeeded + group.succeeded, costUnits: sum.costUnits + group.costUnits }),
    { calls: 0, succeeded: 0, costUnits: 0 },
  );
  return {
    workspaceId,
    from: from.toISOString(),
    to: to.toISOString(),
    summarizedBefore,
    totals: totalsOf(overall),
    byOperation: groups.filter((group) => group.calls > 0).map((group) => ({ operation: group.operation, ...totalsOf(group) })),
    sandbox: {
      calls: groups.reduce((sum, group) => sum + group.sandboxCalls, 0),
      byOperation: groups
        .filter((group) => group.sandboxCalls > 0)
        .map((group) => ({ operation: group.operation, calls: group.sandboxCalls }))
        .sort((left, right) => right.calls - left.calls || left.operation.localeCompare(right.operation)),
    },
    rows: rows.map(({ costUnits, cached, sandbox, ...row }) => ({ ...row, costCents: centsFromUnits(costUnits), cached: cached === 1, sandbox: sandbox === 1 })),
    nextCursor: page!.results.length > query.limit && last ? encodeCursor(last) : null,
  };
}

export interface DailySpend {
  /** UTC day, YYYY-MM-DD. */
  day: string;
  calls: number;
  costCents: number;
}

/** Spend per UTC day over [from, to), every day present (a day without calls is a zero), oldest first. */
export async function dailySpend(db: D1Database, workspaceId: string, from: Date, to: Date): Promise<DailySpend[]> {
  const kept = keptRangeOf({ from, to });
  const { results } = await db
    .prepare(`SELECT day, SUM(calls) AS calls, SUM(cost_units) AS costUnits FROM (${summedOver((time) => (time === 'day' ? 'day' : 'substr(hour, 1, 10)'), 'substr(created_at, 1, 10)', 'day')}) GROUP BY day ORDER BY day`)
    .bind(...summedBindings(workspaceId, kept.from, kept.to))
    .all<{ day: string; calls: number; costUnits: number }>();
  const byDay = new Map(results.map((row) => [row.day, row]));
  const days: DailySpend[] = [];
  for (let day = startOfUtcDay(from); day < to.getTime(); day += 24 * 60 * 60 * 1000) {
    const key = new Date(day).toISOString().slice(0, 10);
    const row = byDay.get(key);
    days.push({ day: key, calls: row?.calls ?? 0, costCents: centsFromUnits(row?.costUnits ?? 0) });
  }
  return days;
}

export function rangeOf(query: { from?: string | undefined; to?: string | undefined }): { from: Date; to: Date } {
  const to = query.to ? new Date(query.to) : new Date(clock.now());
  const from = query.from ? new Date(query.from) : new Date(to.getTime() - DEFAULT_SPAN_MS);
  if (from >= to) throw ApiError.validation([{ field: 'from', location: 'query', message: 'Must be before `to`.' }]);
  if (to.getTime() - from.getTime() > MAX_SPAN_DAYS * DAY_MS) {
    throw ApiError.validation([{ field: 'from', location: 'query', message: `At most ${MAX_SPAN_DAYS} days before \`to\`: ask for a longer period in parts.` }]);
  }
  return { from, to };
}

/**
 * A range that begins before the oldest kept row is widened to whole UTC days at its old end (and at both
 * ends when it lies wholly before): there only `usage_daily` remains, and a partial day cannot be summed
 * from it. The range then comes from day totals up to the retention and from hours and rows after it.
 */
function keptRangeOf({ from, to }: { from: Date; to: Date }): { from: Date; to: Date; summarizedBefore: string | null } {
  const keptSince = usageRowsKeptSince();
  if (from.getTime() >= keptSince) return { from, to, summarizedBefore: null };
  const dayStart = startOfUtcDay(from);
  const end = to.getTime() <= keptSince ? Math.ceil(to.getTime() / DAY_MS) * DAY_MS : to.getTime();
  return { from: new Date(dayStart), to: new Date(end), summarizedBefore: new Date(keptSince).toISOString() };
}

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

/**
 * The sums of [from, to) without reading every row: whole UTC days come from `usage_daily`, the whole hours
 * around them from `usage_hourly` (both kept by a trigger as rows arrive, migrations/0011), and only the
 * rows of the partial hours at the two edges are read one by one. The SQL is the same for every range (a
 * part the range lacks is an empty one), so D1 keeps one plan. `day` and `row` are the grouping
 * expression over the buckets (which have `day` or `hour`) and over the rows, named `as`.
 */
function summedOver(bucket: (time: 'day' | 'hour') => string, row: string, as: string): string {
  const buckets = (table: string, time: 'day' | 'hour') =>
    `SELECT ${bucket(time)} AS ${as}, calls, succeeded, cost_units, sandbox_calls FROM ${table} WHERE workspace_id = ? AND ${time} >= ? AND ${time} < ?`;
  // A sandbox key's call counts in sandbox_calls only, as the buckets count it (migrations/0016).
  const rows = `SELECT ${row} AS ${as}, sandbox = 0 AS calls, sandbox = 0 AND status < 400 AS succeeded, cost_units, sandbox <> 0 AS sandbox_calls FROM usage WHERE workspace_id = ? AND created_at >= ? AND created_at < ?`;
  return [buckets('usage_daily', 'day'), buckets('usage_hourly', 'hour'), buckets('usage_hourly', 'hour'), rows, rows].join('\n UNION ALL ');
}

/** The bindings of `summedOver` for [from, to): whole days, the whole hours before and after them, then the partial hours at each edge. */
function summedBindings(workspaceId: string, from: Date, to: Date): string[] {
  const ceil = (ms: number, unit: number) => Math.ceil(ms / unit) * unit;
  const floor = (ms: number, unit: number) => Math.floor(ms / unit) * unit;
  const iso = (ms: number) => new Date(ms).toISOString();
  const day = (ms: number) => iso(ms).slice(0, 10);
  const hour = (ms: number) => iso(ms).slice(0, 13);
  const [start, end] = [from.getTime(), to.getTime()];
  const [firstHour, lastHour] = [ceil(start, HOUR_MS), floor(end, HOUR_MS)];
  const [firstDay, lastDay] = [ceil(start, DAY_MS), floor(end, DAY_MS)];
  const none = ['', ''];
  const parts = (days: string[], hoursBefore: string[], hoursAfter: string[], rowsBefore: string[], rowsAfter: string[]) =>
    [days, hoursBefore, hoursAfter, rowsBefore, rowsAfter].flatMap((range) => [workspaceId, ...range]);
  if (firstHour >= lastHour) return parts(none, none, none, [iso(start), iso(end)], none);
  if (firstDay >= lastDay) return parts(none, [hour(firstHour), hour(lastHour)], none, [iso(start), iso(firstHour)], [iso(lastHour), iso(end)]);
  return parts(
    [day(firstDay), day(lastDay)],
    [hour(firstHour), hour(firstDay)],
    [hour(lastDay), hour(lastHour)],
    [iso(start), iso(firstHour)],
    [iso(lastHour), iso(end)],
  );
}

function startOfUtcDay(date: Date): number {
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
}

function totalsOf(group: Omit<TotalsRow, 'operation' | 'sandboxCalls'>) {
  return { calls: group.calls, succeeded: group.succeeded, failed: group.calls - group.succeeded, costCents: centsFromUnits(group.costUnits) };
}

/** Pages are keyed on (created_at, id), newest first: stable while new calls keep arriving. */
function encodeCursor(row: Pick<UsageRow, 'createdAt' | 'id'>): string {
  return btoa(JSON.stringify([row.createdAt, row.id])).replace(/=+$/, '');
}

function decodeCursor(cursor: string): { createdAt: string; id: string } {
  try {
    const [createdAt, id] = JSON.parse(atob(cursor)) as unknown[];
    if (typeof createdAt === 'string' && typeof id === 'string') return { createdAt, id };
  } catch {
    // Falls through to the refusal below.
  }
  throw ApiError.validation([{ field: 'cursor', location: 'query', message: 'Not a cursor this API issued; pass nextCursor unchanged.' }]);
}

/** The columns of a usage export, one row per call, as `rows` of the report names them. */
export const USAGE_CSV_COLUMNS = ['createdAt', 'requestId', 'operation', 'status', 'errorCode', 'costCents', 'cached', 'sandbox', 'latencyMs', 'keyId', 'connectionId', 'jobId'] as const;

/** A cell a spreadsheet would run as a formula: one starting with =, +, -, @, a tab or a carriage return. */
const FORMULA_START = /^[=+\-@\t\r]/;

/** Rows of an export read from D1 at a time: the report's largest page. */
const EXPORT_PAGE_ROWS = 500;

/** A range of whole UTC days, as a date field gives them: `to` is the last day included. */
export const UsageExportQuery = z.strictObject({
  from: z.iso.date().optional().openapi({ description: 'First day (UTC) included. Default: 30 days before `to`.', example: '2026-11-01' }),
  to: z.iso.date().optional().openapi({ description: 'Last day (UTC) included. Default: today.', example: '2026-11-30' }),
});

/**
 * The instants a day range covers: [from's start, the day after to's start). Both days are counted, so the longest
 * range is `from` 399 days before `to`; days out of order are refused on `from`, as the report refuses instants.
 */
export function exportRangeOf(query: z.infer<typeof UsageExportQuery>): { from: Date; to: Date; summarizedBefore: string | null } {
  const today = startOfUtcDay(new Date(clock.now()));
  const last = query.to ? Date.parse(`${query.to}T00:00:00Z`) : today;
  const first = query.from ? Date.parse(`${query.from}T00:00:00Z`) : last + DAY_MS - DEFAULT_SPAN_MS;
  if (first > last) throw ApiError.validation([{ field: 'from', location: 'query', message: 'Must be on or before `to`.' }]);
  const days = (last - first) / DAY_MS + 1;
  if (days > MAX_SPAN_DAYS) {
    throw ApiError.validation([{ field: 'from', location: 'query', message: `At most ${MAX_SPAN_DAYS} days, \`to\` included (this asks for ${days}): export a longer period in parts.` }]);
  }
  return keptRangeOf({ from: new Date(first), to: new Date(last + DAY_MS) });
}

/** What an export's answer says of it: a CSV download named after the workspace and its days. */
export function usageCsvResponse(db: D1Database, workspaceId: string, range: { from: Date; to: Date; summarizedBefore: string | null }): Response {
  const days = `${range.from.toISOString().slice(0, 10)}-to-${new Date(range.to.getTime() - 1).toISOString().slice(0, 10)}`;
  const headers: Record<string, string> = {
    'content-type': 'text/csv; charset=utf-8',
    'content-disposition': `attachment; filename="usage-${workspaceId}-${days}.csv"`,
    'cache-control': 'no-store',
  };
  if (range.summarizedBefore) headers['x-usage-summarized-before'] = range.summarizedBefore;
  return new Response(streamUsageCsv(db, workspaceId, range), { headers });
}

/** An export's first lines, as its routes' documents show them. */
const USAGE_CSV_EXAMPLE = `${USAGE_CSV_COLUMNS.join(',')}\r\n2026-11-22T09:58:01.000Z,req_1a2b3c4d5e6f7a8b9c0d1e2f,web.scrape,200,,0.1,false,false,412,key_4d5e6f7a8b9c0d1e2f3a4b5c,,\r\n`;

/** An export's answer in its routes' documents: the CSV, with its first lines as the example. */
export const USAGE_CSV_ANSWER = { description: 'The calls, as a CSV download.', content: { 'text/csv': { schema: z.string(), example: USAGE_CSV_EXAMPLE } } };

/** What an export's description says of its rows, for both of its routes. */
export const USAGE_EXPORT_DESCRIPTION = `One row per call, newest first, with the columns ${USAGE_CSV_COLUMNS.join(', ')}. Calls older than the ${USAGE_ROWS_KEPT_MONTHS} months each row is kept are not listed (only their daily totals remain): the \`X-Usage-Summarized-Before\` header then says from when rows are listed.`;

/**
 * Every call of [from, to) of the workspace as CSV (RFC 4180, CRLF), newest first, read from D1 a page at a time
 * as the client reads, so memory holds one page whatever the range. Cells a spreadsheet would run as a formula are
 * escaped. Calls older than the rows kept (`summarizedBefore`) are not listed: only their daily totals remain.
 */
export function streamUsageCsv(db: D1Database, workspaceId: string, { from, to }: { from: Date; to: Date }): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const range = [workspaceId, from.toISOString(), to.toISOString()] as const;
  // papaparse's own pattern (`escapeFormulae: true`) misses a value whose first line starts a formula and that goes on.
  const line = (cells: unknown[]) => encoder.encode(`${Papa.unparse([cells], { newline: '\r\n', escapeFormulae: FORMULA_START })}\r\n`);
  let after: { createdAt: string; id: string } | undefined;
  let done = false;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        controller.enqueue(line([...USAGE_CSV_COLUMNS]));
      },
      async pull(controller) {
        if (done) return controller.close();
        let rows: UsageRow[];
        try {
          rows = (await pageOf(db, range, after, EXPORT_PAGE_ROWS).all<UsageRow>()).results;
        } catch (error) {
          // The answer's 200 went with its first line: a read that fails after it errors the stream, so the client sees a
          // download cut short rather than a file that ends as if whole.
          console.error(JSON.stringify({ level: 'error', note: 'usage export cut short', workspaceId, after: after?.createdAt ?? null, error: String(error) }));
          controller.error(error);
          return;
        }
        for (const row of rows) {
          const cells = { ...row, costCents: centsFromUnits(row.costUnits), cached: row.cached === 1, sandbox: row.sandbox === 1 };
          controller.enqueue(line(USAGE_CSV_COLUMNS.map((column) => cells[column] ?? '')));
        }
        after = rows.at(-1);
        done = rows.length < EXPORT_PAGE_ROWS;
        if (done) controller.close();
      },
    },
    { highWaterMark: 0 },
  );
}

/** A calendar month (UTC), as `YYYY-MM`. */
export const UsageMonthQuery = z.strictObject({
  month: z
    .string()
    .regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'A month as YYYY-MM.')
    .optional()
    .openapi({ description: 'The calendar month (UTC). Default: this month.', example: '2026-11' }),
});

export const WorkspaceSpend = z
  .object({
    workspaceId: z.string(),
    name: z.string(),
    deleted: z.boolean().openapi({ description: 'A deleted workspace: its calls stay on the bill.' }),
    calls: z.number().int(),
    costCents: z.number(),
  })
  .openapi('WorkspaceSpend');

export const OrganizationUsage = z
  .object({
    organizationId: z.string(),
    month: z.string(),
    totals: z.object({ calls: z.number().int(), costCents: z.number() }),
    workspaces: z.array(WorkspaceSpend).openapi({ description: 'Each live workspace, and each deleted one that spent in the month; the most spent first.' }),
  })
  .openapi('OrganizationUsage');
export type OrganizationUsage = z.infer<typeof OrganizationUsage>;

/**
 * What each workspace of an organization spent in a calendar month, deleted ones included (their calls are on the
 * organization's bill, and no workspace page shows them any more), from the day totals the usage rows keep
 * (`usage_daily`, kept beyond the rows' retention): one read of the organization's workspaces and their days.
 * Sandbox calls are not counted, as in the totals of /v1/usage.
 */
export async function organizationUsage(db: D1Database, organizationId: string, query: z.infer<typeof UsageMonthQuery>): Promise<OrganizationUsage> {
  const now = new Date(clock.now());
  const [year, month] = query.month ? query.month.split('-').map(Number) : [now.getUTCFullYear(), now.getUTCMonth() + 1];
  const from = new Date(Date.UTC(year!, month! - 1, 1)).toISOString().slice(0, 10);
  const to = new Date(Date.UTC(year!, month!, 1)).toISOString().slice(0, 10);
  const { results } = await db
    .prepare(
      `SELECT w.id AS workspaceId, w.name, w.deleted_at IS NOT NULL AS deleted, COALESCE(SUM(d.calls), 0) AS monthCalls, COALESCE(SUM(d.cost_units), 0) AS costUnits
         FROM workspaces w LEFT JOIN usage_daily d ON d.workspace_id = w.id AND d.day >= ?2 AND d.day < ?3
        WHERE w.organization_id = ?1
        GROUP BY w.id
       HAVING w.deleted_at IS NULL OR SUM(d.calls) > 0
        ORDER BY costUnits DESC, monthCalls DESC, w.name`,
    )
    .bind(organizationId, from, to)
    .all<{ workspaceId: string; name: string; deleted: number; monthCalls: number; costUnits: number }>();
  // (HAVING names SUM(d.calls), not an alias: SQLite reads a name there as a column of the group's rows first.)
  const workspaces = results.map((row) => ({ workspaceId: row.workspaceId, name: row.name, deleted: row.deleted === 1, calls: row.monthCalls, costCents: centsFromUnits(row.costUnits) }));
  const units = results.reduce((sum, row) => sum + row.costUnits, 0);
  return { organizationId, month: from.slice(0, 7), totals: { calls: workspaces.reduce((sum, row) => sum + row.calls, 0), costCents: centsFromUnits(units) }, workspaces };
}
