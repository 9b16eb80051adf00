/**
 * `npm run bench`: the local stack under load, on loopback, in workerd reached directly on its own
 * sockets (no wrangler proxy). For each target it prints throughput under load (BENCH_CONNECTIONS,
 * default 20) and latency with one connection (so p50 is the cost of a call, not time spent queueing):
 *   - a bare worker answering the same JSON (the floor of this machine),
 *   - a bare worker that fetches the fake upstream and relays it (the floor of any upstream call),
 *   - a bare worker and object doing only what the metered design must (the floor of a metered call),
 *     the same with one object call instead of two, and one object call answering a balance,
 *   - GET /v1/credits (authentication + a wallet read), with one key and with 1,000 keys in rotation,
 *   - the metered company-by-domain call (authentication, window, hold, upstream, capture, usage row), in
 *     turns with the skeleton that does the same cache work (in the bare workers' workerd, and again in the
 *     stack's own workerd, so the process's cost is the same on both sides), with the kernel's part of each
 *     row's CPU and its write system calls and bytes a call (sockets and SQLite's WAL pages, which
 *     `npm run bench:instructions` does not count), and again in turns with the same call from
 *     1,000 workspaces of the organization called in rotation (the wallet's work per workspace),
 *     then what those calls added to the wallets' and D1's files per call, and the api's resident memory
 *     after 150 inputs of ~850 KB whose vendor is not configured (nothing about an input may stay),
 *   - the same call as an MCP tool call (mcp worker, service binding, the same pipeline),
 *   - a scrape of a 200 KB page by the built-in web provider (fetch, Readability, Markdown), with the
 *     peak resident memory of the stack's workerd while it ran,
 *   - /health and the metered call again while another organization scrapes hostile pages (600, 5,000
 *     and 100,000 nested <div>s, one element of 200,000 attributes) without pause from HOSTILE_SCRAPERS
 *     clients (each must be refused), and /health again while another customer's database statement runs
 *     away (each stopped at its bound),
 *   - the fake upstream alone (its own process),
 *   - GET /v1/usage (a month's totals and the first page) of a workspace with 1,000 and with 100,000 calls
 *     of history spread over the month, written straight to D1 as the wallet's outbox writes them,
 * then the metered/floor throughput ratio and the latency the pipeline adds over the upstream.
 * Local state lives on tmpfs (BENCH_STATE_ROOT, default /dev/shm): the figures are the software's,
 * not this machine's disk's. BENCH_ONLY (comma-separated words, e.g. `hostile,scrape`) runs only the rows
 * whose names contain one of them, to iterate on a few; the summary lines of rows not run are left out.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import WebSocket from 'ws';
import { Log, LogLevel, Miniflare } from 'miniflare';
import company from '../fixtures/linkedin-data-api/get-company-by-domain.json' with { type: 'json' };
import { startStack } from '../../scripts/stack';
import type { BrowserService } from '../../scripts/browser-service';
import { opsClient, type OpsClient } from '../../scripts/lib/ops-client';
import { startFakeLinkedin } from '../fakes/linkedin-loopback';
import { HOSTILE_RENDERS, startRenderSite } from '../node/support/render-site';
import { Pool } from 'undici';
import { cpuMs, kernelBetween, kernelWork, loadBlock, median, type KernelWork, preciseCpuMs, quantile, quietAfter, servingWorkerd, tcpResets, tcpResetsSince, workerdChildren } from './measure';
import { SKELETON_MODES, skeletonWorker } from './skeleton';
import { unboundedOrganization } from './accounts';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const STATE_ROOT = process.env.BENCH_STATE_ROOT ?? (existsSync('/dev/shm') ? '/dev/shm' : tmpdir());

interface Figures {
  name: string;
  /** Resident memory of the stack's workerd before this row and the highest while it ran, where measured. */
  baselineRssMb?: number;
  peakRssMb?: number;
  requestsPerSecond: number;
  loadedP99: number;
  p50: number;
  mean: number;
  p99: number;
  failures: number;
  /** What the failures were, when there were some: answers other than 2xx, and the load tool's errors (timeouts among them). */
  failureKinds?: string;
  /** CPU time of the workerd processes serving the target, per request of the loaded run: holds up on a busy machine. */
  cpuMsPerRequest?: number;
  /** Of that, the kernel's: its CPU time, and the write system calls and bytes a request (`kernelWork`). */
  kernelPerRequest?: KernelWork;
}

/** A request per call; `fresh` makes each one different, so the response cache never answers it. */
interface Target {
  headers?: Record<string, string>;
  /** workerd processes whose CPU time the row reports. */
  cpuOf?: number[];
  fresh?: (sequence: number) => { path?: string; body?: string; headers?: Record<string, string> };
}

let sequence = 0;

const ONLY = process.env.BENCH_ONLY?.split(',').map((word) => word.trim()).filter(Boolean);

/** Whether a row is run: all of them, unless BENCH_ONLY names some. */
function runs(name: string): boolean {
  return !ONLY || ONLY.some((word) => name.includes(word));
}

const ROTATION_ROW = 'GET /v1/credits, 1,000 keys in rotation';
const WORKSPACES_ROW = 'metered call, 1,000 workspaces of one organization in rotation';
const ONE_WORKSPACE_ROW = 'metered call from one workspace, in turns with the 1,000 workspaces';
const QUIET_LINE = 'metered call to each of the 1,000 workspaces after 13 s idle';
const LARGE_INPUTS_LINE = 'large inputs';
/** The cached skeleton's worker in the stack's own workerd, and its row. */
const IN_STACK_SKELETON = 'bench-skeleton-cached';
const IN_STACK_SKELETON_ROW = "the same skeleton with the response cache's work, served by the stack's workerd";
const STORAGE_LINE = 'bytes per call';
const INTERLEAVED_ROW = 'metered call and the cached skeleton in blocks that alternate';
const INSPECTOR_PORT = Number(process.env.SLUICE_INSPECTOR_PORT ?? 19229);
const USAGE_ROWS = { small: 'GET /v1/usage, 1,000 calls of history', large: 'GET /v1/usage, 100,000 calls of history' };

/**
 * `count` usage rows of a workspace over the 30 days before now, made by SQLite itself in one statement:
 * five operations, two keys, one call in ten failed, each success 1 cent.
 */
async function seedUsage(db: Awaited<ReturnType<Miniflare['getD1Database']>>, workspace: { organizationId: string; workspaceId: string }, count: number): Promise<void> {
  const span = 30 * 24 * 60 * 60 * 1000;
  await db
    .prepare(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?3)
       INSERT INTO usage (id, request_id, organization_id, workspace_id, key_id, operation, status, error_code, cost_units, cached, latency_ms, created_at)
       SELECT 'use_bench_' || ?2 || '_' || i, 'req_bench_' || i, ?1, ?2, 'key_bench_' || (i % 2),
              CASE i % 5 WHEN 0 THEN 'linkedin.get-company-by-domain' WHEN 1 THEN 'web.scrape' WHEN 2 THEN 'web.search' WHEN 3 THEN 'seo.serp-google-organic' ELSE 'x.user-info' END,
              CASE WHEN i % 10 = 0 THEN 422 ELSE 200 END, CASE WHEN i % 10 = 0 THEN 'PROVIDER_ERROR' END, CASE WHEN i % 10 = 0 THEN 0 ELSE 10000 END, 0, 40,
              strftime('%Y-%m-%dT%H:%M:%fZ', (?4 - ?5 + (i + 0.5) * ?5 / ?3) / 1000.0, 'unixepoch')
         FROM n`,
    )
    .bind(workspace.organizationId, workspace.workspaceId, count, Date.now(), span)
    .run();
}
const HOSTILE_SCRAPERS = Number(process.env.BENCH_HOSTILE_SCRAPERS ?? 2);
/** Pages that must each be refused with 422 within the scraper's bounds: deep nesting, and one element of 200,000 attributes. */
const HOSTILE_PAGES = process.env.BENCH_HOSTILE_PAGES ? process.env.BENCH_HOSTILE_PAGES.split(',') : ['/nested/600', '/nested/5000', '/nested/100000', '/attributes/200000'];

/** Scrapes of hostile pages, without pause, until stopped; answers the statuses they got. */
function scrapeHostilePages(api: string, headers: Record<string, string>, pageServer: string): { stop: () => Promise<Record<number, number>> } {
  let running = true;
  const statuses: Record<number, number> = {};
  const client = async (offset: number) => {
    for (let n = offset; running; n++) {
      const url = `${pageServer}${HOSTILE_PAGES[n % HOSTILE_PAGES.length]}?n=${n}`;
      const response = await fetch(`${api}/scrape`, { method: 'POST', headers, body: JSON.stringify({ url }) });
      await response.arrayBuffer();
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
    }
  };
  const clients = Array.from({ length: HOSTILE_SCRAPERS }, (_, index) => client(index));
  return {
    stop: async () => {
      running = false;
      await Promise.all(clients);
      return statuses;
    },
  };
}

const RUNAWAY_ROW = 'GET /health while a database statement runs away';
/** 10^12 rows to count: passes the static screen (no recursion without LIMIT) and runs until its bound stops it. */
const RUNAWAY_SQL = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 1000000) SELECT count(*) FROM c a, c b';

/** Runaway statements in one database, one after another, until stopped; answers the statuses they got. */
function runDatabaseRunaways(api: string, headers: Record<string, string>): { stop: () => Promise<Record<number, number>> } {
  let running = true;
  const statuses: Record<number, number> = {};
  const client = (async () => {
    const created = await fetch(`${api}/v1/db/databases`, { method: 'POST', headers, body: JSON.stringify({ name: 'runaway' }) });
    const { data } = (await created.json()) as { data: { id: string } };
    while (running) {
      const response = await fetch(`${api}/v1/db/databases/${data.id}/query`, { method: 'POST', headers, body: JSON.stringify({ sql: RUNAWAY_SQL }) });
      await response.arrayBuffer();
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
      // While the databases' process restarts, its calls answer 500 at once: no need to spin on them.
      if (response.status !== 400) await new Promise((resolve) => setTimeout(resolve, 250));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await client;
      return statuses;
    },
  };
}

/** What autocannon is given for a target: its URL and headers, and a request made afresh for each call when `fresh`. */
function requestOf(url: string, target: Target) {
  const { fresh, headers = {} } = target;
  const first = fresh?.(0) ?? {};
  return {
    url,
    headers,
    ...(first.body ? { method: 'POST' as const, body: first.body } : {}),
    ...(fresh ? { requests: [{ setupRequest: (request: autocannon.Request) => ({ ...request, ...fresh(++sequence) }) }] } : {}),
  };
}

async function load(name: string, url: string, target: Target = {}): Promise<Figures | undefined> {
  if (!runs(name)) return undefined;
  const { cpuOf = [] } = target;
  const request = requestOf(url, target);
  // A short warm-up so the first isolate start and JIT are not in the figures.
  await autocannon({ ...request, connections: CONNECTIONS, duration: 2 });
  const cpuBefore = cpuMs(cpuOf);
  const errors = new Map<string, number>();
  const resetsBefore = tcpResets();
  const loaded = await withErrorsNoted(autocannon({ ...request, connections: CONNECTIONS, duration: DURATION_S }), 'loaded', errors);
  const cpuSpent = cpuMs(cpuOf) - cpuBefore;
  const single = await withErrorsNoted(autocannon({ ...request, connections: 1, duration: Math.max(2, DURATION_S / 2) }), 'one connection', errors);
  const resets = errors.size > 0 ? tcpResetsSince(resetsBefore) : undefined;
  return {
    name,
    requestsPerSecond: loaded.requests.average,
    loadedP99: loaded.latency.p99,
    p50: single.latency.p50,
    mean: single.latency.mean,
    p99: single.latency.p99,
    failures: loaded.non2xx + loaded.errors + single.non2xx + single.errors,
    ...failureKindsOf([loaded, single], errors, resets),
    ...(cpuOf.length > 0 && loaded.requests.total > 0 ? { cpuMsPerRequest: cpuSpent / loaded.requests.total } : {}),
  };
}

/**
 * How a row's failed requests failed, for the warning that names them: statuses other than 2xx, errors, timeouts,
 * the load tool's errors by run and message (`errors`, from `withErrorsNoted`), and the kernel's TCP resets over
 * the row when there were errors (`resets`, from `tcpResetsSince`).
 */
function failureKindsOf(results: autocannon.Result[], errors = new Map<string, number>(), resets?: string): { failureKinds?: string } {
  const sum = (part: 'non2xx' | 'errors' | 'timeouts') => results.reduce((total, result) => total + result[part], 0);
  if (sum('non2xx') + sum('errors') === 0) return {};
  const statuses = results.flatMap((result) => Object.entries(result.statusCodeStats ?? {}).filter(([status]) => !status.startsWith('2')).map(([status, { count = 0 }]) => `${count} x ${status}`));
  const messages = [...errors].map(([message, count]) => `${count} x ${message}`);
  return {
    failureKinds:
      `${sum('non2xx')} answers not 2xx${statuses.length ? ` (${statuses.join(', ')})` : ''}, ${sum('errors')} errors of the load tool (${sum('timeouts')} of them timeouts)` +
      (messages.length ? `: ${messages.join('; ')}` : '') +
      (resets ? `; the kernel over the row: ${resets}` : ''),
  };
}

/**
 * A load tool's run whose request errors are counted into `errors` by run and message, as they happen. Without a
 * callback, autocannon answers its running instance made thenable, which its types call a promise.
 */
function withErrorsNoted(run: Promise<autocannon.Result>, label: string, errors: Map<string, number>): Promise<autocannon.Result> {
  (run as unknown as autocannon.Instance).on('reqError', (error: Error & { code?: string }) => {
    const message = `${label}: ${error.code ?? error.name} ${error.message}`.slice(0, 160);
    errors.set(message, (errors.get(message) ?? 0) + 1);
  });
  return run;
}

/**
 * Each row of `loadInTurns` gets TURNS turns of TURN_CALLS calls unless it says otherwise (the rotation's turn
 * is one round of its 1,000 workspaces), and its CPU is read once its workerd has gone quiet after it (TURN_TAIL):
 * at least 700 ms (the gate reports within 100 ms, the wallet writes usage rows to D1 within 500 ms), then until
 * 300 ms pass with no more than a clock tick of CPU, at most 5 s. BENCH_TURN_CALLS (default 500) lengthens
 * the turns, so a profiler gets more of each row. BENCH_TURNS (default 8) sets their number: a turn of item 5
 * moves by ±40 points on this machine, and with four turns runs of the same code gave from 23 % to 95 % (2026-11-29).
 */
const TURNS = Number(process.env.BENCH_TURNS ?? 8);
const TURN_CALLS = Number(process.env.BENCH_TURN_CALLS ?? 500);
const TURN_TAIL = { minMs: 700, windowMs: 300, maxMs: 5_000 };
/**
 * Calls of each of item 5's rows before their turns (BENCH_WARM_CALLS). V8 optimizes a function only after it
 * has run for a while, and the product has some fifty times the skeleton's code, much of it run once a report
 * (every fifty calls or so): after 300 warm-up calls, a counted turn still spent 3.2 % of the product's
 * instructions in V8's optimizing compilers, against 0.1 % of the skeleton's (`npm run bench:instructions`,
 * 2026-11-29), part of it warm-up an isolate pays once.
 */
const WARM_CALLS = Number(process.env.BENCH_WARM_CALLS ?? 5_000);
/**
 * workerd drops an object idle for 10 s (its SQLite closed, its constructor run again at the next call).
 * Cloudflare takes an object that could hibernate (no timer, no awaited fetch, no event in progress) out of
 * memory after 10 s idle too, and runs its constructor again at the next call (the Durable Objects lifecycle
 * page); the gate is such an object. The rotation rows measure a workspace called every few seconds, so a
 * round of the rows longer than this would measure a restart instead, and the ratio line says when one was.
 */
const OBJECT_IDLE_S = 10;

/**
 * What a ratio line adds about its turns: how long the longest turn's workerd took to go quiet after it (one
 * that reached TURN_TAIL's bound left work that may have landed in the next turn), and a round of the rows
 * longer than OBJECT_IDLE_S, after which workerd had dropped the row's objects.
 */
function roundNote(row: TurnFigures, afresh = 'its objects were started afresh'): string {
  const tail = `  (turns went quiet within ${row.longestTail.toFixed(1)} s of their load${row.longestTail * 1_000 >= TURN_TAIL.maxMs ? `, one only at the ${TURN_TAIL.maxMs / 1_000} s bound: its leftover work may count in the next turn` : ''}`;
  const round = row.longestRound >= OBJECT_IDLE_S ? `; a round of the rows took ${row.longestRound.toFixed(1)} s, longer than the ${OBJECT_IDLE_S} s after which workerd drops an idle object: ${afresh}` : '';
  return `${tail}${round})`;
}

/** A row loaded in turns: its figures over all of them, and each turn's own. */
interface TurnFigures extends Figures {
  turns: Array<{ requestsPerSecond: number; cpuMsPerRequest?: number }>;
  /** The longest time, in seconds, from the start of one of this row's turns to the start of its next. */
  longestRound: number;
  /** The longest a turn's workerd took to go quiet after its load, in seconds (TURN_TAIL). */
  longestTail: number;
}

/** One turn of `calls` calls: its load's time, and the CPU `pids` spent once they went quiet after it (TURN_TAIL). */
async function measuredTurn(request: autocannon.Options, pids: number[], calls: number) {
  const started = performance.now();
  const cpuBefore = cpuMs(pids);
  const kernelBefore = kernelWork(pids);
  // autocannon notices its last answer at its next sample: every 20 ms, not every second, so the turn's time holds.
  const loaded = await autocannon({ ...request, connections: CONNECTIONS, amount: calls, sampleInt: 20 });
  const seconds = (performance.now() - started) / 1_000;
  const tail = await quietAfter(pids, TURN_TAIL);
  return { loaded, seconds, tail, cpuSpent: cpuMs(pids) - cpuBefore, kernel: kernelBetween(kernelBefore, kernelWork(pids)) };
}

/**
 * Loads rows that are compared with each other in turns, one at a time, instead of one whole row after the
 * other. Rows a minute apart ran on a machine in different states (other processes, a collection, state the
 * rows before left), which moved one row against another by up to a third between runs of the same code; in
 * turns, whatever changes over the minute falls on each row alike. A turn is a number of calls, not a time,
 * so a rotation's turn calls each of its workspaces once, in order. A turn's CPU is read once its workerd is
 * quiet after the load (TURN_TAIL), so the work its calls leave for later counts for the row that left it, not
 * for the next; the longest tail is printed with the ratios, and one that reached its bound is named there.
 * The turns are printed beside the ratios, so a run shows how far its own turns agree.
 */
async function loadInTurns(rows: Array<{ name: string; url: string; target: Target; calls?: number; warmCalls?: number }>): Promise<Array<TurnFigures | undefined>> {
  const running = rows.map((row) => {
    if (!runs(row.name)) return undefined;
    // Each row its own run of sequence numbers, so a rotation walks its workspaces in order across turns.
    let calls = sequence;
    sequence += 1_000_000;
    const fresh = row.target.fresh;
    const target = fresh ? { ...row.target, fresh: () => fresh(++calls) } : row.target;
    return { ...row, request: requestOf(row.url, target), starts: [] as number[], tails: [] as number[], turns: [] as Array<{ requests: number; seconds: number; cpuMs: number; kernel: KernelWork; p99: number; failures: number }> };
  });
  // The calls a row asks for before anything is measured (item 5's rows: WARM_CALLS), so V8 has optimized its code.
  for (const row of running) if (row?.warmCalls) await autocannon({ ...row.request, connections: CONNECTIONS, amount: row.warmCalls });
  // A warm-up before the turns: two seconds of a row, or a whole round of a row with a number of calls (a
  // rotation), so every object its first turn calls has just been called. A rotation's warm-up of two seconds
  // reached 600 of its 1,000 gates; the other 400, last called by the first calls before the row, were idle
  // past workerd's 10 s by its first turn, and 434 of that turn's 1,000 calls each started a gate (counted in
  // the gate's constructor, 2026-11-29): a turn at 0.52 of one workspace, where the three after it, with no start,
  // gave 0.79, 0.67 and 1.12. The warm-up's start counts as a turn's for the longest round (roundNote).
  for (const row of running) {
    if (!row) continue;
    row.starts.push(performance.now());
    await autocannon({ ...row.request, connections: CONNECTIONS, ...(row.calls ? { amount: row.calls } : { duration: 2 }) });
  }
  for (let turn = 0; turn < TURNS; turn++) {
    for (const row of running) {
      if (!row) continue;
      row.starts.push(performance.now());
      const { loaded, seconds, tail, cpuSpent, kernel } = await measuredTurn(row.request, row.target.cpuOf ?? [], row.calls ?? TURN_CALLS);
      row.tails.push(tail);
      row.turns.push({ requests: loaded.requests.total, seconds, cpuMs: cpuSpent, kernel, p99: loaded.latency.p99, failures: loaded.non2xx + loaded.errors });
    }
  }
  const figures: Array<TurnFigures | undefined> = [];
  for (const row of running) {
    if (!row) {
      figures.push(undefined);
      continue;
    }
    const single = await autocannon({ ...row.request, connections: 1, duration: Math.max(2, DURATION_S / 2) });
    const sum = (part: 'requests' | 'seconds' | 'cpuMs' | 'failures') => row.turns.reduce((total, turn) => total + turn[part], 0);
    const measuresCpu = (row.target.cpuOf ?? []).length > 0;
    figures.push({
      name: row.name,
      requestsPerSecond: sum('requests') / sum('seconds'),
      loadedP99: Math.max(...row.turns.map((turn) => turn.p99)),
      p50: single.latency.p50,
      mean: single.latency.mean,
      p99: single.latency.p99,
      failures: sum('failures') + single.non2xx + single.errors,
      ...(measuresCpu && sum('requests') > 0 ? { cpuMsPerRequest: sum('cpuMs') / sum('requests') } : {}),
      ...(measuresCpu && sum('requests') > 0 ? { kernelPerRequest: perRequest(row.turns.map((turn) => turn.kernel), sum('requests')) } : {}),
      turns: row.turns.map((turn) => ({ requestsPerSecond: turn.requests / turn.seconds, ...(measuresCpu && turn.requests > 0 ? { cpuMsPerRequest: turn.cpuMs / turn.requests } : {}) })),
      longestRound: Math.max(0, ...row.starts.slice(1).map((start, index) => (start - row.starts[index]!) / 1_000)),
      longestTail: Math.max(0, ...row.tails) / 1_000,
    });
  }
  return figures;
}

/**
 * Item 5 read a second way: the product and the cached skeleton in its own workerd, loaded in blocks of
 * BLOCK_CALLS calls that alternate (product then skeleton, then skeleton then product) for INTERLEAVED_ROUNDS
 * rounds, over connections kept open from block to block. Turns of 500 calls a second or two long, one row's
 * after the other's, each waiting for its workerd to go quiet, leave each row to a different second of a
 * machine whose speed moves from one second to the next; blocks a tenth of a second long share its moments
 * evenly. The two rows are served by two processes, so no block waits for quiet: what a block's calls leave for
 * later (the gate's reports, the wallet's writes to D1) runs in the product's own process and counts for it
 * whenever it runs, and each row's CPU is its process's from the first block to quiet after the last. CPU is
 * read to the nanosecond (`preciseCpuMs`), so each block's own figure is printed too, as quantiles: a block
 * carries some of the work the one before it left, the total does not.
 *
 * The method's own error, measured with the skeleton against itself (BENCH_INTERLEAVED_AGAINST=skeleton loads
 * the cached skeleton in the stack's workerd in the product's place): 0 and 1 % over two runs, 2026-11-29. The
 * machine still weighs the product and the skeleton differently from one run to the next: ten runs read item 5
 * from 15 to 40 % (docs/performance.md).
 */
const INTERLEAVED_ROUNDS = Number(process.env.BENCH_INTERLEAVED_ROUNDS ?? 160);
const BLOCK_CALLS = Number(process.env.BENCH_BLOCK_CALLS ?? 100);
/** BENCH_INTERLEAVED_AGAINST=skeleton: the skeleton in the stack's workerd in the product's place, the same work on both sides. */
const SELF_CHECK = process.env.BENCH_INTERLEAVED_AGAINST === 'skeleton';

interface InterleavedRow {
  origin: string;
  path: (n: number) => string;
  headers: Record<string, string>;
  pids: number[];
}

interface Interleaved {
  /** CPU a call of each row over the whole run, its quiet tail included. */
  cpuMsPerCall: [number, number];
  /** Each block's CPU a call, per row, in the order run. */
  blocks: [number[], number[]];
  failures: number;
  seconds: number;
}

async function loadInterleaved(rows: [InterleavedRow, InterleavedRow]): Promise<Interleaved> {
  const pools = rows.map((row) => new Pool(row.origin, { connections: CONNECTIONS, pipelining: 1 }));
  let failures = 0;
  /** One block of a row: BLOCK_CALLS calls, each a new input; answers its CPU a call. */
  const block = async (index: 0 | 1) => {
    const row = rows[index];
    const loaded = await loadBlock(pools[index]!, row.pids, BLOCK_CALLS, CONNECTIONS, () => ({ path: row.path(++sequence), headers: row.headers }));
    failures += loaded.failures;
    return loaded.cpuMsPerCall;
  };
  try {
    // Both rows warmed first with as many calls as the turns' rows (WARM_CALLS), in blocks, nothing counted: V8
    // optimizes a function only after it has run a while, and after 2,000 calls a run of the product read 33-40 %.
    for (let round = 0; round < Math.ceil(WARM_CALLS / BLOCK_CALLS); round++) for (const index of [0, 1] as const) await block(index);
    failures = 0;
    const started = performance.now();
    const before = rows.map((row) => preciseCpuMs(row.pids));
    const blocks: [number[], number[]] = [[], []];
    for (let round = 0; round < INTERLEAVED_ROUNDS; round++) {
      for (const index of round % 2 === 0 ? ([0, 1] as const) : ([1, 0] as const)) blocks[index].push(await block(index));
    }
    const seconds = (performance.now() - started) / 1_000;
    await Promise.all(rows.map((row) => quietAfter(row.pids, TURN_TAIL)));
    const calls = INTERLEAVED_ROUNDS * BLOCK_CALLS;
    const total = rows.map((row, index) => (preciseCpuMs(row.pids) - before[index]!) / calls);
    return { cpuMsPerCall: [total[0]!, total[1]!], blocks, failures, seconds };
  } finally {
    await Promise.all(pools.map((pool) => pool.close()));
  }
}

/** How far `value` is over `base`, in whole percent of `base`. */
function percentOver(base: number, value: number): string {
  return ((100 * (value - base)) / base).toFixed(0);
}

/** Turns' kernel work summed, a request. */
function perRequest(turns: KernelWork[], requests: number): KernelWork {
  const total = (part: keyof KernelWork) => turns.reduce((sum, turn) => sum + turn[part], 0) / requests;
  return { ms: total('ms'), writes: total('writes'), bytes: total('bytes') };
}

function residentMb(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** How much the stack's workerd grew while a row ran. */
function growth(row: Figures): string {
  return row.baselineRssMb === undefined || row.peakRssMb === undefined ? 'growth not measured' : `+${row.peakRssMb - row.baselineRssMb} MB`;
}

/**
 * A process and every process below it (chromium's renderers, zygote and utility processes), from
 * /proc/PID/task/PID/children: file reads on libuv's pool, no process spawned. The bench's own event loop
 * relays the browser's DevTools sockets and serves the fake site, so the sampler must never block it (a
 * `pgrep` per process every 100 ms did, and starved every render it was measuring).
 */
async function withDescendants(pids: number[]): Promise<number[]> {
  const all = [...new Set(pids)];
  for (let index = 0; index < all.length; index++) {
    const pid = all[index]!;
    const children = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
    for (const child of children.split(' ').filter(Boolean).map(Number)) if (!all.includes(child)) all.push(child);
  }
  return all;
}

/** Proportional set size: a process's private pages plus its share of those it shares (read off the event loop). */
async function proportionalMb(pid: number): Promise<number> {
  const rollup = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8').catch(() => '');
  const kb = /Pss:\s+(\d+) kB/.exec(rollup)?.[1];
  return kb ? Number(kb) / 1024 : 0;
}

const RENDER_ROWS = 'rendered scrape';

/**
 * The browser's rows (issue 29): p50 of a scrape the browser renders (the loopback single-page app) beside the
 * fast path's (a page read as served), one at a time; then workerd plus browser memory at 4 concurrent renders
 * (RENDER_LIMITS.concurrentRenders; an organization renders at most RENDERS_AT_ONCE, 4 too), sampled every
 * 100 ms, asked by two workspaces of the organization (`headers`' and `others`'). Renders take seconds, so
 * these are counted calls, not autocannon's timed load.
 */
async function renderRows(api: string, headers: Record<string, string>, others: Record<string, string>, site: string, workerd: number[], browser: BrowserService | undefined): Promise<string[]> {
  if (!runs(RENDER_ROWS)) return [];
  // Without a browser the stack's service answers 503 and a shell page is read as served: figures, but not the browser's.
  if (!browser || !existsSync(browser.executablePath)) {
    process.exitCode = 1;
    const missing = browser ? `no chromium at ${browser.executablePath} (apt-get install -y chromium, or set CHROMIUM_PATH; .ci/run installs it)` : 'the stack has no browser service';
    return [`the browser's rows: not run, ${missing}`];
  }
  let n = 0;
  const scrape = async (url: string, as = headers) => {
    const started = performance.now();
    const response = await fetch(`${api}/scrape`, { method: 'POST', headers: as, body: JSON.stringify({ url: `${url}?n=${++n}`, maxAge: 0 }) });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`A bench scrape of ${url} answered ${response.status}: ${text.slice(0, 300)}`);
    return performance.now() - started;
  };
  const p50 = (times: number[]) => [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
  await scrape(`${site}/spa`); // starts a browser session, as the first render of an isolate does
  const rendered: number[] = [];
  for (let index = 0; index < 10; index++) rendered.push(await scrape(`${site}/spa`));
  const fast: number[] = [];
  for (let index = 0; index < 20; index++) fast.push(await scrape(`${site}/article`));

  const resident = (pids: number[]) => pids.reduce((sum, pid) => sum + residentMb(pid), 0);
  // Chromium's processes share most of their pages (its binary, its fonts): each counts its proportional share (PSS), not RSS.
  let peak = { total: 0, workerd: 0, browser: 0 };
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const workerdMb = resident(workerd);
      const browserMb = (await Promise.all((await withDescendants(browser.browserPids())).map(proportionalMb))).reduce((sum, mb) => sum + mb, 0);
      if (workerdMb + browserMb > peak.total) peak = { total: workerdMb + browserMb, workerd: workerdMb, browser: browserMb };
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  const failedRenders: string[] = [];
  const beside = probeHealth(api);
  try {
    // A render that fails under load is counted and named, not the end of the bench.
    for (let round = 0; round < 3; round++) await Promise.all([0, 1, 2, 3].map((index) => scrape(`${site}/spa`, index % 2 ? others : headers).catch((error: Error) => failedRenders.push(error.message))));
  } finally {
    sampling = false;
    await sampler;
  }
  const health = await beside.stop();

  // The hostile pages of the render tests, all three at once, as the issue names them: each must answer 422
  // within its call's time while /health keeps answering fast.
  const hostile = probeHealth(api);
  const hostileAnswers = await Promise.all(
    HOSTILE_RENDERS.map(async ({ path, timeout }) => {
      const started = performance.now();
      const response = await fetch(`${api}/scrape`, { method: 'POST', headers, body: JSON.stringify({ url: `${site}${path}?n=${++n}`, maxAge: 0, timeout, waitFor: 200 }) });
      await response.arrayBuffer();
      return { path, status: response.status, late: performance.now() - started > timeout + 5_000 };
    }),
  );
  const hostileHealth = await hostile.stop();
  const refused = hostileAnswers.filter((answer) => answer.status === 422 && !answer.late).length;
  const otherwise = hostileAnswers.filter((answer) => answer.status !== 422 || answer.late).map((answer) => `${answer.path} ${answer.status}${answer.late ? ' late' : ''}`);
  if (otherwise.length > 0 || failedRenders.length > 0) process.exitCode = 1;

  const ms = (value: number) => value.toFixed(0);
  return [
    `rendered scrape of a single-page app: p50 ${ms(p50(rendered))} ms over 10 (browser session reused), against the fast path (the page read as served) p50 ${ms(p50(fast))} ms over 20 (aim: rendered under 2,000 ms; the fast path no slower than the 200 KB scrape row)`,
    `4 concurrent renders (two workspaces of one organization, 2 each), 3 rounds: workerd (RSS) plus browser (PSS) memory at peak ${ms(peak.total)} MB (workerd ${ms(peak.workerd)} MB, chromium and its renderers ${ms(peak.browser)} MB; aim: under 1,500 MB on this machine)${failedRenders.length ? `; ${failedRenders.length} of 12 renders failed, the first: ${failedRenders[0]}` : ''}`,
    `GET /health while 4 renders run: ${health.describe()} (aim: p50 under 50 ms, slowest under 250 ms, none unanswered)`,
    `hostile renders at once (${HOSTILE_RENDERS.map(({ path }) => path).join(', ')}): ${refused} of ${HOSTILE_RENDERS.length} answered 422 within their call's time${otherwise.length ? `, otherwise ${otherwise.join(', ')}` : ''}; meanwhile GET /health ${hostileHealth.describe()} (aim: all 422, slowest /health under 250 ms, none unanswered)`,
  ];
}

/** /health asked one at a time, 50 ms apart, until stopped: the worker must keep answering beside its browser work. */
function probeHealth(api: string): { stop(): Promise<{ describe(): string }> } {
  const times: number[] = [];
  let unanswered = 0;
  let probing = true;
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  const loop = (async () => {
    while (probing) {
      const started = performance.now();
      try {
        const response = await fetch(`${api}/health`);
        await response.arrayBuffer();
        if (response.status === 200) times.push(performance.now() - started);
        else unanswered++;
      } catch {
        // A kept-alive socket the server closed between two probes: counted, not fatal.
        unanswered++;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return {
    async stop() {
      probing = false;
      await loop;
      const sorted = [...times].sort((a, b) => a - b);
      const p50 = sorted[Math.floor(sorted.length / 2)] ?? NaN;
      const slowest = sorted.at(-1) ?? NaN;
      lag.disable();
      return { describe: () => `p50 ${p50.toFixed(0)} ms, slowest ${slowest.toFixed(0)} ms over ${times.length}, ${unanswered} unanswered; the bench's own event loop (the fake site, the browser's relay) lagged at most ${(lag.max / 1e6).toFixed(0)} ms` };
    },
  };
}

/** Runs a load while sampling the resident memory of `pids` every 100 ms; answers the highest seen. */
async function withPeakMemory(pids: number[], run: () => Promise<Figures | undefined>): Promise<Figures | undefined> {
  const resident = () => pids.reduce((sum, pid) => sum + residentMb(pid), 0);
  const baseline = resident();
  let peak = baseline;
  const sample = () => (peak = Math.max(peak, resident()));
  const timer = setInterval(sample, 100);
  try {
    const figures = await run();
    sample();
    if (!figures) return undefined;
    return { ...figures, ...(pids.length > 0 ? { baselineRssMb: Math.round(baseline), peakRssMb: Math.round(peak) } : {}) };
  } finally {
    clearInterval(timer);
  }
}

/** Bare workers on their own workerd sockets, as the stack's workers are. */
async function startBareWorkers(upstreamUrl: string, stateRoot: string): Promise<{ floor: string; relay: string; skeleton: string; cached: string; oneCall: string; gateFetch: string; read: string; stop: () => Promise<void> }> {
  const body = JSON.stringify({ success: true, message: '', data: company.data });
  const miniflare = new Miniflare({
    log: new Log(LogLevel.WARN),
    cf: false,
    // The skeleton's object stores where the stack's objects do, so neither pays a disk the other does not.
    defaultPersistRoot: stateRoot,
    host: '127.0.0.1',
    port: 0,
    workers: [
      {
        name: 'floor',
        modules: true,
        script: `const body = ${JSON.stringify(body)}; export default { fetch() { return new Response(body, { headers: { 'content-type': 'application/json' } }); } };`,
        unsafeDirectSockets: [{ host: '127.0.0.1', port: 0 }],
      },
      {
        name: 'relay',
        modules: true,
        bindings: { UPSTREAM: `${upstreamUrl}/get-company-by-domain?domain=stripe.com` },
        script: 'export default { async fetch(request, env) { const upstream = await fetch(env.UPSTREAM); return new Response(upstream.body, upstream); } };',
        unsafeDirectSockets: [{ host: '127.0.0.1', port: 0 }],
      },
      ...Object.entries(SKELETON_MODES).map(([name, mode]) => skeletonWorker(name, mode, upstreamUrl)),
    ],
  });
  const direct = async (name: string) => (await miniflare.unsafeGetDirectURL(name)).href.replace(/\/$/, '');
  return { floor: await direct('floor'), relay: await direct('relay'), skeleton: await direct('skeleton'), cached: await direct('skeleton-cached'), oneCall: await direct('skeleton-one-call'), gateFetch: await direct('skeleton-gate-fetch'), read: await direct('skeleton-read'), stop: () => miniflare.dispose() };
}

/** The organization wallet's SQLite size (from the operator API) and D1's (from a statement's meta), in bytes. */
async function storageBytes(ops: OpsClient, organizationId: string, stack: Awaited<ReturnType<typeof startStack>>): Promise<{ wallet: number; d1: number; calls: number }> {
  const db = await stack.miniflare.getD1Database('DB', 'sluice-api');
  const counted = await db.prepare('SELECT COUNT(*) AS n FROM usage').run<{ n: number }>();
  const { storageBytes: wallet } = await ops.call<{ storageBytes: number }>('GET', `/ops/v1/organizations/${organizationId}/wallet`);
  return { wallet, d1: counted.meta.size_after, calls: counted.results[0]!.n };
}

/**
 * A workspace called less often than every 10 s finds its gate out of memory, locally and on Cloudflare
 * (OBJECT_IDLE_S), so its gate starts again for the call: its constructor, its SQLite, and the message whose
 * reply it had not stored yet, sent again (decisions.md, "One row a report in the gate"). A round of the
 * rotation's 1,000 workspaces after 13 s of quiet, then the same round at once, each read once the workerd is
 * quiet: what a quiet workspace's call costs against a warm one's. No aim; the figure the trade-off is weighed by.
 */
async function quietWorkspaces(url: string, target: Target, calls: number): Promise<string> {
  const round = async () => {
    const { loaded, cpuSpent } = await measuredTurn(requestOf(url, target), target.cpuOf ?? [], calls);
    return cpuSpent / loaded.requests.total;
  };
  await new Promise((resolve) => setTimeout(resolve, 13_000));
  const [cold, warm] = [await round(), await round()];
  return `${QUIET_LINE} (its gate started again) / the same round at once: workerd CPU ${cold.toFixed(2)} against ${warm.toFixed(2)} ms a call, +${(cold - warm).toFixed(2)} ms (no aim: what a workspace called less often than every ${OBJECT_IDLE_S} s pays)`;
}

/**
 * What the calls since `before` added to the wallet's and D1's databases, per call. The wallet's figure is its
 * detail hour (captures are folded into a row a day after LEDGER_DETAIL_MS), D1's is the usage row with its
 * index entries and hourly and daily totals. Read once the usage rows have landed (the outbox flushes within 0.5 s).
 */
async function bytesPerCall(ops: OpsClient, organizationId: string, stack: Awaited<ReturnType<typeof startStack>>, before: { wallet: number; d1: number; calls: number }): Promise<string> {
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const after = await storageBytes(ops, organizationId, stack);
  const calls = after.calls - before.calls;
  const per = (bytes: number) => (calls > 0 ? Math.round(bytes / calls) : '?');
  return `storage over ${calls.toLocaleString('en-US')} calls (SQLite sizes: pages, so a few calls move them in steps of 4 KB): the wallet ${per(after.wallet - before.wallet)} B a call in its detail hour, then a ledger row a UTC day (${(after.wallet / 1024).toFixed(0)} KB now); D1 ${per(after.d1 - before.d1)} B a call, the usage row kept 13 months with its index and hourly totals, then daily totals only (aim: stated; the wallet under 50 MB after 1M calls)`;
}

/**
 * 150 people searches of ~750 KB each, one after another, whose vendor has no credentials here (answered
 * PROVIDER_UNAVAILABLE, unbilled): the api isolate's V8 heap after a full collection, before and after,
 * read through workerd's inspector (Chrome DevTools protocol). Nothing about an input may stay. The process's
 * resident memory is printed beside it: it keeps pages the allocator has freed, so it is not the aim.
 */
async function largeInputs(api: string, auth: Record<string, string>, pids: number[], inspectorPort: number): Promise<string> {
  const resident = () => pids.reduce((sum, pid) => sum + residentMb(pid), 0);
  const body = (n: number) => JSON.stringify({ query: { bool: { must: [{ term: { seed: n } }], filter: Array.from({ length: 8_500 }, (_, index) => ({ term: { [`field_${index}`]: 'x'.repeat(64) } })) } }, size: 1 });
  const send = async (n: number) => (await fetch(`${api}/v1/data/leads/people-search`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: body(n) })).status;
  await send(-1);
  const heapBefore = await apiHeapMb(inspectorPort);
  const before = resident();
  const statuses = new Map<number, number>();
  for (let n = 0; n < 150; n++) {
    const status = await send(n);
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
  }
  const heapAfter = await apiHeapMb(inspectorPort);
  const after = resident();
  const signed = (mb: number) => `${mb >= 0 ? '+' : ''}${mb.toFixed(1)} MB`;
  return `150 inputs of ${(body(0).length / 1024).toFixed(0)} KB (answers ${[...statuses].map(([status, count]) => `${count} x ${status}`).join(', ')}): api isolate heap after a full GC ${heapBefore.toFixed(1)} MB before, ${heapAfter.toFixed(1)} MB after, ${signed(heapAfter - heapBefore)} (aim: under +5 MB); workerd RSS ${signed(after - before)}`;
}

/** The api worker's V8 heap in use after a full garbage collection, in MB, from workerd's inspector. */
async function apiHeapMb(inspectorPort: number): Promise<number> {
  const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json/list`)).json()) as Array<{ title: string; webSocketDebuggerUrl: string }>;
  const target = targets.find((candidate) => candidate.title.includes('sluice-api')) ?? targets[0];
  if (!target) throw new Error('workerd inspector lists no worker');
  const socket = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  try {
    let id = 0;
    const ask = (method: string) =>
      new Promise<Record<string, number>>((resolve) => {
        const mine = ++id;
        const listener = (data: Buffer) => {
          const message = JSON.parse(data.toString()) as { id?: number; result?: Record<string, number> };
          if (message.id !== mine) return;
          socket.off('message', listener);
          resolve(message.result ?? {});
        };
        socket.on('message', listener);
        socket.send(JSON.stringify({ id: mine, method }));
      });
    await ask('HeapProfiler.collectGarbage');
    return (await ask('Runtime.getHeapUsage')).usedSize! / 1024 / 1024;
  } finally {
    socket.close();
  }
}

const JOB_LINE = 'data job of 10,000 items';

/**
 * Issue 28's figures: a 10,000-item job on the fake vendor (the window raised far above the machine) in items
 * per second, against synchronous metered calls made 8 at a time (the job's own concurrency) in requests per
 * second; then workerd's memory (RSS, the stack's processes) while the 10,000 results stream out as CSV.
 */
async function jobLines(api: string, auth: Record<string, string>, pids: number[]): Promise<string[]> {
  const concurrency = 8;
  const calls = 2_000;
  let next = 0;
  const syncStarted = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < calls) {
        const n = next++;
        await (await fetch(`${api}/v1/data/linkedin/get-company-by-domain?domain=sync${n}.example.com`, { headers: auth })).arrayBuffer();
      }
    }),
  );
  const syncRate = calls / ((performance.now() - syncStarted) / 1000);
  const inputs = Array.from({ length: 10_000 }, (_, n) => ({ domain: `job${n}.example.com` }));
  const submitted = await fetch(`${api}/v1/data/agnt/jobs`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ operation: 'linkedin/get-company-by-domain', inputs }) });
  const id = ((await submitted.json()) as { data: { id: string } }).data.id;
  type Job = { finishedAt: string | null; startedAt: string | null; status: string; counts: { succeeded: number; failed: number } };
  let job: Job;
  const deadline = performance.now() + 900_000;
  do {
    await new Promise((resolve) => setTimeout(resolve, 500));
    job = ((await (await fetch(`${api}/v1/data/agnt/jobs/${id}`, { headers: auth })).json()) as { data: Job }).data;
  } while (!job.finishedAt && performance.now() < deadline);
  const seconds = job.finishedAt && job.startedAt ? (Date.parse(job.finishedAt) - Date.parse(job.startedAt)) / 1000 : Number.NaN;
  const jobRate = job.counts.succeeded / seconds;
  const rss = () => pids.reduce((sum, pid) => sum + residentMb(pid), 0);
  const idle = rss();
  let peak = idle;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rss());
  }, 50);
  const download = await fetch(`${api}/v1/data/agnt/jobs/${id}/results`, { headers: { ...auth, accept: 'text/csv' } });
  let bytes = 0;
  for await (const chunk of download.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.byteLength;
  clearInterval(sampler);
  return [
    `${JOB_LINE}: ${job.status}, ${job.counts.succeeded.toLocaleString('en-US')} succeeded in ${seconds.toFixed(1)} s, ${jobRate.toFixed(1)} items/s; synchronous metered calls 8 at a time ${syncRate.toFixed(1)} requests/s; job / synchronous ${(jobRate / syncRate).toFixed(2)} (aim: 0.80 or better)`,
    `its results as CSV (${(bytes / 1024 / 1024).toFixed(1)} MB, streamed): workerd RSS ${idle.toFixed(0)} MB before, ${peak.toFixed(0)} MB at peak, +${(peak - idle).toFixed(1)} MB (aim: no more than +50 MB)`,
  ];
}

async function main() {
  const home = mkdtempSync(join(STATE_ROOT, 'sluice-bench-'));
  // Interrupted, the bench still takes its state with it: on tmpfs it is memory (a run leaves ~40 MB).
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    process.once(signal, () => {
      rmSync(home, { recursive: true, force: true });
      process.exit(code);
    });
  }
  const upstream = await startFakeLinkedin();
  // The hostile pages come from a server of their own, as another customer's site would: serving 1.1 MB
  // pages must not slow the vendor the metered call waits on, or the bench would measure the fake.
  const hostileSite = await startFakeLinkedin();
  const renderSite = await startRenderSite();
  const bare = await startBareWorkers(upstream.url, join(home, 'bare'));
  const workerdBefore = workerdChildren();
  const stack = await startStack({
    env: {
      ...process.env,
      // The built-in web provider serves /scrape; the loopback page server is the one private host it may fetch.
      FIRECRAWL_API_KEY: '',
      WEB_PROVIDER: 'builtin',
      SCRAPE_ALLOW_PRIVATE_HOSTS: [upstream.url, hostileSite.url, renderSite.url].map((url) => new URL(url).host).join(','),
      SLUICE_HOME: home,
      SLUICE_API_PORT: process.env.SLUICE_API_PORT ?? '18787',
      // The inspector is how the large-inputs line reads the api isolate's heap.
      ...(runs(LARGE_INPUTS_LINE) ? { SLUICE_INSPECTOR_PORT: String(INSPECTOR_PORT) } : {}),
      LINKEDIN_API_KEY: 'bench-key',
      LINKEDIN_API_HOST: 'linkedin-data-api.p.rapidapi.com',
      LINKEDIN_BASE_URL: upstream.url,
    },
    // The cached skeleton once more, in the stack's own workerd: item 5 compared within one process.
    alongside: runs(IN_STACK_SKELETON_ROW) || SELF_CHECK ? [skeletonWorker(IN_STACK_SKELETON, 'two-calls-cached', upstream.url)] : [],
    log: (line) => console.error(line),
  });
  try {
    const api = stack.urls.api!;
    const ops = opsClient(api, stack.settings.OPS_TOKEN!);
    const organization = { id: await unboundedOrganization(ops, 'Bench') };
    const workspace = await ops.call<{ id: string }>('POST', '/ops/v1/workspaces', { organizationId: organization.id, name: 'Bench' });
    const key = await ops.call<{ key: string }>('POST', '/ops/v1/keys', { workspaceId: workspace.id, name: 'bench' });
    const auth = { authorization: `Bearer ${key.key}` };
    // 1,000 keys of the workspace used in turn, the most it may hold (MAX_ACTIVE_KEYS_PER_WORKSPACE in
    // src/services/accounts.ts, a module of the workers' types), this one among them: the per-key work (lookup,
    // last_used_at) at its worst.
    const rotation: string[] = [key.key];
    while (runs(ROTATION_ROW) && rotation.length < 1_000) {
      rotation.push((await ops.call<{ key: string }>('POST', '/ops/v1/keys', { workspaceId: workspace.id, name: `rotation ${rotation.length}` })).key);
    }
    const rotatingKey = (n: number) => ({ headers: { authorization: `Bearer ${rotation[n % rotation.length]}` } });
    // 1,000 workspaces of the organization, a key each, called in turn: the wallet's cost per workspace at its worst.
    const workspaceKeys: string[] = [];
    for (let made = 0; made < (runs(WORKSPACES_ROW) || runs(QUIET_LINE) ? 1_000 : 0); made++) {
      const sibling = await ops.call<{ id: string }>('POST', '/ops/v1/workspaces', { organizationId: organization.id, name: `rotation ${made}` });
      workspaceKeys.push((await ops.call<{ key: string }>('POST', '/ops/v1/keys', { workspaceId: sibling.id, name: 'bench' })).key);
    }
    const rotatingWorkspace = (n: number) => ({
      path: `/v1/data/linkedin/get-company-by-domain?domain=ws${n}.example.com`,
      headers: { authorization: `Bearer ${workspaceKeys[n % workspaceKeys.length]}` },
    });
    const mcpToken = await ops.call<{ key: string }>('POST', '/ops/v1/keys', { workspaceId: workspace.id, scope: 'workspace_mcp', name: 'bench' });
    const mcpHeaders = { authorization: `Bearer ${mcpToken.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const toolCall = (n: number) => ({
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'data_linkedin_get_company_by_domain', arguments: { domain: `mcp${n}.example.com` } } }),
    });
    const companyPath = (n: number) => ({ path: `/v1/data/linkedin/get-company-by-domain?domain=rest${n}.example.com` });
    // A new key and input per call (what an agent sends on its first try), and one key asked again and again (its retries).
    const keyedCompany = (n: number) => ({ path: `/v1/data/linkedin/get-company-by-domain?domain=keyed${n}.example.com`, headers: { ...auth, 'idempotency-key': `bench-${n}` } });

    const stackWorkerd = workerdChildren().filter((pid) => !workerdBefore.includes(pid));
    // The rows' CPU is the workerd serving the api and the MCP worker's; memory lines keep the stack's whole (the databases' process too).
    const servingPids = servingWorkerd(stackWorkerd, Number(new URL(api).port));
    const scrapeBody = (n: number) => ({ body: JSON.stringify({ url: `${upstream.url}/article-200k.html?n=${n}` }) });

    const floorRow = await load('bare worker (floor)', bare.floor, { cpuOf: workerdBefore });
    const relayRow = await load('bare worker relaying the upstream', bare.relay, { cpuOf: workerdBefore });
    const skeletonRow = await load('bare worker and object: the metered design, no product (SKELETON)', bare.skeleton, { cpuOf: workerdBefore });
    const oneCallRow = await load('bare worker and object: one call, charge stored before the upstream', bare.oneCall, { cpuOf: workerdBefore });
    const gateFetchRow = await load('bare worker and object: one call, the object asks the upstream and stores the charge', bare.gateFetch, { cpuOf: workerdBefore });
    const readRow = await load('bare worker and object: one call answering a balance', bare.read, { cpuOf: workerdBefore });
    // The browser's rows come first on the stack: their memory line is workerd's plus chromium's, and the rows
    // after them leave a thousand gates and their keys in workerd (1,000 MB and more by the end of a full run).
    const renderer = await ops.call<{ id: string }>('POST', '/ops/v1/workspaces', { organizationId: organization.id, name: 'Bench renders' });
    const rendererKey = await ops.call<{ key: string }>('POST', '/ops/v1/keys', { workspaceId: renderer.id, name: 'bench' });
    const json = { 'content-type': 'application/json' };
    const renderLines = await renderRows(api, { ...auth, ...json }, { authorization: `Bearer ${rendererKey.key}`, ...json }, renderSite.url, stackWorkerd, stack.browser);
    const creditsRow = await load('GET /v1/credits', `${api}/v1/credits`, { headers: auth, cpuOf: servingPids });
    const rotatingRow = await load(ROTATION_ROW, `${api}/v1/credits`, { headers: auth, fresh: rotatingKey, cpuOf: servingPids });
    // The rows of issue 30's two ratios in turns: the product's work over the skeleton, then the rotation over
    // one workspace (a turn of it calls each of the 1,000 once; a round of two rows keeps its gates in memory).
    const [cachedSkeletonRow, inStackSkeletonRow, meteredRow] = await loadInTurns([
      { name: "bare worker and object: the metered design with the response cache's lookup and store, no product", url: bare.cached, target: { cpuOf: workerdBefore }, warmCalls: WARM_CALLS },
      // Before the product's turn, not right after it: were the product's turn to reach TURN_TAIL's bound, what its calls left would land in the bare skeleton's turn, in another workerd.
      { name: IN_STACK_SKELETON_ROW, url: stack.extraUrls[IN_STACK_SKELETON] ?? '', target: { cpuOf: servingPids }, warmCalls: WARM_CALLS },
      { name: 'metered get-company-by-domain (never cached)', url: `${api}${companyPath(0).path}`, target: { headers: auth, fresh: companyPath, cpuOf: servingPids }, warmCalls: WARM_CALLS },
    ]);
    // Item 5 in alternating blocks (or the method's own error: SELF_CHECK).
    const interleaved = runs(INTERLEAVED_ROW)
      ? await loadInterleaved([
          { origin: bare.cached, path: () => '/', headers: {}, pids: workerdBefore },
          SELF_CHECK
            ? { origin: stack.extraUrls[IN_STACK_SKELETON] ?? '', path: () => '/', headers: {}, pids: servingPids }
            : { origin: api, path: (n) => `/v1/data/linkedin/get-company-by-domain?domain=block${n}.example.com`, headers: auth, pids: servingPids },
        ])
      : undefined;
    const storageBefore = await storageBytes(ops, organization.id, stack);
    // Each workspace's first call (its gate's first lease) once, before the row: the row measures the rotation's steady state.
    for (let n = 0; n < workspaceKeys.length; n += 10) {
      await Promise.all(Array.from({ length: 10 }, (_, offset) => rotatingWorkspace(n + offset)).map(({ path, headers }) => fetch(`${api}${path.replace('ws', 'warm')}`, { headers }).then((response) => response.body?.cancel())));
    }
    // The rotation, as the row loads it and as the quiet line calls it again after 13 s.
    const workspaceRotation = { url: `${api}${rotatingWorkspace(0).path}`, target: { fresh: rotatingWorkspace, cpuOf: servingPids }, calls: workspaceKeys.length };
    const [oneWorkspaceRow, workspacesRow] = await loadInTurns([
      { name: ONE_WORKSPACE_ROW, url: `${api}${companyPath(0).path}`, target: { headers: auth, fresh: companyPath, cpuOf: servingPids } },
      { name: WORKSPACES_ROW, ...workspaceRotation },
    ]);
    const storageLine = runs(STORAGE_LINE) ? await bytesPerCall(ops, organization.id, stack, storageBefore) : undefined;
    const quietLine = runs(QUIET_LINE) ? await quietWorkspaces(workspaceRotation.url, workspaceRotation.target, workspaceRotation.calls) : undefined;
    const largeInputsLine = runs(LARGE_INPUTS_LINE) ? await largeInputs(api, auth, stackWorkerd, INSPECTOR_PORT) : undefined;
    const jobLinesOut = runs(JOB_LINE) ? await jobLines(api, auth, stackWorkerd) : [];
    const mcpRow = await load('the same call as an MCP tool call', `${stack.urls.mcp}/mcp`, { headers: mcpHeaders, fresh: toolCall, cpuOf: servingPids });
    const scrapeRow = await withPeakMemory(stackWorkerd, () =>
      load('scrape of a 200 KB page, built-in provider (never cached)', `${api}/scrape`, {
        headers: { ...auth, 'content-type': 'application/json' },
        fresh: scrapeBody,
        cpuOf: servingPids,
      }),
    );
    const keyedRow = await load('metered call with a new Idempotency-Key each time', `${api}${keyedCompany(0).path}`, { headers: auth, fresh: keyedCompany, cpuOf: servingPids });
    // The key's one charged call first, answered before the load: the row's 20 connections then replay it. Sent with
    // the load's first requests, it was still running for the others, which were told so with 409 (17 in one run).
    const replayHeaders = { ...auth, 'idempotency-key': 'bench-replayed' };
    const firstOfKey = await fetch(`${api}${companyPath(0).path}`, { headers: replayHeaders });
    if (firstOfKey.status !== 200) throw new Error(`The replayed key's first call answered ${firstOfKey.status}: ${await firstOfKey.text()}`);
    await firstOfKey.arrayBuffer().catch(() => undefined);
    const replayRow = await load('replay of one Idempotency-Key (uncharged)', `${api}${companyPath(0).path}`, { headers: replayHeaders, cpuOf: servingPids });
    // The hostile pages come from another customer: what is measured is what they do to everyone else.
    const attacker = await ops.call<{ id: string }>('POST', '/ops/v1/organizations', { name: 'Bench attacker', plan: 'business' });
    await ops.call('PUT', `/ops/v1/organizations/${attacker.id}/plan`, { plan: 'business', rpm: 1_000_000 });
    const attackerWorkspace = await ops.call<{ id: string }>('POST', '/ops/v1/workspaces', { organizationId: attacker.id, name: 'Bench attacker' });
    const attackerKey = await ops.call<{ key: string }>('POST', '/ops/v1/keys', { workspaceId: attackerWorkspace.id, name: 'bench' });
    const hostile = scrapeHostilePages(api, { authorization: `Bearer ${attackerKey.key}`, 'content-type': 'application/json' }, hostileSite.url);
    const healthHostileRow = await load('GET /health while hostile pages are scraped', `${api}/health`);
    const meteredHostileRow = await load('metered call while hostile pages are scraped', `${api}${companyPath(0).path}`, { headers: auth, fresh: companyPath });
    const hostileStatuses = await hostile.stop();
    const runaways = runs(RUNAWAY_ROW) ? runDatabaseRunaways(api, { authorization: `Bearer ${attackerKey.key}`, 'content-type': 'application/json' }) : undefined;
    const healthRunawayRow = await load(RUNAWAY_ROW, `${api}/health`);
    const runawayStatuses = (await runaways?.stop()) ?? {};
    const upstreamRow = await load('fake upstream alone', `${upstream.url}/get-company-by-domain?domain=stripe.com`);
    const usageRows: Partial<Record<keyof typeof USAGE_ROWS, Figures>> = {};
    for (const [size, count] of [['small', 1_000], ['large', 100_000]] as const) {
      if (!runs(USAGE_ROWS[size])) continue;
      const history = await ops.call<{ id: string }>('POST', '/ops/v1/workspaces', { organizationId: organization.id, name: `Bench usage ${count}` });
      const historyKey = await ops.call<{ key: string }>('POST', '/ops/v1/keys', { workspaceId: history.id, name: 'bench' });
      await seedUsage(await stack.miniflare.getD1Database('DB', 'sluice-api'), { organizationId: organization.id, workspaceId: history.id }, count);
      usageRows[size] = await load(USAGE_ROWS[size], `${api}/v1/usage`, { headers: { authorization: `Bearer ${historyKey.key}` }, cpuOf: servingPids });
    }
    const rows = [floorRow, relayRow, skeletonRow, cachedSkeletonRow, inStackSkeletonRow, oneCallRow, gateFetchRow, readRow, creditsRow, rotatingRow, meteredRow, oneWorkspaceRow, workspacesRow, mcpRow, scrapeRow, keyedRow, replayRow, healthHostileRow, meteredHostileRow, healthRunawayRow, upstreamRow, usageRows.small, usageRows.large].filter(
      (row): row is Figures => row !== undefined,
    );

    console.log(`\nSluice bench: loopback, workerd sockets hit directly (no wrangler proxy), state on ${STATE_ROOT}`);
    console.log(`requests/s and loaded p99 at ${CONNECTIONS} connections for ${DURATION_S} s; p50/p99 at 1 connection${ONLY ? ` (BENCH_ONLY=${ONLY.join(',')})` : ''}\n`);
    console.log('| target | requests/s | loaded p99 ms | p50 ms | mean ms | p99 ms | workerd CPU ms/request | failures |');
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const row of rows) {
      const cpu = row.cpuMsPerRequest === undefined ? '' : row.cpuMsPerRequest.toFixed(2);
      console.log(`| ${row.name} | ${row.requestsPerSecond.toFixed(0)} | ${row.loadedP99} | ${row.p50} | ${row.mean.toFixed(2)} | ${row.p99} | ${cpu} | ${row.failures} |`);
    }
    console.log('');
    const ratio = (top: Figures, bottom: Figures) => (top.requestsPerSecond / bottom.requestsPerSecond).toFixed(2);
    const cpuText = (row: Figures) => row.cpuMsPerRequest?.toFixed(2) ?? '?';
    const cpuRatio = (cheaper: Figures, dearer: Figures) => ((cheaper.cpuMsPerRequest ?? 0) / (dearer.cpuMsPerRequest ?? 1)).toFixed(2);
    if (meteredRow && floorRow) console.log(`metered / floor throughput: ${ratio(meteredRow, floorRow)}`);
    for (const line of jobLinesOut) console.log(line);
    if (meteredRow && relayRow) console.log(`metered / relay throughput: ${ratio(meteredRow, relayRow)} (aim: 0.50 or better)`);
    if (meteredRow && upstreamRow) {
      console.log(
        `added latency over the upstream, 1 connection: p50 ${(meteredRow.p50 - upstreamRow.p50).toFixed(1)} ms, mean ${(meteredRow.mean - upstreamRow.mean).toFixed(2)} ms (aim: 1 ms or less; autocannon rounds p50 to whole ms)`,
      );
    }
    if (meteredRow && relayRow) {
      console.log(
        `workerd CPU per request: metered ${cpuText(meteredRow)} ms, relay ${cpuText(relayRow)} ms: relay / metered ${cpuRatio(relayRow, meteredRow)} (the throughput ratio a CPU-bound machine would show)`,
      );
    }
    if (skeletonRow && relayRow) {
      const besideRelay = (shape: string, row: Figures | undefined) => (row ? `; ${shape}: ${ratio(row, relayRow)}, by CPU ${cpuRatio(relayRow, row)}` : '');
      console.log(
        `the design's floor (skeleton: meter, upstream, settle storing one row; no product code) / relay: throughput ${ratio(skeletonRow, relayRow)}, by CPU ${cpuRatio(relayRow, skeletonRow)}` +
          besideRelay('with one call, the charge stored before the upstream', oneCallRow) +
          besideRelay('with one call in which the object asks the upstream', gateFetchRow),
      );
      if (meteredRow) console.log(`metered / skeleton: throughput ${ratio(meteredRow, skeletonRow)}; CPU ${cpuText(meteredRow)} against ${cpuText(skeletonRow)} ms (the product's own work is the difference)`);
    }
    const productOver = (floorRow: TurnFigures | undefined, which: string) => {
      if (meteredRow?.cpuMsPerRequest === undefined || floorRow?.cpuMsPerRequest === undefined) return;
      const over = meteredRow.cpuMsPerRequest - floorRow.cpuMsPerRequest;
      const overIn = (turn: number) => {
        const [metered, skeleton] = [meteredRow.turns[turn]?.cpuMsPerRequest, floorRow.turns[turn]?.cpuMsPerRequest];
        return metered === undefined || skeleton === undefined ? '?' : percentOver(skeleton, metered);
      };
      const perTurn = meteredRow.turns.map((_, turn) => overIn(turn));
      console.log(
        `the product's own work over the skeleton with the same cache work ${which}: ${over.toFixed(2)} ms a call (CPU ${cpuText(meteredRow)} against ${cpuText(floorRow)} ms), ` +
          `${percentOver(floorRow.cpuMsPerRequest, meteredRow.cpuMsPerRequest)} % of that skeleton over all turns, median turn ${median(perTurn.map(Number)).toFixed(0)} % (aim: 25 % or less; each turn: ${perTurn.join(', ')} %)`,
      );
    };
    productOver(cachedSkeletonRow, 'in a workerd of its own');
    productOver(inStackSkeletonRow, "in the stack's workerd");
    if (interleaved) {
      const [skeleton, product] = interleaved.cpuMsPerCall;
      const share = (a: number, b: number) => `${percentOver(a, b)} %`;
      const atQuantile = (q: number) => {
        const [a, b] = [quantile(interleaved.blocks[0], q), quantile(interleaved.blocks[1], q)];
        return `${share(a, b)} (${b.toFixed(2)} against ${a.toFixed(2)})`;
      };
      const what = SELF_CHECK ? "the cached skeleton in the stack's workerd (the method's own error: 0 % is exact)" : "the product's own work";
      console.log(
        `${what} over the cached skeleton in its own workerd, ${INTERLEAVED_ROUNDS} rounds of ${BLOCK_CALLS}-call blocks that alternate (${interleaved.seconds.toFixed(0)} s): ` +
          `${(product - skeleton).toFixed(2)} ms a call (CPU ${product.toFixed(2)} against ${skeleton.toFixed(2)} ms), ${share(skeleton, product)} of that skeleton${SELF_CHECK ? '' : ' (aim: 25 % or less)'}; ` +
          `by the blocks' CPU a call, at their first quartile ${atQuantile(0.25)}, median ${atQuantile(0.5)}, third quartile ${atQuantile(0.75)}` +
          `${interleaved.failures > 0 ? `; ${interleaved.failures} calls failed` : ''}`,
      );
      if (interleaved.failures > 0) process.exitCode = 1;
    }
    // What callgrind's count (`npm run bench:instructions`) does not see: sockets and SQLite's WAL pages.
    const kernelText = (row: Figures | undefined) =>
      row?.kernelPerRequest ? `${row.kernelPerRequest.ms.toFixed(2)} ms, ${row.kernelPerRequest.writes.toFixed(1)} writes of ${(row.kernelPerRequest.bytes / 1_024).toFixed(1)} KB` : '?';
    if (meteredRow?.kernelPerRequest) {
      console.log(`of that CPU, the kernel's a call: metered ${kernelText(meteredRow)}; the cached skeleton in its own workerd ${kernelText(cachedSkeletonRow)}, in the stack's ${kernelText(inStackSkeletonRow)}`);
    }
    if (meteredRow) console.log(roundNote(meteredRow));
    if (creditsRow && floorRow && relayRow) {
      console.log(`/v1/credits / floor throughput: ${ratio(creditsRow, floorRow)} (aim: 0.30 or better); / relay: ${ratio(creditsRow, relayRow)} (aim: 1.00 or better)`);
      // One slow sitting of the floor row moves the throughput ratio by half; CPU per request does not.
      console.log(`workerd CPU per request: /v1/credits ${cpuText(creditsRow)} ms, floor ${cpuText(floorRow)} ms: floor / credits ${cpuRatio(floorRow, creditsRow)}`);
      if (readRow) {
        console.log(
          `the floor of one object call (skeleton answering a balance) / floor: throughput ${ratio(readRow, floorRow)}, by CPU ${cpuRatio(floorRow, readRow)}; /v1/credits / skeleton: throughput ${ratio(creditsRow, readRow)}, CPU ${cpuText(creditsRow)} against ${cpuText(readRow)} ms`,
        );
      }
    }
    if (usageRows.small && usageRows.large) {
      console.log(
        `GET /v1/usage p50 with 100,000 calls of history / with 1,000: ${(usageRows.large.p50 / Math.max(1, usageRows.small.p50)).toFixed(2)} (${usageRows.large.p50} against ${usageRows.small.p50} ms, mean ${usageRows.large.mean.toFixed(2)} against ${usageRows.small.mean.toFixed(2)} ms; aim: 2.00 or less); workerd CPU per request (D1 included) ${cpuText(usageRows.large)} against ${cpuText(usageRows.small)} ms, ratio ${cpuRatio(usageRows.large, usageRows.small)} (1.00: flat)`,
      );
    }
    if (rotatingRow && creditsRow) console.log(`/v1/credits with 1,000 keys in rotation / with one key: ${ratio(rotatingRow, creditsRow)} (aim: 0.90 or better)`);
    if (workspacesRow && oneWorkspaceRow) {
      const turns = workspacesRow.turns.map((turn, index) => turn.requestsPerSecond / (oneWorkspaceRow.turns[index]?.requestsPerSecond ?? Number.NaN));
      console.log(
        `metered call, 1,000 workspaces in rotation / one workspace: ${ratio(workspacesRow, oneWorkspaceRow)} over all turns, median turn ${median(turns).toFixed(2)}; ` +
          `workerd CPU ${cpuText(workspacesRow)} against ${cpuText(oneWorkspaceRow)} ms a call, by CPU ${cpuRatio(oneWorkspaceRow, workspacesRow)} (aim: 0.80 or better; each turn: ${turns.map((turn) => turn.toFixed(2)).join(', ')})`,
      );
      console.log(roundNote(workspacesRow, "the rotation's gates were started afresh, as a workspace called less often than that is"));
    }
    if (quietLine) console.log(quietLine);
    if (storageLine) console.log(storageLine);
    if (largeInputsLine) console.log(largeInputsLine);
    if (scrapeRow) {
      console.log(
        `scrape of a 200 KB page: p50 ${scrapeRow.p50} ms, workerd memory (RSS) ${scrapeRow.baselineRssMb ?? '?'} MB before, ${scrapeRow.peakRssMb ?? '?'} MB at peak during its run, ${growth(scrapeRow)} (aim: no worse than the code of 2026-11-22, which in its own bench gave p50 20-27 ms and 689-788 MB at peak, +121 to +165 MB, in three runs on 2026-11-23; both memory figures also carry what the rows before left)`,
      );
    }
    for (const line of renderLines) console.log(line);
    if (mcpRow && meteredRow) console.log(`MCP tool call over REST: throughput ${(mcpRow.requestsPerSecond / meteredRow.requestsPerSecond).toFixed(2)}, p50 +${(mcpRow.p50 - meteredRow.p50).toFixed(1)} ms`);
    const cpu = (row: Figures) => row.cpuMsPerRequest?.toFixed(2) ?? '?';
    if (keyedRow && replayRow && meteredRow) {
      console.log(
        `Idempotency-Key: a new key costs p50 +${(keyedRow.p50 - meteredRow.p50).toFixed(1)} ms, mean +${(keyedRow.mean - meteredRow.mean).toFixed(2)} ms, CPU ${cpu(keyedRow)} against ${cpu(meteredRow)} ms; a replay ${cpu(replayRow)} ms CPU, throughput ${(replayRow.requestsPerSecond / meteredRow.requestsPerSecond).toFixed(2)} of the metered call's`,
      );
    }
    const refused = hostileStatuses[422] ?? 0;
    const otherwise = Object.entries(hostileStatuses).filter(([status]) => status !== '422').map(([status, count]) => `${count} x ${status}`);
    if (healthHostileRow || meteredHostileRow) {
      console.log(
        `hostile pages (${HOSTILE_PAGES.join(', ')}, ${HOSTILE_SCRAPERS} clients without pause): ${refused} refused with 422${otherwise.length ? `, ${otherwise.join(', ')}` : ', no other answer'}; ` +
          `meanwhile /health p99 ${healthHostileRow?.p99 ?? '?'} ms, metered p99 ${meteredHostileRow?.p99 ?? '?'} ms at 1 connection (aim: under 50 ms)`,
      );
    }
    if (healthRunawayRow) {
      const stopped = runawayStatuses[400] ?? 0;
      const rest = Object.entries(runawayStatuses).filter(([status]) => status !== '400').map(([status, count]) => `${count} x ${status}`);
      console.log(
        `runaway statements (a 10^12-row count, one client without pause): ${stopped} stopped at their bound with 400${rest.length ? `, ${rest.join(', ')} while the databases' process restarted` : ''}; ` +
          `meanwhile /health p99 ${healthRunawayRow.p99} ms at 1 connection (aim: under 250 ms)`,
      );
      if (stopped === 0) process.exitCode = 1;
    }
    if (otherwise.length > 0) process.exitCode = 1;
    if (rows.some((row) => row.failures > 0)) {
      console.log('\nWARNING: some requests did not answer 2xx; the figures above include failures.');
      for (const row of rows.filter((row) => row.failures > 0)) console.log(`  ${row.name}: ${row.failures}${row.failureKinds ? `: ${row.failureKinds}` : ''}`);
      process.exitCode = 1;
    }
  } finally {
    await stack.stop();
    await bare.stop();
    upstream.stop();
    hostileSite.stop();
    renderSite.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

await main();
