/**
 * `npm run bench:instructions`: issue 30 item 5 counted in instructions executed instead of CPU time. The
 * stack's workerd runs under valgrind's callgrind, with the cached skeleton (`skeleton.ts`) served by the
 * same process; the two are loaded in alternate turns, callgrind's counters zeroed before a turn and read
 * once the process has gone quiet after it, so what a turn's calls leave (reports, the wallet's writes to
 * D1) counts for it. It prints each row's instructions a call, their ratio, and where the difference is, by
 * area of the process (SQLite, the allocator, garbage collection, V8, the runtime).
 *
 * Why: on this shared machine workerd's CPU time for the same code moves by a quarter between minutes and
 * item 5 by ±40 points between turns (performance.md); an instruction count does not depend on what else the
 * machine does, so turns of the same code agree within a few percent, and a change of a query or a copy can
 * be counted rather than guessed. What it does not see: the kernel's work (sockets, WAL writes) and memory
 * stalls, which `npm run bench`'s CPU time includes. It complements that figure; it does not replace it.
 *
 * Under valgrind a call takes some thirty times longer, while the gate reports every 100 ms at most and the
 * wallet writes to D1 every 500 ms, by the process's clock. Were that clock real, a report would carry a call or
 * two where the bench's carry about fifty, and the product's work per interval would be counted many times
 * over: 52-57 % of the skeleton with a real clock, 30-35 % with the slowed one (2026-11-29). So the counted
 * workerd's clock runs BENCH_INSTR_SLOWER times slower (`slow-clock.c`, compiled here with `cc` and preloaded),
 * near valgrind's own slowdown: its reports and writes carry about as many calls as at the bench's pace, and
 * each turn waits for the last of them before it is read. Without a C compiler, or with BENCH_INSTR_SLOWER=1,
 * the clock is real and the share printed is an upper bound. A turn of the product agrees with the next within
 * about 5 % (the skeleton's within 3 %), with now and then one a quarter dearer (a full garbage collection fell
 * in it), which the median leaves out.
 *
 * The product has some fifty times the skeleton's code, much of it run once a report, and V8 optimizes a
 * function only after it has run for a while. After the 300 counted warm-up calls alone, the product's last
 * turn spent 3.2 % of its instructions in V8's optimizing compilers (the skeleton's 0.1 %), part of it warm-up
 * an isolate pays once. So both rows are first called BENCH_INSTR_WARMUP times each with callgrind's counting
 * off (valgrind runs several times faster so), and each turn's line says how much of it went to the compilers.
 * Some of it never ends: V8 drops optimized code whose embedded object shapes a full collection cleared, and
 * optimizes it again (`--trace-deopt`: "embedded weak objects cleared", then "dependent field type changed";
 * 0.8-1.8 % of the product's instructions after 6,000 and 20,000 warm-up calls, 2026-11-29), so the summary
 * says the product was still warming up only above 2 %.
 *
 * Options: BENCH_INSTR_ROUNDS (default 3), BENCH_INSTR_CALLS (calls a turn, default 150), BENCH_INSTR_KEEP
 * (a folder to keep each row's last turn's callgrind file in, for `callgrind_annotate`), BENCH_INSTR_CACHE=1
 * (callgrind's cache simulation too: each row's first-level instruction and data misses and last-level misses a
 * call, to tell whether the product's larger code costs more than its instructions; about twice as slow),
 * BENCH_INSTR_SLOWER (how many times slower the counted workerd's clock runs, default 30; 1 for real time),
 * BENCH_INSTR_WARMUP (uncounted calls of each row before the counted warm-up, default 5,000; 0 for none),
 * BENCH_INSTR_COMPARE (`skeleton`, the default: item 5, the metered call against the cached skeleton;
 * `workspaces`: item 2, the metered call from 1,000 workspaces of one organization in rotation, a turn calling each
 * once, against the same call from one workspace in turns of BENCH_INSTR_CALLS).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { startStack } from '../../scripts/stack';
import { opsClient } from '../../scripts/lib/ops-client';
import { startFakeLinkedin } from '../fakes/linkedin-loopback';
import { median, quietAfter } from './measure';
import { skeletonWorker } from './skeleton';
import { unboundedOrganization } from './accounts';

const ROUNDS = Number(process.env.BENCH_INSTR_ROUNDS ?? 3);
const CALLS = Number(process.env.BENCH_INSTR_CALLS ?? 150);
const KEEP = process.env.BENCH_INSTR_KEEP;
const CACHE = process.env.BENCH_INSTR_CACHE === '1';
const WARMUP = Number(process.env.BENCH_INSTR_WARMUP ?? 5_000);
/** What is counted: `skeleton` (item 5: the metered call against the cached skeleton) or `workspaces` (item 2: 1,000 workspaces in rotation against one). */
const COMPARE = process.env.BENCH_INSTR_COMPARE ?? 'skeleton';
if (COMPARE !== 'skeleton' && COMPARE !== 'workspaces') throw new Error(`BENCH_INSTR_COMPARE is skeleton or workspaces, not ${COMPARE}`);
const CONNECTIONS = 4;
const SKELETON_NAME = 'bench-skeleton-cached';
/** Under valgrind what a turn leaves takes seconds to finish, not a fraction of one. */
const TAIL = { minMs: 1_500, windowMs: 500, maxMs: 60_000 };
const PORTS = { SLUICE_API_PORT: '19500', SLUICE_MCP_PORT: '19501', SLUICE_APP_PORT: '19502' };
const SLOWER_ASKED = Number(process.env.BENCH_INSTR_SLOWER ?? 30);
/**
 * A number the product declares (`export const NAME = 1_000;`), read from its source: the objects' modules are
 * typed for workerd, not Node, so they are not imported here. A declaration of another form stops the run.
 */
function declared(file: string, name: string): number {
  const match = new RegExp(`export const ${name} = ([\\d_]+);`).exec(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8'));
  if (!match) throw new Error(`${file} no longer declares ${name} as a plain number; the instruction bench waits on it.`);
  return Number(match[1]!.replaceAll('_', ''));
}
const REPORT_MS = declared('durable-objects/workspace-gate.ts', 'REPORT_MS');
const USAGE_FLUSH_MS = declared('durable-objects/usage-outbox.ts', 'USAGE_FLUSH_MS');

/** V8's optimizing compilers: the area that shows whether a turn was counted after the warm-up had ended. */
const COMPILING = "V8's optimizing compilers (TurboFan, Maglev)";
/** Where an instruction was spent, by the function callgrind names: the first pattern that matches. */
const AREAS: Array<[area: string, pattern: RegExp]> = [
  ['SQLite (statements, JSON, WAL)', /sqlite3|^json[A-Z]|walChecksum|yy_reduce|^Query|SqliteDatabase/],
  ['garbage collection', /Scaveng|MarkCompact|Marking|Sweep|Evacuat|GCTracer|Heap::Collect|RememberedSet|TracedHandles|heap::base/],
  ['allocator, memset and memcpy', /tcmalloc|^operator (new|delete)|^__mem(set|cpy|move|cmp)|malloc|^free$/],
  ['JavaScript: V8 builtins and compiled code', /^Builtins_|^0x[0-9a-f]+$/],
  // Before the runtime's pattern: mostly warm-up, which a long-lived isolate does once (some comes back after full collections).
  [COMPILING, /v8::internal::compiler::|v8::internal::maglev::|turboshaft/],
  ['V8 runtime (objects, JSON, structured clone, strings)', /v8::|^Runtime_/],
  ['workerd and kj (HTTP, headers, objects, I/O)', /workerd|kj::|capnp|jsg::|simdutf/],
];

try {
  execFileSync('callgrind_control', ['--version'], { stdio: 'ignore' });
} catch {
  console.error('valgrind is not installed: apt-get install -y valgrind (Debian), then run this again.');
  process.exit(2);
}
const scratch = mkdtempSync('/dev/shm/sluice-instructions-');
const workerd = (createRequire(import.meta.url)('workerd') as { default: string }).default;

/** The slowed clock, built for this run; undefined (real time) when asked for none or no C compiler is here. */
const slowClock = SLOWER_ASKED > 1 ? buildSlowClock(join(scratch, 'slow-clock.so')) : undefined;
/** How many times slower the counted workerd's clock runs. */
const SLOWER = slowClock ? SLOWER_ASKED : 1;
/** After a turn, the longest until its last report has reached the wallet and the wallet has written its rows to D1, by the real clock. */
const INTERVALS_MS = SLOWER > 1 ? (REPORT_MS + USAGE_FLUSH_MS) * SLOWER + 2_000 : 0;
/** Waits INTERVALS_MS: what the product's calls left on the slowed clock (its last report, the wallet's write to D1) is then done. */
const intervalsPassed = () => new Promise((resolve) => setTimeout(resolve, INTERVALS_MS));

/**
 * The workerd Miniflare starts, wrapped: the process whose config (on stdin) serves the skeleton runs under
 * callgrind, counting nothing until the turns begin; the others (the migrations' and the workspace databases'
 * processes) run as they are, so their health checks keep their timing. `--fair-sched` lets V8's compiler
 * threads run: without it the product's JavaScript stayed in the interpreter, which natively it leaves.
 */
const wrapper = join(scratch, 'workerd.sh');
const clockEnv = slowClock ? `env LD_PRELOAD=${slowClock} SLOW_CLOCK=${SLOWER} ` : '';
writeFileSync(
  wrapper,
  `#!/bin/sh
config=$(mktemp -p ${scratch} config.XXXXXX)
cat > "$config"
if grep -q ${SKELETON_NAME} "$config"; then
  exec ${clockEnv}valgrind --tool=callgrind${CACHE ? ' --cache-sim=yes' : ''} --fair-sched=yes --smc-check=all-non-file --instr-atstart=no --callgrind-out-file=${scratch}/callgrind.%p --log-file=${scratch}/valgrind.%p ${workerd} "$@" < "$config"
fi
exec ${workerd} "$@" < "$config"
`,
);
chmodSync(wrapper, 0o755);
process.env.MINIFLARE_WORKERD_PATH = wrapper;
if (KEEP) mkdirSync(KEEP, { recursive: true });

const upstream = await startFakeLinkedin();
const stack = await startStack({
  env: {
    ...process.env,
    ...PORTS,
    SLUICE_HOME: mkdtempSync(join(scratch, 'home-')),
    LINKEDIN_API_KEY: 'bench-key',
    LINKEDIN_API_HOST: 'linkedin-data-api.p.rapidapi.com',
    LINKEDIN_BASE_URL: upstream.url,
  },
  alongside: [skeletonWorker(SKELETON_NAME, 'two-calls-cached', upstream.url)],
  log: (line) => console.error(line),
});

try {
  const counted = readdirSync(scratch).filter((name) => name.startsWith('valgrind.')).map((name) => Number(name.split('.')[1]));
  if (counted.length !== 1) throw new Error(`expected one workerd under callgrind, found ${counted.length}`);
  const pid = counted[0]!;
  const control = (...args: string[]) => execFileSync('callgrind_control', [...args, String(pid)], { stdio: 'ignore' });

  /** Writes callgrind's counts since the last zeroing and answers the file, read off the folder. */
  const dump = (): string => {
    const before = new Set(readdirSync(scratch));
    control('--dump=turn');
    const file = readdirSync(scratch).find((name) => name.startsWith(`callgrind.${pid}.`) && !before.has(name));
    if (!file) throw new Error('callgrind wrote no file for the turn');
    return join(scratch, file);
  };

  const api = stack.urls.api!;
  const ops = opsClient(api, stack.settings.OPS_TOKEN!);
  const organizationId = await unboundedOrganization(ops, 'Instructions');
  const workspace = await ops.call<{ id: string }>('POST', '/ops/v1/workspaces', { organizationId, name: 'Instructions' });
  const { key } = await ops.call<{ key: string }>('POST', '/ops/v1/keys', { workspaceId: workspace.id, name: 'instructions' });

  let sequence = 0;
  /** A metered call with a new input each call (never cached, as the bench's metered row), with the key `keyOf` gives for the call's number. */
  const metered = (keyOf: (n: number) => string): autocannon.Options => ({
    url: `${api}/v1/data/linkedin/get-company-by-domain?domain=i0.example.com`,
    requests: [
      {
        setupRequest: (request: autocannon.Request) => {
          const n = ++sequence;
          return { ...request, path: `/v1/data/linkedin/get-company-by-domain?domain=i${n}.example.com`, headers: { ...request.headers, authorization: `Bearer ${keyOf(n)}` } };
        },
      },
    ],
  });
  // Item 2 (BENCH_INSTR_COMPARE=workspaces): the organization's 1,000 workspaces, a key each, called in turn.
  const workspaceKeys: string[] = [];
  for (let made = 0; made < (COMPARE === 'workspaces' ? 1_000 : 0); made++) {
    const sibling = await ops.call<{ id: string }>('POST', '/ops/v1/workspaces', { organizationId, name: `rotation ${made}` });
    workspaceKeys.push((await ops.call<{ key: string }>('POST', '/ops/v1/keys', { workspaceId: sibling.id, name: 'instructions' })).key);
  }
  // The rotation's own count, so it walks its workspaces in order whatever the other row's calls.
  let rotated = 0;
  const rotation = metered(() => workspaceKeys[rotated++ % workspaceKeys.length]!);
  type Row = 'base' | 'subject';
  // A rotation's turn calls each of its workspaces once, as the bench's does. With shorter turns a workspace
  // waited seven turns and their quiet for its next call, past workerd's 10 s (300 s of the slowed clock) after
  // which it drops an idle object: 1,650 of a 150-call turn's statements were prepared afresh (gates started).
  const rows: Record<Row, { label: string; options: autocannon.Options; calls: number; turns: Turn[] }> =
    COMPARE === 'workspaces'
      ? {
          base: { label: 'metered get-company-by-domain, one workspace', options: metered(() => key), calls: CALLS, turns: [] },
          subject: { label: 'the same, 1,000 workspaces of the organization in rotation', options: rotation, calls: workspaceKeys.length, turns: [] },
        }
      : {
          base: { label: "skeleton with the response cache's work, same workerd", options: { url: stack.extraUrls[SKELETON_NAME]! }, calls: CALLS, turns: [] },
          subject: { label: 'metered get-company-by-domain (never cached)', options: metered(() => key), calls: CALLS, turns: [] },
        };
  interface Turn {
    perCall: number;
    /** Instructions a call in V8's optimizing compilers (COMPILING). */
    compiling: number;
    /** The turn's instructions by area (AREAS), read once: the last turn's are printed in the summary. */
    areas: Map<string, number>;
    callsPerSecond: number;
    file: string;
    /** With BENCH_INSTR_CACHE: the simulated cache's misses in the turn, by kind. */
    misses: Misses | undefined;
  }

  if (WARMUP > 0) {
    console.error(`Warming both up with ${WARMUP} calls each, uncounted ...`);
    for (const row of Object.values(rows)) await autocannon({ ...row.options, connections: CONNECTIONS, amount: WARMUP });
  }
  console.error('Warming both up (V8 compiles what runs often) ...');
  control('--instr=on');
  for (const row of Object.values(rows)) await autocannon({ ...row.options, connections: CONNECTIONS, amount: 300 });
  await intervalsPassed();
  await quietAfter([pid], TAIL);

  for (let round = 0; round < ROUNDS; round++) {
    for (const name of (round % 2 === 0 ? ['base', 'subject'] : ['subject', 'base']) as Row[]) {
      const row = rows[name];
      control('--zero');
      const started = performance.now();
      const result = await autocannon({ ...row.options, connections: CONNECTIONS, amount: row.calls, sampleInt: 20 });
      const seconds = (performance.now() - started) / 1_000;
      // The product's last report and the wallet's write to D1 come on the slowed clock, after the load has ended.
      if (COMPARE === 'workspaces' || name === 'subject') await intervalsPassed();
      await quietAfter([pid], TAIL);
      const file = dump();
      const failures = result.non2xx + result.errors;
      if (failures > 0) throw new Error(`${name}: ${failures} of ${row.calls} calls failed`);
      const { total, misses } = countsOf(readFileSync(file, 'utf8'));
      const areas = areasOf(file);
      const compiling = (areas.get(COMPILING) ?? 0) / row.calls;
      const previous = row.turns.at(-1)?.file;
      if (previous) rmSync(previous);
      row.turns.push({ perCall: total / row.calls, compiling, areas, callsPerSecond: row.calls / seconds, file, misses });
      console.error(`round ${round + 1}, ${name}: ${millions(total / row.calls)} instructions a call (${thousands(compiling)} of them compiling), ${(row.calls / seconds).toFixed(1)} calls/s`);
    }
  }

  const perCall = (name: Row) => median(rows[name].turns.map((turn) => turn.perCall));
  const [base, subject] = [perCall('base'), perCall('subject')];
  const pace = median(rows.subject.turns.map((turn) => turn.callsPerSecond));
  const list = (name: Row) => rows[name].turns.map((turn) => millions(turn.perCall)).join(', ');
  console.log(`\nInstructions executed by the stack's workerd, counted by ${execFileSync('valgrind', ['--version'], { encoding: 'utf8' }).trim()} (callgrind); ${ROUNDS} rounds, turns of ${rows.base.calls} and ${rows.subject.calls} calls at ${CONNECTIONS} connections`);
  // At this pace, how many calls one of the gate's reports carries (one every REPORT_MS of the counted process's clock).
  const perReport = (pace * REPORT_MS * SLOWER) / 1_000;
  console.log(
    SLOWER > 1
      ? `its clock ran ${SLOWER} times slower (test/bench/slow-clock.c): a report carried about ${perReport.toFixed(0)} calls (about fifty at the bench's pace)`
      : `its clock ran in real time${SLOWER_ASKED > 1 ? ' (no C compiler to build test/bench/slow-clock.c: apt-get install -y gcc)' : ''}: a report carried about ${Math.max(1, perReport).toFixed(0)} calls where the bench's carry about fifty, so the share below is an upper bound`,
  );
  console.log(`${rows.base.label}: ${millions(base)} a call (median turn; turns ${list('base')})`);
  console.log(`${rows.subject.label}: ${millions(subject)} a call (median turn; turns ${list('subject')}), ${pace.toFixed(1)} calls/s under valgrind`);
  console.log(
    COMPARE === 'workspaces'
      ? `the rotation's work over one workspace, by instructions: ${millions(subject - base)} a call; one workspace / the rotation ${(base / subject).toFixed(2)} (item 2's aim for throughput: 0.80 or better)`
      : `the product's own work over the skeleton, by instructions: ${millions(subject - base)} a call, ${((100 * (subject - base)) / base).toFixed(0)} % of the skeleton (aim: 25 % or less)`,
  );
  // A turn counted while V8 still optimizes the product's code (it has some fifty times the skeleton's) counts
  // its warm-up as the product's work; the re-optimizing after full collections stays under the 2 % said here.
  const compiling = (name: Row) => median(rows[name].turns.map((turn) => turn.compiling));
  const stillCompiling = compiling('subject') > 0.02 * subject;
  console.log(
    `V8's optimizing compilers in those turns (median): ${thousands(compiling('base'))} a call in the first, ${thousands(compiling('subject'))} in the second` +
      (stillCompiling ? `: the second was still warming up, so the difference above counts part of its warm-up; warm it longer (BENCH_INSTR_WARMUP, now ${WARMUP})` : ': warmed up'),
  );
  if (CACHE) {
    console.log("callgrind's simulated cache, misses a call (median turn), and as a share of the instructions:");
    for (const name of ['base', 'subject'] as Row[]) {
      const kind = (of: keyof Misses) => median(rows[name].turns.map((turn) => turn.misses![of])) / rows[name].calls;
      const instructions = perCall(name);
      console.log(
        `${rows[name].label}: first-level instruction ${(kind('instruction') / 1e3).toFixed(1)} k (${((100 * kind('instruction')) / instructions).toFixed(2)} %), ` +
          `data ${(kind('data') / 1e3).toFixed(1)} k (${((100 * kind('data')) / instructions).toFixed(2)} %), last level ${(kind('lastLevel') / 1e3).toFixed(2)} k`,
      );
    }
  }
  const [baseAreas, subjectAreas] = [rows.base.turns.at(-1)!.areas, rows.subject.turns.at(-1)!.areas];
  console.log('where the difference is (the last turn of each, thousands of instructions a call):');
  console.log(`| area | ${COMPARE === 'workspaces' ? 'one workspace | rotation' : 'skeleton | product'} | difference |\n|---|---:|---:|---:|`);
  for (const area of [...AREAS.map(([name]) => name), 'other']) {
    const [was, is] = [(baseAreas.get(area) ?? 0) / rows.base.calls / 1e3, (subjectAreas.get(area) ?? 0) / rows.subject.calls / 1e3];
    console.log(`| ${area} | ${was.toFixed(0)} | ${is.toFixed(0)} | ${(is - was >= 0 ? '+' : '') + (is - was).toFixed(0)} |`);
  }
  if (KEEP) for (const name of Object.keys(rows) as Row[]) copyFileSync(rows[name].turns.at(-1)!.file, join(KEEP, `${name}.callgrind`));
} finally {
  await stack.stop();
  upstream.stop();
  rmSync(scratch, { recursive: true, force: true });
}
// A pipe takes stdout's writes asynchronously: the summary is flushed before the handles are cut.
await new Promise((resolve) => process.stdout.write('', resolve));
process.exit(0);

/** Compiles `slow-clock.c` to `output`; undefined when no C compiler can. */
function buildSlowClock(output: string): string | undefined {
  try {
    execFileSync('cc', ['-O2', '-shared', '-fPIC', '-o', output, join(import.meta.dirname, 'slow-clock.c')], { stdio: 'ignore' });
    return output;
  } catch {
    return undefined;
  }
}

interface Misses {
  instruction: number;
  data: number;
  lastLevel: number;
}

/** A callgrind file's instructions, and with the cache simulation its misses (I1mr; D1mr + D1mw; ILmr + DLmr + DLmw). */
function countsOf(text: string): { total: number; misses: Misses | undefined } {
  const events = /^events: (.*)$/m.exec(text)?.[1]?.trim().split(/\s+/) ?? [];
  const totals = /^(?:totals|summary): (.*)$/m.exec(text)?.[1]?.trim().split(/\s+/).map(Number) ?? [];
  const of = (...names: string[]) => names.reduce((sum, name) => sum + (totals[events.indexOf(name)] ?? 0), 0);
  const total = of('Ir');
  if (!(total > 0)) throw new Error('callgrind counted no instructions in the turn');
  return { total, misses: events.includes('I1mr') ? { instruction: of('I1mr'), data: of('D1mr', 'D1mw'), lastLevel: of('ILmr', 'DLmr', 'DLmw') } : undefined };
}

function millions(count: number): string {
  return `${(count / 1e6).toFixed(2)} M`;
}

function thousands(count: number): string {
  return `${(count / 1e3).toFixed(0)} k`;
}

/** Instructions of a callgrind file by area (AREAS), from each function's own count (`callgrind_annotate`). */
function areasOf(file: string): Map<string, number> {
  const annotated = execFileSync('callgrind_annotate', ['--inclusive=no', '--threshold=100', '--show=Ir', file], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const areas = new Map<string, number>();
  for (const line of annotated.split('\n')) {
    // "1,234,567 ( 1.23%)  file:function [object]"
    const match = /^\s*([\d,]+) \(\s*[\d.]+%\)\s+(?:[^:]*:)?(.+?)(?: \[[^\]]*\])?$/.exec(line);
    if (!match || line.includes('PROGRAM TOTALS')) continue;
    const name = match[2]!.trim();
    const area = AREAS.find(([, pattern]) => pattern.test(name))?.[0] ?? 'other';
    areas.set(area, (areas.get(area) ?? 0) + Number(match[1]!.replaceAll(',', '')));
  }
  return areas;
}
