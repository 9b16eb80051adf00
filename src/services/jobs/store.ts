import { clock, nowIso } from '../../core/clock';
import { PruningBudget, STATEMENTS_PER_RUN } from '../../core/pruning';
import { MAX_KEPT_ANSWER_BYTES } from '../idempotency';
import { ApiError } from '../../core/errors';
import { centsFromUnits } from '../../core/money';
import { ENDED_STATUSES, type ItemStatus, type JobStatus, type WaitingOn } from '../../core/protocols/job';

/** A job's row as the runner and the routes read it. */
export interface JobRecord {
  id: string;
  organizationId: string;
  workspaceId: string;
  operation: string;
  name: string | null;
  status: JobStatus;
  reason: string | null;
  items: number;
  succeeded: number;
  failed: number;
  spentUnits: number;
  quotedUnits: number;
  maxCostUnits: number | null;
  keyId: string | null;
  /** The key that submitted it, whose monthly limit and spend its items count in; null from the dashboard. */
  budgetKeyId: string | null;
  /** The OAuth grant that submitted it through an MCP client, whose end stops it; null otherwise. */
  grantId: string | null;
  /** When it began waiting for credits; null while it runs. */
  waitingSince: string | null;
  /** What it waits for while `waiting_for_credits`; null otherwise. */
  waitingOn: WaitingOn | null;
  /** The workspace's connection every item runs through (its credentials, the plan's fee), if any. */
  connectionId: string | null;
  /** The workspace database and table each success is written into, if any. */
  intoDatabaseId: string | null;
  intoTable: string | null;
  windowResetAt: number;
  windowLimit: number;
  windowRemaining: number;
  resumeAt: number;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  /** When its items went, JOB_RESULTS_KEPT_DAYS after it ended; null while they are kept. */
  resultsPrunedAt: string | null;
}

/** What the API answers about a job. */
export interface JobView {
  id: string;
  operation: string;
  name: string | null;
  status: JobStatus;
  reason: string | null;
  items: number;
  counts: { total: number; succeeded: number; failed: number; pending: number };
  spentCents: number;
  quotedCents: number;
  maxCostCents: number | null;
  connectionId: string | null;
  into: { databaseId: string; table: string } | null;
  /** While the job waits (the window, a retry's backoff, money): when it looks again. */
  resumesAt: string | null;
  /** While `waiting_for_credits`: money, a plan, or the submitting key's monthly limit; null otherwise. */
  waitingOn: WaitingOn | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  /** When its items are deleted (JOB_RESULTS_KEPT_DAYS after it ended); null while it runs. */
  resultsKeptUntil: string | null;
  resultsDeleted: boolean;
}

const COLUMNS = `id, organization_id AS organizationId, workspace_id AS workspaceId, operation, name, status, reason, items,
  succeeded, failed, spent_units AS spentUnits, quoted_units AS quotedUnits, max_cost_units AS maxCostUnits, key_id AS keyId, budget_key_id AS budgetKeyId, grant_id AS grantId,
  connection_id AS connectionId, into_database_id AS intoDatabaseId, into_table AS intoTable,
  window_reset_at AS windowResetAt, window_limit AS windowLimit, window_remaining AS windowRemaining,
  resume_at AS resumeAt, created_at AS createdAt, started_at AS startedAt, finished_at AS finishedAt,
  results_pruned_at AS resultsPrunedAt, waiting_since AS waitingSince, waiting_on AS waitingOn`;

export function viewOf(job: JobRecord): JobView {
  return {
    id: job.id,
    operation: job.operation,
    name: job.name,
    status: job.status,
    reason: job.reason,
    items: job.items,
    counts: { total: job.items, succeeded: job.succeeded, failed: job.failed, pending: job.items - job.succeeded - job.failed },
    spentCents: centsFromUnits(job.spentUnits),
    quotedCents: centsFromUnits(job.quotedUnits),
    maxCostCents: job.maxCostUnits === null ? null : centsFromUnits(job.maxCostUnits),
    connectionId: job.connectionId,
    into: job.intoDatabaseId && job.intoTable ? { databaseId: job.intoDatabaseId, table: job.intoTable } : null,
    resumesAt: job.resumeAt > 0 && !isEnded(job.status) ? new Date(job.resumeAt).toISOString() : null,
    waitingOn: job.status === 'waiting_for_credits' ? job.waitingOn : null,
    createdAt: job.createdAt,
    startedAt: job.startedAt,
    finishedAt: job.finishedAt,
    resultsKeptUntil: job.finishedAt === null ? null : new Date(Date.parse(job.finishedAt) + JOB_RESULTS_KEPT_DAYS * 86_400_000).toISOString(),
    resultsDeleted: job.resultsPrunedAt !== null,
  };
}

export function isEnded(status: JobStatus): boolean {
  return ENDED_STATUSES.includes(status);
}

export async function findJob(db: D1Database, id: string): Promise<JobRecord | null> {
  return db.prepare(`SELECT ${COLUMNS} FROM data_jobs WHERE id = ?`).bind(id).first<JobRecord>();
}

/** The job of a workspace; another workspace's job is as absent as one that never existed. */
export async function findWorkspaceJob(db: D1Database, workspaceId: string, id: string): Promise<JobRecord | null> {
  return db.prepare(`SELECT ${COLUMNS} FROM data_jobs WHERE id = ? AND workspace_id = ?`).bind(id, workspaceId).first<JobRecord>();
}

/** The job its data_job key was minted for. */
export async function findJobByKey(db: D1Database, keyId: string): Promise<JobRecord | null> {
  return db.prepare(`SELECT ${COLUMNS} FROM data_jobs WHERE key_id = ?`).bind(keyId).first<JobRecord>();
}

/** A workspace's jobs, newest first, after the cursor (the last page's last `createdAt|id`). */
export async function listJobs(db: D1Database, workspaceId: string, limit: number, cursor: { createdAt: string; id: string } | null): Promise<JobRecord[]> {
  const after = cursor ? 'AND (created_at < ?3 OR (created_at = ?3 AND id < ?4))' : '';
  const statement = db.prepare(`SELECT ${COLUMNS} FROM data_jobs WHERE workspace_id = ?1 ${after} ORDER BY created_at DESC, id DESC LIMIT ?2`);
  const bound = cursor ? statement.bind(workspaceId, limit, cursor.createdAt, cursor.id) : statement.bind(workspaceId, limit);
  return (await bound.all<JobRecord>()).results;
}

/** At most this many inputs go into one INSERT: a bound value stays well under D1's 2 MB row and string limit. */
const INSERT_BYTES = 512 * 1024;

/** The job's row and its items, in one batch: a job is stored whole or not at all. */
/**
 * Stores a job and its items in one batch (one transaction). With `maxUnfinished`, the job's row is written only
 * while its workspace's unfinished items and its own stay within it, counted in that statement, and its items
 * only with their row: answers false, having written nothing, when there was no room (two submissions at once
 * cannot both take the last of it).
 */
export async function insertJob(db: D1Database, job: JobRecord, inputs: unknown[], once?: { key: string; digest: string }, maxUnfinished = Number.MAX_SAFE_INTEGER): Promise<boolean> {
  const ended = ENDED_STATUSES.map((status) => `'${status}'`).join(', ');
  const statements = [
    db
      .prepare(
        `INSERT INTO data_jobs (id, organization_id, workspace_id, operation, name, status, items, quoted_units, max_cost_units, key_id, budget_key_id, connection_id, into_database_id, into_table, created_at, idempotency_key, submission_digest, grant_id)
         SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?19
          WHERE (SELECT COALESCE(SUM(items - succeeded - failed), 0) FROM data_jobs WHERE workspace_id = ?3 AND status NOT IN (${ended})) + ?7 <= ?18`,
      )
      .bind(
        job.id,
        job.organizationId,
        job.workspaceId,
        job.operation,
        job.name,
        job.status,
        job.items,
        job.quotedUnits,
        job.maxCostUnits,
        job.keyId,
        job.budgetKeyId,
        job.connectionId,
        job.intoDatabaseId,
        job.intoTable,
        job.createdAt,
        once?.key ?? null,
        once?.digest ?? null,
        maxUnfinished,
        job.grantId,
      ),
  ];
  let chunk: string[] = [];
  let bytes = 0;
  let first = 0;
  const flush = () => {
    if (chunk.length === 0) return;
    // json_each hands every element back as JSON text (a nested object's `value` is its text already).
    statements.push(
      db
        .prepare('INSERT INTO data_job_items (job_id, idx, input) SELECT ?1, ?2 + key, json(value) FROM json_each(?3) WHERE EXISTS (SELECT 1 FROM data_jobs WHERE id = ?1)')
        .bind(job.id, first, `[${chunk.join(',')}]`),
    );
    first += chunk.length;
    chunk = [];
    bytes = 0;
  };
  for (const input of inputs) {
    const text = JSON.stringify(input);
    if (bytes + text.length > INSERT_BYTES) flush();
    chunk.push(text);
    bytes += text.length + 1;
  }
  flush();
  const [stored] = await db.batch(statements);
  return stored!.meta.changes === 1;
}

/** The job a workspace submitted with an Idempotency-Key, with the digest of its submission; null when there is none. */
export async function jobOfIdempotencyKey(db: D1Database, workspaceId: string, key: string): Promise<{ id: string; digest: string } | null> {
  return db
    .prepare('SELECT id, submission_digest AS digest FROM data_jobs WHERE workspace_id = ? AND idempotency_key = ?')
    .bind(workspaceId, key)
    .first<{ id: string; digest: string }>();
}

/** Lets a job's Idempotency-Key go (a job that never started): a submission with it is then a new one. */
export function releaseIdempotencyKey(db: D1Database, jobId: string): D1PreparedStatement {
  return db.prepare('UPDATE data_jobs SET idempotency_key = NULL WHERE id = ?').bind(jobId);
}

export interface PendingItem {
  idx: number;
  input: string;
  attempts: number;
  retryAt: number;
}

/** The next pending items in input order. */
export async function pendingItems(db: D1Database, jobId: string, limit: number): Promise<PendingItem[]> {
  const rows = await db
    .prepare("SELECT idx, input, attempts, retry_at AS retryAt FROM data_job_items WHERE job_id = ? AND status = 'pending' ORDER BY idx LIMIT ?")
    .bind(jobId, limit)
    .all<PendingItem>();
  return rows.results;
}

/** One item's outcome as the runner writes it. */
export type ItemWrite =
  /** `goneBytes`: the call succeeded and was charged on an earlier run of its slice, and its answer is not here: too large to keep, or (0) lost with that run. */
  | { idx: number; status: 'succeeded'; data: unknown; costUnits: number; attempts: number; goneBytes?: number }
  | { idx: number; status: 'failed'; code: string; message: string; attempts: number }
  | { idx: number; status: 'pending'; attempts: number; retryAt: number };

/** Where a job's items and their answers are kept: D1 for the rows, R2 for answers over INLINE_DATA_BYTES. */
export interface ItemStores {
  DB: D1Database;
  RESULTS: R2Bucket;
}

/**
 * The most of one item's answer a job keeps, as JSON: the bound of an answer kept for replays, so a job keeps
 * no more of one call than a repeated request would get back.
 */
export const MAX_ITEM_DATA_BYTES = MAX_KEPT_ANSWER_BYTES;

/**
 * The largest answer kept inline in its D1 row. A larger one goes to R2 and the row keeps its key, so D1 holds
 * a bounded few kilobytes an item however large the answers (a job of scrapes would otherwise fill the shared
 * database: D1 ends at 10 GB).
 */
export const INLINE_DATA_BYTES = 2_048;

/** The R2 keys of a job's answers begin with this; the job's results are deleted by it. */
export function answersPrefix(jobId: string): string {
  return `jobs/${jobId}/`;
}

/**
 * The statements that write a slice's outcomes, an item already decided left as it is. Answers over
 * INLINE_DATA_BYTES are stored in R2 first, each under a key of its own: a slice run twice leaves the first
 * run's object unreferenced rather than overwrite a decided item's answer (the job's prefix deletes both).
 */
export async function itemWrites(stores: ItemStores, jobId: string, writes: readonly ItemWrite[]): Promise<D1PreparedStatement[]> {
  return Promise.all(writes.map((write) => itemWrite(stores, jobId, write)));
}

async function itemWrite({ DB: db, RESULTS: results }: ItemStores, jobId: string, write: ItemWrite): Promise<D1PreparedStatement> {
  if (write.status === 'succeeded') {
    const data = JSON.stringify(write.data ?? null);
    const bytes = write.goneBytes ?? new TextEncoder().encode(data).byteLength;
    // Succeeded and charged all the same: the row says so, and where to get the answer.
    const [code, note] =
      write.goneBytes === 0
        ? ['ANSWER_LOST', "The call succeeded and was charged, but its answer was lost: the job's run stopped during the call. Submit the item again to receive an answer."]
        : bytes > MAX_ITEM_DATA_BYTES
          ? ['ANSWER_TOO_LARGE', `The answer (${bytes} bytes) is larger than a job keeps (${MAX_ITEM_DATA_BYTES} bytes); the call succeeded and was charged. Make it directly to receive the answer.`]
          : [null, null];
    let key: string | null = null;
    if (!note && bytes > INLINE_DATA_BYTES) {
      key = `${answersPrefix(jobId)}${write.idx}-${crypto.randomUUID()}.json`;
      await results.put(key, data, { httpMetadata: { contentType: 'application/json' } });
    }
    return db
      .prepare(
        "UPDATE data_job_items SET status = 'succeeded', data = ?3, data_key = ?8, data_bytes = ?9, cost_units = ?4, attempts = ?5, error_code = ?6, error_message = ?7 WHERE job_id = ?1 AND idx = ?2 AND status = 'pending'",
      )
      .bind(jobId, write.idx, note ? 'null' : key ? null : data, write.costUnits, write.attempts, code, note, key, key ? bytes : null);
  }
  if (write.status === 'failed') {
    return db
      .prepare("UPDATE data_job_items SET status = 'failed', error_code = ?3, error_message = ?4, attempts = ?5 WHERE job_id = ?1 AND idx = ?2 AND status = 'pending'")
      .bind(jobId, write.idx, write.code, write.message, write.attempts);
  }
  return db
    .prepare("UPDATE data_job_items SET attempts = ?3, retry_at = ?4 WHERE job_id = ?1 AND idx = ?2 AND status = 'pending'")
    .bind(jobId, write.idx, write.attempts, write.retryAt);
}

/** How a slice leaves its job: the rate window's state, its next look (0 while it runs), status, reason and wait. */
export interface SliceEnd {
  window: { resetAt: number; limit: number; remaining: number };
  resumeAt: number;
  status: JobStatus;
  reason: string | null;
  waitingOn: WaitingOn | null;
}

/**
 * The one batch that ends a slice: its items' outcomes, then how it leaves the job. The job's counts and spend
 * follow its items as they are decided (a trigger, migrations/0028_job_counts_kept.sql), so the batch costs the
 * same rows whatever the job decided before it; counted again from the items, it grew with the job.
 */
export async function sliceWrites(stores: ItemStores, jobId: string, writes: readonly ItemWrite[], end: SliceEnd): Promise<D1PreparedStatement[]> {
  const { DB: db } = stores;
  return [
    ...(await itemWrites(stores, jobId, writes)),
    saveWindow(db, jobId, end.window),
    setResumeAt(db, jobId, end.resumeAt),
    setStatus(db, jobId, end.status, end.reason, nowIso(), end.waitingOn),
  ];
}

/** The reason of a job that has not ended, its status as it is (a job ended by `finishJob` keeps it). */
export function setReason(db: D1Database, jobId: string, reason: string): D1PreparedStatement {
  return db.prepare("UPDATE data_jobs SET reason = ?2 WHERE id = ?1 AND status NOT IN ('succeeded', 'failed', 'cancelled')").bind(jobId, reason);
}

/**
 * Moves a job that has not ended to `status`; an ended job (a cancel) is never moved back. `waitingOn` says what
 * a job moved to `waiting_for_credits` waits for; any other status clears it.
 */
export function setStatus(db: D1Database, jobId: string, status: JobStatus, reason: string | null, at: string, waitingOn: WaitingOn | null = null): D1PreparedStatement {
  const ended = isEnded(status);
  return db
    .prepare(
      `UPDATE data_jobs SET status = ?2, reason = ?3,
         started_at = COALESCE(started_at, CASE WHEN ?2 IN ('running', 'waiting_for_credits') THEN ?4 END),
         waiting_since = CASE WHEN ?2 = 'waiting_for_credits' THEN COALESCE(waiting_since, ?4) END,
         waiting_on = CASE WHEN ?2 = 'waiting_for_credits' THEN ?6 END,
         finished_at = CASE WHEN ?5 THEN ?4 ELSE finished_at END
       WHERE id = ?1 AND status NOT IN ('succeeded', 'failed', 'cancelled')`,
    )
    .bind(jobId, status, reason, at, ended ? 1 : 0, waitingOn);
}

export function saveWindow(db: D1Database, jobId: string, window: { resetAt: number; limit: number; remaining: number }): D1PreparedStatement {
  return db
    .prepare('UPDATE data_jobs SET window_reset_at = ?2, window_limit = ?3, window_remaining = ?4 WHERE id = ?1')
    .bind(jobId, window.resetAt, window.limit, window.remaining);
}

/** When the job looks again (epoch ms), or 0 while it runs. */
export function setResumeAt(db: D1Database, jobId: string, at: number): D1PreparedStatement {
  return db.prepare('UPDATE data_jobs SET resume_at = ?2 WHERE id = ?1').bind(jobId, at);
}

export interface ItemRow {
  index: number;
  input: unknown;
  status: ItemStatus;
  data?: unknown;
  error?: { code: string; message: string };
  costCents: number;
}

/** An item's row as D1 keeps it. */
export interface StoredItem {
  idx: number;
  input: string;
  status: ItemStatus;
  data: string | null;
  data_key: string | null;
  /** The size of the answer kept in R2 (null inline). */
  data_bytes: number | null;
  error_code: string | null;
  error_message: string | null;
  cost_units: number;
}

/** An item as the results show it, given its answer's JSON (inline, or read from R2). */
function itemOf(row: StoredItem, data: string | null): ItemRow {
  return {
    index: row.idx,
    input: JSON.parse(row.input),
    status: row.status,
    ...(row.status === 'succeeded' ? { data: JSON.parse(data ?? 'null') } : {}),
    // A failure's reason, or why a success carries no data (its answer was too large to keep).
    ...(row.status === 'failed' || row.error_code !== null ? { error: { code: row.error_code ?? 'INTERNAL_ERROR', message: row.error_message ?? '' } } : {}),
    costCents: centsFromUnits(row.cost_units),
  };
}

/** A page of a job's item rows after index `after`, in input order, optionally of one status; answers kept in R2 not yet read. */
export async function itemRows(db: D1Database, jobId: string, after: number, limit: number, status: ItemStatus | null): Promise<StoredItem[]> {
  const only = status ? 'AND status = ?4' : '';
  const statement = db.prepare(
    `SELECT idx, input, status, data, data_key, data_bytes, error_code, error_message, cost_units FROM data_job_items WHERE job_id = ?1 AND idx > ?2 ${only} ORDER BY idx LIMIT ?3`,
  );
  return (await (status ? statement.bind(jobId, after, limit, status) : statement.bind(jobId, after, limit)).all<StoredItem>()).results;
}

/** The R2 object of a row's answer; gone only when the job's results were deleted while they were read. */
async function storedAnswer(results: R2Bucket, jobId: string, idx: number, key: string): Promise<R2ObjectBody> {
  const object = await results.get(key);
  if (!object) throw ApiError.notFound(`The answer of item ${idx} of job ${jobId} is no longer kept: the job's results were deleted.`);
  return object;
}

/** One item with its answer, whichever store keeps it. */
export async function readItem(results: R2Bucket, jobId: string, row: StoredItem): Promise<ItemRow> {
  return itemOf(row, row.data_key === null ? row.data : await (await storedAnswer(results, jobId, row.idx, row.data_key)).text());
}

/**
 * The most answer bytes one JSON page carries (at least one item, whatever its size): a page of 1,000 items of
 * 1 MB each would not fit an isolate. A page cut short by it has a nextCursor like any other.
 */
export const PAGE_ANSWER_BYTES = 8 * 1_048_576;

/** Answers read from R2 at once: an invocation has six connections open at most, and a body not yet read holds one. */
const R2_READS_AT_ONCE = 4;

/** The answer bytes a row brings to a page, known from D1 alone. */
function answerBytes(row: StoredItem): number {
  return row.data_key === null ? (row.data?.length ?? 0) : (row.data_bytes ?? MAX_ITEM_DATA_BYTES);
}

/**
 * One page of results after `cursor` (the last page's last index), as JSON answers it. Where the page ends is
 * decided from D1 (each answer's size), then only its answers are read, a few at a time.
 */
export async function resultsPage(
  { DB: db, RESULTS: results }: ItemStores,
  jobId: string,
  query: { cursor?: string | undefined; limit: number; status?: ItemStatus | undefined },
): Promise<{ items: ItemRow[]; nextCursor: string | null }> {
  const after = query.cursor === undefined ? -1 : Number(query.cursor);
  const rows = await itemRows(db, jobId, after, query.limit + 1, query.status ?? null);
  const asked = rows.slice(0, query.limit);
  let size = 0;
  let bytes = 0;
  for (const row of asked) {
    bytes += answerBytes(row);
    if (size > 0 && bytes > PAGE_ANSWER_BYTES) break;
    size += 1;
  }
  const page = asked.slice(0, size);
  const items: ItemRow[] = new Array(page.length);
  let next = 0;
  const lane = async () => {
    while (next < page.length) {
      const index = next++;
      items[index] = await readItem(results, jobId, page[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(R2_READS_AT_ONCE, page.length) }, lane));
  const more = size < asked.length || rows.length > query.limit;
  return { items, nextCursor: more ? String(items.at(-1)!.index) : null };
}

/**
 * Items of a workspace's jobs not yet ended that are still to run: what is queued in D1 on its behalf now. The
 * ended statuses are written into the statement as they are in the partial index `data_jobs_unfinished_by_workspace`
 * (migrations/0029), as literals and in the same order: bound as parameters or listed in another order, SQLite
 * cannot tell that the index holds every row asked for, and reads every job the workspace ever ran.
 */
export async function unfinishedItems(db: D1Database, workspaceId: string): Promise<number> {
  const ended = ENDED_STATUSES.map((status) => `'${status}'`).join(', ');
  const row = await db
    .prepare(`SELECT COALESCE(SUM(items - succeeded - failed), 0) AS n FROM data_jobs WHERE workspace_id = ? AND status NOT IN (${ended})`)
    .bind(workspaceId)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

/** How long a job's items (inputs and answers) are kept after it ends. */
export const JOB_RESULTS_KEPT_DAYS = 30;

/** Refuses to page or stream the results of a job whose items are gone, saying when and why. */
export function assertResultsKept(job: JobRecord): void {
  if (job.resultsPrunedAt === null) return;
  throw ApiError.notFound(
    `The results of job ${job.id} were kept ${JOB_RESULTS_KEPT_DAYS} days after it ended (${job.finishedAt?.slice(0, 10)}) and are gone since ${job.resultsPrunedAt.slice(0, 10)}; its counts and spend remain.`,
  );
}

/**
 * Deletes the items of jobs that ended more than JOB_RESULTS_KEPT_DAYS ago, a job at a time: its answers in R2
 * first, then its rows in chunks, then the mark. A run stopped half-way leaves the job unmarked, and the next
 * run deletes what is left. Run by the daily cron. Answers how many jobs and items went.
 */
export async function pruneJobResults(stores: ItemStores, now: number = clock.now(), budget = new PruningBudget()): Promise<{ jobs: number; items: number }> {
  const { DB: db } = stores;
  const before = new Date(now - JOB_RESULTS_KEPT_DAYS * 86_400_000).toISOString();
  const ended = await db
    .prepare('SELECT id FROM data_jobs WHERE finished_at IS NOT NULL AND results_pruned_at IS NULL AND finished_at < ? ORDER BY finished_at LIMIT ?')
    .bind(before, STATEMENTS_PER_RUN)
    .all<{ id: string }>();
  let jobs = 0;
  let items = 0;
  for (const { id } of ended.results) {
    if (!(await budget.drainBucket(stores.RESULTS, answersPrefix(id)))) return { jobs, items };
    const drained = await budget.drain((limit) => db.prepare('DELETE FROM data_job_items WHERE rowid IN (SELECT rowid FROM data_job_items WHERE job_id = ? LIMIT ?)').bind(id, limit));
    items += drained.deleted;
    if (!drained.done) return { jobs, items };
    budget.count();
    await db.prepare('UPDATE data_jobs SET results_pruned_at = ? WHERE id = ?').bind(new Date(now).toISOString(), id).run();
    jobs += 1;
  }
  return { jobs, items };
}
