/**
 * `npm start`: the whole stack on this machine, seeded with a development organization, workspace and key,
 * and a curl line that works as printed. Runs until Ctrl-C or SIGTERM.
 */
import { relative } from 'node:path';
import { styleText } from 'node:util';
import { PROJECT_ROOT, readJson, seedPath, writeJson } from './lib/home';
import { type KeyWithSecret, OpsError, opsClient, type OpsClient } from './lib/ops-client';
import { type Stack, startStack } from './stack';

interface Seed {
  organizationId: string;
  workspaceId: string;
  keyId: string;
  /** The development workspace's MCP bearer token (scope workspace_mcp). */
  mcpTokenId?: string;
}

const SEED_NAME = 'Development';
const SEED_CREDIT_CENTS = 500;
const SEED_PLAN = 'payg';
const SEED_KEY_NAME = 'development';

const tty = process.stdout.isTTY === true;
const bold = (text: string) => (tty ? styleText('bold', text) : text);
const dim = (text: string) => (tty ? styleText('dim', text) : text);

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

async function main() {
  let stack: Stack | undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) process.exit(130); // asked twice: do not wait any longer
    stopping = true;
    console.log(dim(`\n${signal === 'SIGINT' ? 'Ctrl-C' : signal}: stopping...`));
    setTimeout(() => {
      console.error('Stopping took longer than 15 s; exiting anyway.');
      process.exit(1);
    }, 15_000).unref();
    try {
      await stack?.stop();
    } finally {
      process.exit(0);
    }
  };
  const listener = (signal: NodeJS.Signals) => void stop(signal);
  for (const signal of SIGNALS) process.on(signal, listener);

  console.log(dim('Starting Sluice: bundling the workers and starting workerd...'));
  try {
    stack = await startStack({ log: (line) => console.log(dim(`  ${line}`)) });
    // Miniflare's own exit hook answers SIGINT/SIGTERM with an immediate exit; this process disposes the
    // stack itself instead (its 'exit' hook stays, as a safety net).
    for (const signal of SIGNALS) for (const other of process.listeners(signal)) if (other !== listener) process.removeListener(signal, other);
    if (stopping) return;
    const api = stack.urls.api!;
    const client = opsClient(api, stack.settings.OPS_TOKEN!);
    const { seed, key } = await ensureSeed(client);
    const mcpToken = await ensureMcpToken(client, seed);
    // Miniflare does not resume a Workflow instance across a restart of workerd (Cloudflare does): the data
    // jobs the last run left unfinished, stopped or killed, run again from where their items stand.
    const { resumed } = await client.call<{ resumed: string[] }>('POST', '/ops/v1/jobs/resume');
    if (resumed.length > 0) console.log(dim(`  Resumed ${resumed.length} unfinished data job${resumed.length === 1 ? '' : 's'}: ${resumed.join(', ')}`));
    if (stopping) return;
    printBanner(stack, api, seed, key, mcpToken);
  } catch (error) {
    if (stopping) return;
    console.error(`\nnpm start failed: ${error instanceof Error ? error.message : String(error)}`);
    await stack?.stop().catch(() => {});
    process.exit(1);
  }
}

/**
 * The development seed: created once, then found again. The same key is re-revealed on every start; if
 * the seed no longer resolves (state wiped, key revoked), it is repaired or made afresh.
 */
async function ensureSeed(client: OpsClient): Promise<{ seed: Seed; key: string }> {
  const path = seedPath();
  const saved = readJson<Seed>(path);
  if (saved?.keyId && saved.workspaceId && saved.organizationId) {
    try {
      const revealed = await client.call<KeyWithSecret>('POST', `/ops/v1/keys/${saved.keyId}/reveal`);
      return { seed: saved, key: revealed.key };
    } catch (error) {
      if (!(error instanceof OpsError)) throw error;
    }
    // The key is gone or cannot be revealed; a new key in the same workspace keeps the organization.
    try {
      const created = await createDevelopmentKey(client, saved.workspaceId);
      const seed = { ...saved, keyId: created.id };
      writeJson(path, seed);
      return { seed, key: created.key };
    } catch (error) {
      if (!(error instanceof OpsError)) throw error;
    }
  }
  const organization = await client.call<{ id: string }>('POST', '/ops/v1/organizations', { name: SEED_NAME, plan: SEED_PLAN });
  // Enough development credit to call every tool at once (pay as you go has no monthly allowance).
  await client.call('POST', `/ops/v1/organizations/${organization.id}/wallet/credit`, { purchasedCents: SEED_CREDIT_CENTS });
  const workspace = await client.call<{ id: string }>('POST', '/ops/v1/workspaces', { organizationId: organization.id, name: SEED_NAME });
  const created = await createDevelopmentKey(client, workspace.id);
  const seed: Seed = { organizationId: organization.id, workspaceId: workspace.id, keyId: created.id };
  writeJson(path, seed);
  return { seed, key: created.key };
}

/** The development workspace's MCP bearer, re-revealed like the key, minted once when missing. */
async function ensureMcpToken(client: OpsClient, seed: Seed): Promise<string> {
  if (seed.mcpTokenId) {
    try {
      return (await client.call<KeyWithSecret>('POST', `/ops/v1/keys/${seed.mcpTokenId}/reveal`)).key;
    } catch (error) {
      if (!(error instanceof OpsError)) throw error;
    }
  }
  const created = await client.call<KeyWithSecret>('POST', '/ops/v1/keys', { workspaceId: seed.workspaceId, scope: 'workspace_mcp', name: `${SEED_KEY_NAME} MCP` });
  writeJson(seedPath(), { ...seed, mcpTokenId: created.id });
  return created.key;
}

function createDevelopmentKey(client: OpsClient, workspaceId: string): Promise<KeyWithSecret> {
  return client.call<KeyWithSecret>('POST', '/ops/v1/keys', { workspaceId, scope: 'workspace', name: SEED_KEY_NAME });
}

function printBanner(stack: Stack, api: string, seed: Seed, key: string, mcpToken: string) {
  const row = (label: string, value: string, note = '') => console.log(`  ${label.padEnd(16)}${bold(value)}${note ? dim(`  ${note}`) : ''}`);
  const state = relative(PROJECT_ROOT, stack.stateDir) || stack.stateDir;
  const others = (Object.entries(stack.urls) as [string, string][]).filter(([id]) => id !== 'api');

  console.log(`\n${bold('Sluice is running')} ${dim(`(workerd via Miniflare; state in ${state.startsWith('..') ? stack.stateDir : state})`)}\n`);
  row('REST API', api);
  for (const [id, url] of others) row(id === 'mcp' ? 'MCP endpoint' : id === 'app' ? 'Dashboard' : id, id === 'mcp' ? `${url}/mcp` : url);
  if (stack.settings.BASE_URL && stack.settings.BASE_URL !== api) row('Public URL', stack.settings.BASE_URL, 'BASE_URL');
  row('API key', key, `workspace "${SEED_NAME}" ${seed.workspaceId}`);
  row('Organization', seed.organizationId, `"${SEED_NAME}", plan ${SEED_PLAN}, seeded with ${SEED_CREDIT_CENTS} cents of credit`);
  row('MCP token', mcpToken, 'bearer of the MCP endpoint (not accepted on REST)');
  row('Operator token', stack.settings.OPS_TOKEN!, 'bearer of /ops/v1');
  if (stack.urls.app && stack.settings.DEV_OUTBOX === '1') row('Email outbox', `${stack.urls.app}/dev/outbox`, 'what the dashboard would email: confirmation links, invitations, password resets');
  for (const { worker, cron, next } of stack.crons) row('Cron', `${cron} (${worker})`, next ? `next at ${next.toISOString()}, run here as Cloudflare runs it` : '');
  console.log(`\n  Try it:\n    curl -s ${api}/v1/credits -H "Authorization: Bearer ${key}"`);
  if (stack.urls.mcp) {
    const server = { type: 'http', url: `${stack.urls.mcp}/mcp`, headers: { Authorization: `Bearer ${mcpToken}` } };
    console.log(`\n  MCP client config (e.g. .mcp.json):\n    ${JSON.stringify({ mcpServers: { sluice: server } })}`);
    console.log(`  or by OAuth, the URL alone (the client opens the dashboard to sign in and allow it):\n    claude mcp add --transport http sluice ${stack.urls.mcp}/mcp`);
  }
  // The CLI finds this stack by itself at the defaults; elsewhere it needs to be told where.
  const where = [api === 'http://127.0.0.1:8787' ? '' : `SLUICE_OPS_URL=${api} `, process.env.SLUICE_HOME ? `SLUICE_HOME=${process.env.SLUICE_HOME} ` : ''].join('');
  console.log(`\n  Operator CLI:  ${where}npm run -s ops -- --help`);
  console.log(`    e.g.  ${where}npm run -s ops -- wallet credit --org ${seed.organizationId} --purchased-cents 1000`);
  console.log(dim(`\n  Reference: ${api}/docs · Ctrl-C stops.\n`));
}

await main();
