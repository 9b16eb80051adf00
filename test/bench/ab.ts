/**
 * `npm run bench:ab -- <git ref> [--rotation] [--latency] [--rounds N] [--calls N]`: the metered call's workerd
 * CPU, the code of a git ref (A) against the working tree (B), two stacks side by side on one machine, loaded in
 * blocks that alternate. `--latency` compares the mean time a call takes at one connection instead (what a
 * change in the hops a call waits for moves, where CPU may not).
 *
 * Why: on a shared machine the same code moves by a quarter from one minute to the next, so two runs of the
 * bench, or two rows of one run a minute apart, cannot show a change of a few percent. Here each round loads A
 * then B (B then A in the next round) with the same number of calls, over connections kept open from round to
 * round: whatever the machine does over the minutes falls on both alike. A and B are two processes, so a round
 * needs no quiet after it (what its calls leave for later counts for the process that does it), and each side's
 * CPU is read to the nanosecond (`preciseCpuMs`). The figure is each side's CPU from the first round to quiet
 * after the last, over its calls; the rounds' own B/A are printed as quartiles, so a run shows how far it agrees
 * with itself. Until 2026-11-29 a round was a turn of 1,000 calls with 0.7 s of quiet after it: three runs of
 * the same code gave means within 2 %, a change of 7 % showed in nine rounds of ten.
 *
 * A's checkout is a git worktree in a temporary directory (the ref's own code, this checkout's node_modules).
 * `--rotation` spreads the calls over 1,000 workspaces of one organization, each called once a round, in
 * order (issue 30 item 2); without it every call comes from one workspace (item 5).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { startFakeLinkedin } from '../fakes/linkedin-loopback';
import { loadBlock, median, preciseCpuMs, quantile, quietAfter, servingWorkerd, workerdChildren } from './measure';
import { unboundedOrganization } from './accounts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { rotation: { type: 'boolean', default: false }, latency: { type: 'boolean', default: false }, rounds: { type: 'string' }, calls: { type: 'string', default: '100' } },
});
const ref = positionals[0];
if (!ref) {
  console.error('Usage: npm run bench:ab -- <git ref> [--rotation] [--latency] [--rounds N] [--calls N]');
  process.exit(2);
}
const WORKSPACES = values.rotation ? 1_000 : 1;
/** A rotation's round is ten times longer, and the unmeasured round before it doubles that. */
const ROUNDS = Number(values.rounds ?? (values.rotation ? 10 : 160));
/** A rotation's round calls each of its workspaces once. */
const CALLS = values.rotation ? WORKSPACES : Number(values.calls);
const CONNECTIONS = values.latency ? 1 : 20;
/** Calls of each side before the rounds, so V8 has optimized both (the bench's BENCH_WARM_CALLS). */
const WARM_CALLS = 5_000;
const STATE_ROOT = process.env.BENCH_STATE_ROOT ?? '/dev/shm';

const here = resolve(import.meta.dirname, '../..');
const scratch = mkdtempSync(join(tmpdir(), 'sluice-ab-'));
const checkoutA = join(scratch, 'a');
execFileSync('git', ['-C', here, 'worktree', 'add', '--detach', '--quiet', checkoutA, ref], { stdio: 'inherit' });
symlinkSync(join(here, 'node_modules'), join(checkoutA, 'node_modules'));
const homes: string[] = [];
const cleanUp = () => {
  for (const home of homes) rmSync(home, { recursive: true, force: true });
  execFileSync('git', ['-C', here, 'worktree', 'remove', '--force', checkoutA]);
  rmSync(scratch, { recursive: true, force: true });
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    cleanUp();
    process.exit(130);
  });
}

interface Side {
  name: string;
  pids: number[];
  pool: Pool;
  /** The nth call: a new input each time (never cached), and the workspaces in order. */
  request: (n: number) => { path: string; headers: Record<string, string> };
  stop: () => Promise<void>;
}

/** One stack from `checkout` on ports from `port`, with an organization of `WORKSPACES` funded workspaces, a key each. */
async function start(name: string, checkout: string, port: number, upstreamUrl: string): Promise<Side> {
  const { startStack } = (await import(join(checkout, 'scripts/stack.ts'))) as typeof import('../../scripts/stack');
  const { opsClient } = (await import(join(checkout, 'scripts/lib/ops-client.ts'))) as typeof import('../../scripts/lib/ops-client');
  const home = mkdtempSync(join(STATE_ROOT, 'sluice-ab-'));
  homes.push(home);
  const before = workerdChildren();
  const stack = await startStack({
    env: {
      ...process.env,
      SLUICE_HOME: home,
      SLUICE_API_PORT: String(port),
      SLUICE_MCP_PORT: String(port + 1),
      SLUICE_APP_PORT: String(port + 2),
      LINKEDIN_API_KEY: 'bench-key',
      LINKEDIN_API_HOST: 'linkedin-data-api.p.rapidapi.com',
      LINKEDIN_BASE_URL: upstreamUrl,
    },
  });
  // The workerd serving the api, not the databases' process beside it (measure.ts, servingWorkerd).
  const pids = servingWorkerd(workerdChildren().filter((pid) => !before.includes(pid)), port);
  const ops = opsClient(stack.urls.api!, stack.settings.OPS_TOKEN!);
  const organizationId = await unboundedOrganization(ops, 'A/B');
  const keys: string[] = [];
  for (let made = 0; made < WORKSPACES; made++) {
    const workspace = await ops.call<{ id: string }>('POST', '/ops/v1/workspaces', { organizationId, name: `a/b ${made}` });
    keys.push((await ops.call<{ key: string }>('POST', '/ops/v1/keys', { workspaceId: workspace.id, name: 'a/b' })).key);
  }
  const pool = new Pool(stack.urls.api!, { connections: CONNECTIONS, pipelining: 1 });
  const request = (n: number) => ({
    path: `/v1/data/linkedin/get-company-by-domain?domain=ab${n}.example.com`,
    headers: { authorization: `Bearer ${keys[n % keys.length]}` },
  });
  return { name, pids, pool, request, stop: async () => {
    await pool.close();
    await stack.stop();
  } };
}

const upstream = await startFakeLinkedin();
try {
  const sides = [await start(`A (${ref})`, checkoutA, 19_400, upstream.url), await start('B (working tree)', here, 19_410, upstream.url)] as const;
  let sequence = 0;
  let failures = 0;
  /** A round of one side: its calls, and what they cost (CPU, or with --latency the mean wall time at one connection). */
  const round = async (side: Side, calls: number) => {
    const loaded = await loadBlock(side.pool, side.pids, calls, CONNECTIONS, () => side.request(sequence++));
    failures += loaded.failures;
    return values.latency ? loaded.ms / calls : loaded.cpuMsPerCall;
  };
  // Every workspace's first call (its gate's first lease), then the warm-up, before the rounds: they measure the steady state.
  for (const side of sides) await round(side, Math.max(WARM_CALLS, 2 * WORKSPACES));
  failures = 0;
  const started = performance.now();
  const before = sides.map((side) => preciseCpuMs(side.pids));
  const perCall: [number[], number[]] = [[], []];
  for (let turn = 0; turn < ROUNDS; turn++) {
    for (const index of turn % 2 === 0 ? ([0, 1] as const) : ([1, 0] as const)) {
      // In rotation a side's gates wait through the other side's round: past workerd's 10 s, which drops an idle
      // object, one side in each round started every gate again (B/A from 0.47 to 1.55 between rounds of 1,000
      // calls, 2026-11-29). An unmeasured round first calls every gate, so the measured one finds them as a busy
      // deployment keeps them. The process's total then carries those rounds too, so a rotation is read by its
      // measured rounds alone.
      if (values.rotation) await round(sides[index], WORKSPACES);
      perCall[index].push(await round(sides[index], CALLS));
    }
  }
  const seconds = (performance.now() - started) / 1_000;
  await Promise.all(sides.map((side) => quietAfter(side.pids, { minMs: 700, windowMs: 300, maxMs: 5_000 })));
  const ratios = perCall[0].map((a, index) => perCall[1][index]! / a);
  const quartiles = [0.25, 0.5, 0.75].map((share) => quantile(ratios, share).toFixed(3)).join(', ');
  const what = values.latency ? 'mean time of a metered call at one connection' : 'workerd CPU a metered call';
  const overall = values.latency || values.rotation
    ? `A ${median(perCall[0]).toFixed(3)} ms, B ${median(perCall[1]).toFixed(3)} ms (median rounds)`
    : (() => {
        const total = sides.map((side, index) => (preciseCpuMs(side.pids) - before[index]!) / (ROUNDS * CALLS));
        return `A ${total[0]!.toFixed(3)} ms, B ${total[1]!.toFixed(3)} ms from the first round to quiet after the last; B/A ${(total[1]! / total[0]!).toFixed(3)}`;
      })();
  console.log(
    `\n${what}${values.rotation ? ', 1,000 workspaces in rotation' : ''}, ${ROUNDS} rounds of ${CALLS} calls a side (${seconds.toFixed(0)} s): ${overall}; ` +
      `the rounds' B/A at their quartiles ${quartiles}, B below A in ${ratios.filter((ratio) => ratio < 1).length} of ${ROUNDS} rounds` +
      `${failures > 0 ? `; ${failures} calls did not answer 2xx` : ''}`,
  );
  await Promise.all(sides.map((side) => side.stop()));
} finally {
  upstream.stop();
  cleanUp();
}
// A pipe takes stdout's writes asynchronously: the summary line is flushed before the stacks' handles are cut.
await new Promise((resolve) => process.stdout.write('', resolve));
process.exit(0);
