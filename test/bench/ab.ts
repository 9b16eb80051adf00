/**
 * `npm run bench:ab -- <git ref> [--rotation] [--latency] [--rounds N] [--calls N]`: the metered call's workerd
 * CPU, the code of a git ref (A) against the working tree (B), two stacks side by side on one machine, loaded in
 * turns. `--latency` compares the mean time a call takes at one connection instead (what a change in the hops a
 * call waits for moves, where CPU may not).
 *
 * Why: on a shared machine the same code moves by a quarter from one minute to the next, so two runs of the
 * bench, or two rows of one run a minute apart, cannot show a change of a few percent. Here each round loads A
 * then B (B then A in the next round) with the same number of calls, and reads each stack's CPU after its
 * turn: whatever the machine does over the minutes falls on both alike. Each round's B/A is printed with the
 * median and the means, so a run shows how far its own rounds agree. Three runs of the same code (A/A) gave
 * means within 2 % of each other; a change of 7 % showed in nine rounds of ten, one of 5 % in seven.
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
import autocannon from 'autocannon';
import { startFakeLinkedin } from '../fakes/linkedin-loopback';
import { cpuMs, median, servingWorkerd, workerdChildren } from './measure';
import { unboundedOrganization } from './accounts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { rotation: { type: 'boolean', default: false }, latency: { type: 'boolean', default: false }, rounds: { type: 'string', default: '10' }, calls: { type: 'string', default: '1000' } },
});
const ref = positionals[0];
if (!ref) {
  console.error('Usage: npm run bench:ab -- <git ref> [--rotation] [--latency] [--rounds N] [--calls N]');
  process.exit(2);
}
const ROUNDS = Number(values.rounds);
const CALLS = Number(values.calls);
const WORKSPACES = values.rotation ? 1_000 : 1;
const CONNECTIONS = values.latency ? 1 : 20;
/** After a turn, the reports and the usage flush its calls caused still count for it. */
const TAIL_MS = 700;
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
  request: autocannon.Options;
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
  let sequence = 0;
  const path = (n: number) => `/v1/data/linkedin/get-company-by-domain?domain=ab${n}.example.com`;
  const request: autocannon.Options = {
    url: `${stack.urls.api}${path(0)}`,
    connections: CONNECTIONS,
    sampleInt: 20,
    // A new input each call (never cached), and the workspaces in order.
    requests: [{ setupRequest: (request) => ({ ...request, path: path(++sequence), headers: { authorization: `Bearer ${keys[sequence % keys.length]}` } }) }],
  };
  return { name, pids, request, stop: () => stack.stop() };
}

const upstream = await startFakeLinkedin();
try {
  const sides = [await start(`A (${ref})`, checkoutA, 19_400, upstream.url), await start('B (working tree)', here, 19_410, upstream.url)] as const;
  // Every workspace's first call (its gate's first lease) before the rounds: they measure the steady state.
  for (const side of sides) await autocannon({ ...side.request, amount: Math.max(2_000, 2 * WORKSPACES) });
  const perCall: [number[], number[]] = [[], []];
  for (let round = 0; round < ROUNDS; round++) {
    for (const index of round % 2 === 0 ? [0, 1] : [1, 0]) {
      const side = sides[index]!;
      // In rotation a side's gates wait through the other side's turn, two of them when the order turns
      // round: past workerd's 10 s, which drops an idle object, so one side in each round started every gate
      // again (B/A from 0.47 to 1.55 between rounds, 2026-11-29). An unmeasured round first calls every gate,
      // so the measured one finds them as a busy deployment keeps them.
      if (values.rotation) {
        await autocannon({ ...side.request, amount: WORKSPACES });
        await new Promise((resolve) => setTimeout(resolve, TAIL_MS));
      }
      const before = cpuMs(side.pids);
      const result = await autocannon({ ...side.request, amount: CALLS });
      await new Promise((resolve) => setTimeout(resolve, TAIL_MS));
      if (result.non2xx + result.errors > 0) console.log(`${side.name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
      perCall[index]!.push(values.latency ? result.latency.mean : (cpuMs(side.pids) - before) / result.requests.total);
    }
    console.log(`round ${round + 1}: A ${perCall[0][round]!.toFixed(3)} ms, B ${perCall[1][round]!.toFixed(3)} ms a call, B/A ${(perCall[1][round]! / perCall[0][round]!).toFixed(3)}`);
  }
  const mean = (list: number[]) => list.reduce((sum, value) => sum + value, 0) / list.length;
  const ratios = perCall[0].map((a, round) => perCall[1][round]! / a);
  console.log(
    `\n${values.latency ? 'mean time of a metered call at one connection' : 'workerd CPU a metered call'}${values.rotation ? ', 1,000 workspaces in rotation' : ''}, ${ROUNDS} rounds of ${CALLS} calls each: ` +
      `A ${mean(perCall[0]).toFixed(3)} ms (median ${median(perCall[0]).toFixed(3)}), B ${mean(perCall[1]).toFixed(3)} ms (median ${median(perCall[1]).toFixed(3)}); ` +
      `B/A ${(mean(perCall[1]) / mean(perCall[0])).toFixed(3)} on the means, median round ${median(ratios).toFixed(3)}, B below A in ${ratios.filter((ratio) => ratio < 1).length} of ${ROUNDS} rounds`,
  );
  await Promise.all(sides.map((side) => side.stop()));
} finally {
  upstream.stop();
  cleanUp();
}
// A pipe takes stdout's writes asynchronously: the summary line is flushed before the stacks' handles are cut.
await new Promise((resolve) => process.stdout.write('', resolve));
process.exit(0);
