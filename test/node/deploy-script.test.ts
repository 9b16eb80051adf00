/**
 * `npm run deploy` against a fake wrangler first on PATH (test/deploy/fake-wrangler.mjs: wrangler 4.86's answers,
 * an account kept in a file, every call logged). The script runs in process (its main, argv and io injected);
 * the smoke test's fetch is answered from what the fake account holds, so it sees what was deployed.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../scripts/deploy';
import { smokeTest } from '../../scripts/deploy/smoke';
import { type SharedStack, sharedStack } from './support/shared-stack';
import { ROOT, tempDir } from './support/processes';

interface Call {
  argv: string[];
  config?: Record<string, unknown> & { name: string; vars: Record<string, string>; d1_databases: { database_id: string }[] };
  secrets?: string[];
  secretsFileMode?: string;
  applied?: string[];
}

interface Account {
  d1: { uuid: string; name: string }[];
  workers: Record<string, { secrets: string[]; deploys: number; values: Record<string, string>; config: { vars: Record<string, string> } }>;
}

function sandbox() {
  const dir = tempDir('deploy-script');
  const home = join(dir, 'home');
  mkdirSync(home);
  const paths = { dir, home, state: join(dir, 'account.json'), log: join(dir, 'calls.jsonl'), out: join(dir, 'deploy') };
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${join(ROOT, 'test', 'deploy', 'bin')}:${process.env.PATH}`,
    SLUICE_HOME: home,
    SLUICE_DEPLOY_DIR: paths.out,
    FAKE_WRANGLER_STATE: paths.state,
    FAKE_WRANGLER_LOG: paths.log,
  };
  const calls = (): Call[] => (existsSync(paths.log) ? readFileSync(paths.log, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as Call) : []);
  const account = (): Account => JSON.parse(readFileSync(paths.state, 'utf8')) as Account;

  /** The deployed workers as the smoke test reaches them: each answers from the config it was deployed with. */
  const deployedFetch = (tamper?: (url: URL, body: unknown) => unknown): typeof fetch =>
    (async (input: string | URL | Request) => {
      const url = new URL(input instanceof Request ? input.url : input);
      const name = url.hostname.split('.')[0]!;
      const worker = existsSync(paths.state) ? account().workers[name] : undefined;
      if (!worker) throw new TypeError('fetch failed (no such host)');
      const vars = worker.config.vars;
      const answer = (body: unknown, type = 'application/json') =>
        new Response(typeof body === 'string' ? body : JSON.stringify(tamper ? tamper(url, body) : body), { status: 200, headers: { 'content-type': type } });
      if (url.pathname === '/health') return answer({ success: true, data: { status: 'ok', version: '1.0.0', build: vars.BUILD_ID } });
      if (url.pathname === '/v1/platforms') return answer({ success: true, data: { platforms: [] } });
      if (url.pathname === '/.well-known/oauth-authorization-server') return answer({ issuer: new URL(vars.MCP_URL!).origin });
      if (url.pathname === '/signup') return answer('<!doctype html><form method="post"></form>', 'text/html; charset=utf-8');
      return new Response('{}', { status: 404 });
    }) as typeof fetch;

  async function deploy(argv: string[], fetchImpl = deployedFetch()) {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = '';
    let err = '';
    stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const code = await main(argv, { env, stdout, stderr, fetch: fetchImpl, sleep: async () => {} });
    return { code, stdout: out, stderr: err };
  }
  const settingsFile = (text: string) => {
    const file = join(dir, `settings-${Math.random().toString(36).slice(2)}.env`);
    writeFileSync(file, text);
    return file;
  };
  return { paths, env, calls, account, deploy, deployedFetch, settingsFile };
}

/** The command's words before its first flag: `d1 migrations apply`, `deploy`, `` for --version. */
const commandOf = (call: Call) => {
  const firstFlag = call.argv.findIndex((arg) => arg.startsWith('-'));
  return call.argv.slice(0, Math.min(3, firstFlag === -1 ? call.argv.length : firstFlag)).join(' ');
};
const committedApiConfig = () => readFileSync(join(ROOT, 'wrangler.toml'), 'utf8');

describe('npm run deploy', () => {
  it('provisions, migrates and deploys api, mcp, app in order, then a second run creates nothing', async () => {
    const box = sandbox();
    const before = committedApiConfig();
    const settings = box.settingsFile('XAI_API_KEY=xai-secret-value-1\nRESEND_API_KEY=re_secret_value_2\nEMAIL_FROM=Sluice <no-reply@example.com>\n');

    const first = await box.deploy(['--workers-dev', 'acme', '--settings', settings]);
    expect(first.code, first.stderr).toBe(0);
    const calls = box.calls();
    expect(calls.map(commandOf)).toEqual([
      '',
      'whoami',
      'd1 list',
      'd1 create sluice',
      'd1 list',
      // The bucket of large answers (data jobs, change tracking), bound by api and app.
      'r2 bucket list',
      'r2 bucket create',
      // The nightly queue (usage.daily, prunes carried on), produced and consumed by api.
      'queues list',
      'queues create sluice-nightly',
      'secret list',
      'secret list',
      'secret list',
      'd1 migrations apply',
      'deploy',
      'deploy',
      'deploy',
    ]);
    const deploys = calls.filter((call) => commandOf(call) === 'deploy');
    expect(deploys.map((call) => call.config!.name)).toEqual(['sluice-api', 'sluice-mcp', 'sluice-app']);

    // The real id in every rendered config; the committed config keeps its placeholder.
    const [database] = box.account().d1;
    for (const call of deploys) expect(call.config!.d1_databases[0]!.database_id).toBe(database!.uuid);
    expect(calls.find((call) => commandOf(call) === 'r2 bucket create')!.argv).toContain('sluice-results');
    expect(deploys[0]!.config!.queues).toMatchObject({ producers: [{ binding: 'NIGHTLY', queue: 'sluice-nightly' }], consumers: [{ queue: 'sluice-nightly' }] });
    for (const call of deploys.filter((deploy) => deploy.config!.name !== 'sluice-mcp')) expect(call.config!.r2_buckets).toEqual([{ binding: 'RESULTS', bucket_name: 'sluice-results' }]);
    expect(committedApiConfig()).toBe(before);
    expect(readdirSync(join(box.paths.out, 'production')).sort()).toEqual(['api', 'app', 'mcp']);

    // One set of public URLs across the three, the cron on the api worker, this build everywhere.
    const urls = { BASE_URL: 'https://sluice-api.acme.workers.dev', MCP_URL: 'https://sluice-mcp.acme.workers.dev/mcp', APP_URL: 'https://sluice-app.acme.workers.dev' };
    for (const call of deploys) expect(call.config!.vars).toMatchObject({ ...urls, EMAIL_FROM: 'Sluice <no-reply@example.com>' });
    expect(new Set(deploys.map((call) => call.config!.vars.BUILD_ID)).size).toBe(1);
    expect((deploys[0]!.config!.triggers as { crons: string[] }).crons).toEqual(['5 0 * * *']);
    expect(calls.find((call) => commandOf(call) === 'd1 migrations apply')!.applied!.length).toBeGreaterThan(0);

    // Secrets: generated ones kept 0600, each worker gets what its code reads, nothing printed, never a var.
    const secrets = Object.fromEntries(deploys.map((call) => [call.config!.name, call.secrets]));
    expect(secrets['sluice-api']).toEqual(['KEY_ENCRYPTION_KEY', 'OPS_TOKEN', 'RESEND_API_KEY', 'XAI_API_KEY']);
    expect(secrets['sluice-app']).toEqual(expect.arrayContaining(['KEY_ENCRYPTION_KEY', 'RESEND_API_KEY']));
    expect(secrets['sluice-app']).not.toContain('XAI_API_KEY');
    expect(secrets['sluice-mcp']).not.toContain('XAI_API_KEY');
    for (const call of deploys) expect(call.secretsFileMode).toBe('600');
    const store = join(box.paths.home, 'deploy', 'production', 'secrets.json');
    expect((statSync(store).mode & 0o777).toString(8)).toBe('600');
    const generated = JSON.parse(readFileSync(store, 'utf8')) as Record<string, string>;
    const account = box.account();
    expect(account.workers['sluice-api']!.values.KEY_ENCRYPTION_KEY).toBe(generated.KEY_ENCRYPTION_KEY);
    expect(account.workers['sluice-app']!.values.KEY_ENCRYPTION_KEY).toBe(generated.KEY_ENCRYPTION_KEY);
    for (const value of ['xai-secret-value-1', 're_secret_value_2', generated.KEY_ENCRYPTION_KEY!, generated.OPS_TOKEN!]) {
      expect(first.stdout + first.stderr).not.toContain(value);
      for (const call of deploys) expect(JSON.stringify(call.config)).not.toContain(value);
    }
    expect(first.stdout).toMatch(/ok {3}https:\/\/sluice-app\.acme\.workers\.dev\/signup/);

    // The second run finds everything: no database created, the same keys, the same id.
    const second = await box.deploy(['--workers-dev', 'acme', '--settings', settings]);
    expect(second.code, second.stderr).toBe(0);
    const again = box.calls().slice(calls.length);
    expect(again.map(commandOf).filter((command) => /create/.test(command))).toEqual([]);
    expect(box.account().d1).toHaveLength(1);
    expect(again.find((call) => commandOf(call) === 'd1 migrations apply')!.applied).toEqual([]);
    expect(JSON.parse(readFileSync(store, 'utf8'))).toEqual(generated);
    expect(box.account().workers['sluice-api']!.values.KEY_ENCRYPTION_KEY).toBe(generated.KEY_ENCRYPTION_KEY);
    expect(box.account().workers['sluice-api']!.deploys).toBe(2);
  });

  it('stops before running anything when a required secret is missing, naming it', async () => {
    const box = sandbox();
    const settings = box.settingsFile('STRIPE_SECRET_KEY=sk_live_abc\n');
    const run = await box.deploy(['--workers-dev', 'acme', '--settings', settings]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/STRIPE_WEBHOOK_SECRET/);
    expect(run.stderr).not.toContain('sk_live_abc');
    expect(box.calls()).toEqual([]);
  });

  it('never makes a new KEY_ENCRYPTION_KEY for an account that holds one: kept where set, refused where a worker lacks it', async () => {
    const box = sandbox();
    expect((await box.deploy(['--workers-dev', 'acme'])).code).toBe(0);
    const key = box.account().workers['sluice-api']!.values.KEY_ENCRYPTION_KEY;
    // Another machine: the same account, no $SLUICE_HOME/deploy secrets. Every worker that reads the key has it.
    const elsewhere = join(box.paths.dir, 'other-home');
    mkdirSync(elsewhere);
    box.env.SLUICE_HOME = elsewhere;
    let before = box.calls().length;
    const kept = await box.deploy(['--workers-dev', 'acme']);
    expect(kept.code, kept.stderr).toBe(0);
    expect(box.calls().slice(before).flatMap((call) => call.secrets ?? [])).not.toContain('KEY_ENCRYPTION_KEY');
    expect(box.account().workers['sluice-app']!.values.KEY_ENCRYPTION_KEY).toBe(key);

    // The dashboard lacks it (say it was deleted there): a new value would not match the api's, so the deploy stops.
    const state = JSON.parse(readFileSync(box.paths.state, 'utf8')) as Account;
    state.workers['sluice-app']!.secrets = state.workers['sluice-app']!.secrets.filter((name) => name !== 'KEY_ENCRYPTION_KEY');
    writeFileSync(box.paths.state, JSON.stringify(state));
    before = box.calls().length;
    const run = await box.deploy(['--workers-dev', 'acme']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/Missing required secret KEY_ENCRYPTION_KEY: it is set on sluice-api.* but not on sluice-app/);
    expect(box.calls().slice(before).map(commandOf)).not.toContain('deploy');
  });

  it('stops after whoami when wrangler is not logged in, saying how to log in', async () => {
    const box = sandbox();
    box.env.FAKE_WRANGLER_LOGGED_OUT = '1';
    const run = await box.deploy(['--workers-dev', 'acme']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/not logged in: run `npx wrangler login`, or set CLOUDFLARE_API_TOKEN/);
    expect(box.calls().map(commandOf)).toEqual(['', 'whoami']);
  });

  it('--plan prints every step and command and touches nothing', async () => {
    const box = sandbox();
    const run = await box.deploy(['--plan', '--workers-dev', 'acme']);
    expect(run.code, run.stderr).toBe(0);
    expect(box.calls()).toEqual([]);
    expect(existsSync(box.paths.out)).toBe(false);
    expect(existsSync(join(box.paths.home, 'deploy'))).toBe(false);
    for (const command of ['wrangler d1 list --json', 'wrangler d1 create sluice', 'wrangler d1 migrations apply sluice --remote', 'wrangler deploy --config']) expect(run.stdout).toContain(`would run: ${command}`);
    expect(run.stdout.indexOf('sluice-api would be deployed')).toBeLessThan(run.stdout.indexOf('sluice-mcp would be deployed'));
    expect(run.stdout.indexOf('sluice-mcp would be deployed')).toBeLessThan(run.stdout.indexOf('sluice-app would be deployed'));
  });

  it('exits non-zero naming the URL whose answer is wrong', async () => {
    const box = sandbox();
    const stale = box.deployedFetch((url, body) => (url.hostname.startsWith('sluice-mcp') && url.pathname === '/health' ? { success: true, data: { status: 'ok', build: 'an-older-build' } } : body));
    const run = await box.deploy(['--workers-dev', 'acme'], stale);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('https://sluice-mcp.acme.workers.dev/health: serves build "an-older-build"');
  });

  it('refuses a settings file naming something that is not a setting, and local addresses', async () => {
    const box = sandbox();
    const typo = await box.deploy(['--workers-dev', 'acme', '--settings', box.settingsFile('STRIPE_SECRET=sk\n')]);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toMatch(/STRIPE_SECRET, which is not a setting/);
    const local = await box.deploy(['--settings', box.settingsFile('BASE_URL=https://127.0.0.1:8787\nMCP_URL=https://mcp.example.com/mcp\nAPP_URL=https://app.example.com\nDEV_OUTBOX=1\n')]);
    expect(local.code).toBe(1);
    expect(local.stderr).toMatch(/\[local-only\].*BASE_URL/);
    expect(local.stderr).toMatch(/\[local-only\].*DEV_OUTBOX/);
    const plain = await box.deploy(['--settings', box.settingsFile('BASE_URL=http://api.example.com\nMCP_URL=https://mcp.example.com/mcp\nAPP_URL=https://app.example.com\n')]);
    expect(plain.code).toBe(1);
    expect(plain.stderr).toContain('BASE_URL must be an https URL, not "http://api.example.com"');
    expect(box.calls()).toEqual([]);
  });
});

describe('the smoke test on the real workers', () => {
  // The shared stack starts when the first file asks: in a hook, whose bound (hookTimeout) allows for that.
  let stack: SharedStack;
  beforeAll(async () => {
    stack = await sharedStack();
  });

  it('passes on the local stack, and names the URL when the build differs', async () => {
    const urls = { BASE_URL: stack.settings.BASE_URL!, TOOLS_BASE_URL: stack.settings.TOOLS_BASE_URL!, MCP_URL: stack.settings.MCP_URL!, APP_URL: stack.settings.APP_URL! };
    const log: string[] = [];
    expect(await smokeTest(urls, stack.settings.BUILD_ID!, { fetch, attempts: 1, log: (line) => log.push(line) }), log.join('\n')).toEqual([]);
    const stale = await smokeTest(urls, 'another-build', { fetch, attempts: 1 });
    expect(stale.map((failure) => failure.url)).toEqual([`${urls.BASE_URL}/health`, `${new URL(urls.MCP_URL).origin}/health`, `${urls.APP_URL}/health`]);
  });
});
