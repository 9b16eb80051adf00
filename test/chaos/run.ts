/**
 * `npm run chaos`: concurrent spending across organizations and workspaces against the real local stack
 * (workerd through Miniflare, in a child process), with workerd SIGKILLed mid-load twice and started again
 * on the same state each time. Then it lets the wallets settle (holds left open by a killed call expire
 * after their time limit plus 60 s) and prints, per organization, what the balance, the ledger, the usage
 * rows and the clients say, side by side, and whether they agree.
 *
 * Everything is read through public surfaces only, so the script survives changes inside the wallet:
 * balances from GET /v1/credits, usage from GET /v1/usage (each workspace's own key), the ledger from the
 * operator API (GET /ops/v1/organizations/:id/wallet, its latest entries).
 *
 * Bounded: CHAOS_LOAD_S seconds of load per round (default 5), three rounds, at most CHAOS_SETTLE_S
 * seconds (default 120) waiting for holds to expire. Exit code 1 when the figures disagree.
 */
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { opsClient, type OpsClient } from '../../scripts/lib/ops-client';
import { startFakeLinkedin } from '../fakes/linkedin-loopback';
import { isolatedEnv } from '../node/support/processes';

const LOAD_S = Number(process.env.CHAOS_LOAD_S ?? 5);
const SETTLE_S = Number(process.env.CHAOS_SETTLE_S ?? 120);
const CLIENTS_PER_WORKSPACE = Number(process.env.CHAOS_CLIENTS ?? 4);
const KILLS = 2;
const STATE_ROOT = process.env.CHAOS_STATE_ROOT ?? (existsSync('/dev/shm') ? '/dev/shm' : tmpdir());

/** Who spends: one organization with plenty, one that runs dry mid-load (so refusals at zero are exercised too). */
const ORGANIZATIONS = [
  { name: 'Plenty', creditCents: 100_000, workspaces: 2 },
  { name: 'Scarce', creditCents: 150, workspaces: 2 },
];

interface Workspace {
  id: string;
  key: string;
}

interface Organization {
  name: string;
  id: string;
  creditCents: number;
  workspaces: Workspace[];
  /** What the clients saw: 200s (and the cents their meta said), refusals by status, calls cut by a kill. */
  succeeded: number;
  chargedSeenCents: number;
  refused: Record<number, number>;
  cut: number;
}

interface RunningStack {
  child: ChildProcess;
  api: string;
  opsToken: string;
}

async function startStackProcess(env: NodeJS.ProcessEnv): Promise<RunningStack> {
  const child = fork(fileURLToPath(new URL('./stack-process.ts', import.meta.url)), [], { env, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const ready = await new Promise<{ urls: { api: string }; settings: Record<string, string> }>((resolve, reject) => {
    child.once('message', (message) => resolve(message as never));
    child.once('exit', (code) => reject(new Error(`the stack process exited with ${code} before it was ready`)));
  });
  return { child, api: ready.urls.api, opsToken: ready.settings.OPS_TOKEN! };
}

/** SIGKILL of workerd (what crashes), then of the process that ran it: nothing gets to clean up. */
async function killStack(stack: RunningStack): Promise<number[]> {
  let workerd: number[] = [];
  try {
    workerd = execFileSync('pgrep', ['-P', String(stack.child.pid), 'workerd'], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
  } catch {
    // No workerd child: it is already gone.
  }
  for (const pid of workerd) process.kill(pid, 'SIGKILL');
  const exited = new Promise((resolve) => stack.child.once('exit', resolve));
  stack.child.kill('SIGKILL');
  await exited;
  return workerd;
}

async function stopStack(stack: RunningStack): Promise<void> {
  const exited = new Promise((resolve) => stack.child.once('exit', resolve));
  stack.child.kill('SIGTERM');
  await exited;
}

async function provision(ops: OpsClient): Promise<Organization[]> {
  const organizations: Organization[] = [];
  for (const spec of ORGANIZATIONS) {
    const { id } = await ops.call<{ id: string }>('POST', '/ops/v1/organizations', { name: `Chaos ${spec.name}`, plan: 'payg' });
    // Pay as you go (no allowance, so spending is purchased balance only) with a ceiling the load cannot reach.
    await ops.call('PUT', `/ops/v1/organizations/${id}/plan`, { plan: 'payg', rpm: 1_000_000 });
    await ops.call('POST', `/ops/v1/organizations/${id}/wallet/credit`, { purchasedCents: spec.creditCents });
    const workspaces: Workspace[] = [];
    for (let index = 0; index < spec.workspaces; index++) {
      const workspace = await ops.call<{ id: string }>('POST', '/ops/v1/workspaces', { organizationId: id, name: `Chaos ${spec.name} ${index + 1}` });
      const key = await ops.call<{ key: string }>('POST', '/ops/v1/keys', { workspaceId: workspace.id, name: 'chaos' });
      workspaces.push({ id: workspace.id, key: key.key });
    }
    organizations.push({ name: spec.name, id, creditCents: spec.creditCents, workspaces, succeeded: 0, chargedSeenCents: 0, refused: {}, cut: 0 });
  }
  return organizations;
}

let sequence = 0;

/** Metered calls from every workspace at once until `until`, or until the stack stops answering. */
async function spend(api: string, organizations: Organization[], until: number): Promise<void> {
  const client = async (organization: Organization, workspace: Workspace) => {
    while (Date.now() < until) {
      const domain = `chaos${++sequence}.example.com`;
      try {
        const response = await fetch(`${api}/v1/data/linkedin/get-company-by-domain?domain=${domain}`, {
          headers: { authorization: `Bearer ${workspace.key}` },
          signal: AbortSignal.timeout(15_000),
        });
        const body = (await response.json()) as { meta?: { costCents?: number } };
        if (response.status === 200) {
          organization.succeeded++;
          organization.chargedSeenCents += body.meta?.costCents ?? 0;
        } else {
          organization.refused[response.status] = (organization.refused[response.status] ?? 0) + 1;
        }
      } catch {
        // The stack died under this call: it may or may not have been charged; only the wallet knows.
        organization.cut++;
        return;
      }
    }
  };
  await Promise.all(organizations.flatMap((organization) => organization.workspaces.flatMap((workspace) => Array.from({ length: CLIENTS_PER_WORKSPACE }, () => client(organization, workspace)))));
}

interface Figures {
  purchasedCents: number;
  heldCents: number;
  ledgerPurchasedAfterCents: number | null;
  ledgerEntries: number;
  usageCalls: number;
  usageSucceeded: number;
  usageChargedCents: number;
}

async function read(api: string, ops: OpsClient, organization: Organization): Promise<Figures> {
  const first = organization.workspaces[0]!;
  const credits = ((await (await fetch(`${api}/v1/credits`, { headers: { authorization: `Bearer ${first.key}` } })).json()) as { data: unknown }).data as { purchasedBalanceCents: number; heldCents: number };
  const wallet = await ops.call<{ ledger: { purchasedAfterCents: number }[] }>('GET', `/ops/v1/organizations/${organization.id}/wallet`);
  let usageCalls = 0;
  let usageSucceeded = 0;
  let usageChargedCents = 0;
  for (const workspace of organization.workspaces) {
    const usage = ((await (await fetch(`${api}/v1/usage?limit=1`, { headers: { authorization: `Bearer ${workspace.key}` } })).json()) as { data: unknown }).data as {
      totals: { calls: number; succeeded: number; costCents: number };
    };
    usageCalls += usage.totals.calls;
    usageSucceeded += usage.totals.succeeded;
    usageChargedCents += usage.totals.costCents;
  }
  return {
    purchasedCents: credits.purchasedBalanceCents,
    heldCents: credits.heldCents,
    ledgerPurchasedAfterCents: wallet.ledger[0]?.purchasedAfterCents ?? null,
    ledgerEntries: wallet.ledger.length,
    usageCalls,
    usageSucceeded,
    usageChargedCents: round(usageChargedCents),
  };
}

const round = (cents: number) => Math.round(cents * 10_000) / 10_000;

async function main() {
  const home = mkdtempSync(join(STATE_ROOT, 'sluice-chaos-'));
  const upstream = await startFakeLinkedin();
  const env: NodeJS.ProcessEnv = {
    ...(await isolatedEnv(home)),
    LINKEDIN_API_KEY: 'chaos-key',
    LINKEDIN_API_HOST: 'linkedin-data-api.p.rapidapi.com',
    LINKEDIN_BASE_URL: upstream.url,
  };
  let stack: RunningStack | undefined;
  const started = Date.now();
  try {
    stack = await startStackProcess(env);
    const ops = () => opsClient(stack!.api, stack!.opsToken);
    const organizations = await provision(ops());
    const workspaceCount = organizations.reduce((sum, organization) => sum + organization.workspaces.length, 0);
    console.error(`chaos: ${organizations.length} organizations, ${workspaceCount} workspaces, ${CLIENTS_PER_WORKSPACE} clients each; ${LOAD_S} s of load per round`);

    for (let round = 1; round <= KILLS + 1; round++) {
      const load = spend(stack.api, organizations, Date.now() + LOAD_S * 1000);
      if (round <= KILLS) {
        // Mid-load: half-way through the round, with every client's call in flight.
        await new Promise((resolve) => setTimeout(resolve, (LOAD_S * 1000) / 2));
        const killed = await killStack(stack);
        await load;
        console.error(`chaos: round ${round}: SIGKILL of workerd (pid ${killed.join(', ') || 'none found'}) mid-load; starting it again on the same state`);
        stack = await startStackProcess(env);
      } else {
        await load;
        console.error(`chaos: round ${round}: load finished without a kill`);
      }
    }

    // Holds of calls cut by a kill are released by the wallet's alarm at their time limit plus 60 s.
    const deadline = Date.now() + SETTLE_S * 1000;
    let figures = await Promise.all(organizations.map((organization) => read(stack!.api, ops(), organization)));
    const settleStarted = Date.now();
    const heldWhenLoadEnded = figures.map((figure) => figure.heldCents);
    while (figures.some((figure) => figure.heldCents > 0) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      figures = await Promise.all(organizations.map((organization) => read(stack!.api, ops(), organization)));
    }
    // Usage rows trail their capture by up to about half a second.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    figures = await Promise.all(organizations.map((organization) => read(stack!.api, ops(), organization)));
    const settledIn = Math.round((Date.now() - settleStarted) / 1000);

    const problems = report(organizations, figures, heldWhenLoadEnded, settledIn, Math.round((Date.now() - started) / 1000));
    if (problems.length > 0) {
      console.log(`\nDISAGREEMENT:\n${problems.map((problem) => `- ${problem}`).join('\n')}`);
      process.exitCode = 1;
    } else {
      console.log('\nAll agree: wallet spend = usage charged, no stuck hold, no balance below zero, every 200 billed.');
    }
  } finally {
    if (stack) await stopStack(stack).catch(() => {});
    upstream.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

function report(organizations: Organization[], figures: Figures[], heldWhenLoadEnded: number[], settledIn: number, totalSeconds: number): string[] {
  const problems: string[] = [];
  console.log(`\nSluice chaos: ${KILLS} SIGKILLs of workerd mid-load, ${LOAD_S} s of load per round, ${CLIENTS_PER_WORKSPACE} clients per workspace; ${totalSeconds} s in all\n`);
  console.log('| organization | credited | balance | held when the load ended | held after settling | spent per wallet | ledger balance | usage calls | usage charged | 200s seen | charged seen | refused | cut by a kill |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|');
  organizations.forEach((organization, index) => {
    const figure = figures[index]!;
    const spent = round(organization.creditCents - figure.purchasedCents - figure.heldCents);
    const refused = Object.entries(organization.refused).map(([status, count]) => `${count} x ${status}`).join(', ') || '0';
    console.log(
      `| ${organization.name} | ${organization.creditCents} | ${figure.purchasedCents} | ${heldWhenLoadEnded[index]} | ${figure.heldCents} | ${spent} | ${figure.ledgerPurchasedAfterCents} | ${figure.usageCalls} | ${figure.usageChargedCents} | ${organization.succeeded} | ${round(organization.chargedSeenCents)} | ${refused} | ${organization.cut} |`,
    );
    const name = organization.name;
    if (figure.heldCents > 0) problems.push(`${name}: ${figure.heldCents} cents still held after ${settledIn} s (stuck holds)`);
    if (figure.purchasedCents < 0) problems.push(`${name}: balance below zero (${figure.purchasedCents} cents)`);
    if (figure.ledgerPurchasedAfterCents !== figure.purchasedCents) problems.push(`${name}: the ledger's last balance (${figure.ledgerPurchasedAfterCents}) is not the balance (${figure.purchasedCents})`);
    if (spent !== figure.usageChargedCents) problems.push(`${name}: the wallet spent ${spent} cents but usage rows charge ${figure.usageChargedCents}`);
    if (figure.usageSucceeded < organization.succeeded) problems.push(`${name}: clients saw ${organization.succeeded} successes but usage records ${figure.usageSucceeded}`);
    if (figure.usageSucceeded > organization.succeeded + organization.cut) {
      problems.push(`${name}: usage records ${figure.usageSucceeded} successes, more than the ${organization.succeeded} seen plus ${organization.cut} cut`);
    }
  });
  console.log(`\nheld after settling: read ${settledIn} s after the last restart (holds of killed calls expire at their time limit + 60 s)`);
  return problems;
}

await main();
