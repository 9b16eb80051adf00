/**
 * `npm run deploy`: Sluice onto the Cloudflare account wrangler is logged in to, with the pinned wrangler CLI.
 *
 *   1. check      the production check (scripts/deploy/check.ts) on the configs about to ship, the settings file's
 *                 names, the secrets that must come together; nothing on the account is touched before it passes
 *   2. provision  find or create each D1 database, R2 bucket and queue the configs bind (Workflows are created by
 *                 the deploy itself, Browser Rendering needs nothing)
 *   3. render     dist/deploy/<env>/<worker>/wrangler.json: the committed configs with the real ids, public URLs,
 *                 build and plain settings; the committed configs stay account-free
 *   4. secrets    KEY_ENCRYPTION_KEY and OPS_TOKEN generated once and kept in $SLUICE_HOME/deploy/<env>/secrets.json
 *                 (0600); the rest from the settings file; uploaded with each worker's deploy, never printed
 *   5. migrate    wrangler d1 migrations apply --remote
 *   6. deploy     api, then mcp (binds the api's McpGateway), then app (binds the api's classes)
 *   7. smoke      /health of each worker reports this build, /v1/platforms answers, the OAuth metadata names
 *                 the MCP origin as issuer, the sign-up page loads
 *
 * `npm run deploy -- --plan` prints every step and command, running none and writing nothing.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parseArgs, parseEnv } from 'node:util';
import { pathToFileURL } from 'node:url';
import { GENERATED_SECRETS, type GeneratedSecretName, PROJECT_ROOT, readJson, sluiceHome, writeJson } from './lib/home';
import { isSecretSetting, productionProblems, type Problem } from './deploy/check';
import { committedConfig, entryOf, lastDeployed, readWorkerConfigs, resourcesOf, WORKER_CONFIG_PATHS, type RawConfig, type WorkerConfig, type WorkerId } from './deploy/configs';
import { deployBase, nameIn, renderConfigs, resolveUrls, type PublicUrls } from './deploy/render';
import { scanSourcesOnce, type SourceFacts } from './deploy/source';
import { bucketNames, commandLine, queueNames, wranglerCli, WranglerError, type Wrangler } from './deploy/wrangler';
import { smokeTest } from './deploy/smoke';

export interface DeployIo {
  env: NodeJS.ProcessEnv;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  fetch?: typeof fetch;
  /** Pause between smoke-test attempts (a new workers.dev route takes a few seconds). */
  sleep?: (ms: number) => Promise<void>;
  root?: string;
}

const USAGE = `Usage: npm run deploy -- [--plan] [--env NAME] [--settings FILE] [--workers-dev SUBDOMAIN] [--skip-smoke]

  --plan                 print every step and wrangler command, run none, write nothing
  --env NAME             the environment (default production); another one deploys sluice-api-NAME and so on
  --settings FILE        dotenv file (NAME=value) of settings from SETTINGS in src/core/config.ts: secrets are
                         uploaded as secrets, the rest become [vars]; BASE_URL, MCP_URL, APP_URL name custom domains
  --workers-dev SUB      serve on https://<worker>.SUB.workers.dev where no URL is given
  --skip-smoke           deploy without the smoke test
`;

/** The wrangler the project pins; another one may read the configs or print its answers differently. */
export const WRANGLER_VERSION = /^4\.86\./;

/** Settings that only work together: given one, the others are required. */
export function requiredTogether(settings: Record<string, string>): string[][] {
  const groups = [
    ['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET'],
    ['DATAFORSEO_LOGIN', 'DATAFORSEO_PASSWORD'],
    ['RESEND_API_KEY', 'EMAIL_FROM'],
  ];
  // The RapidAPI family: a key is sent with its host.
  for (const name of Object.keys(settings)) {
    const host = name.replace(/_API_KEY$/, '_API_HOST');
    if (host !== name && host in settings) groups.push([name, host]);
  }
  return groups.filter((group) => group.every((name) => name in settings));
}

async function loadSettings(root: string): Promise<Record<string, string>> {
  const { SETTINGS } = (await import(pathToFileURL(join(root, 'src', 'core', 'config.ts')).href)) as { SETTINGS: Record<string, string> };
  return SETTINGS;
}

function buildId(root: string): string {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() !== '';
    return dirty ? `${commit}-modified` : commit;
  } catch {
    return `local-${new Date().toISOString().slice(0, 10)}`;
  }
}

/**
 * Each worker's code facts. Secrets go where they are read: the api worker gets every secret given (it runs the
 * providers, whose settings are named by prefix), the mcp worker and the dashboard those their code reads as env.NAME.
 */
export function workerSources(configs: WorkerConfig[]): Partial<Record<WorkerId, SourceFacts>> {
  const sources: Partial<Record<WorkerId, SourceFacts>> = {};
  for (const config of configs) {
    const entry = entryOf(config);
    if (entry) sources[config.id] = scanSourcesOnce(entry);
  }
  return sources;
}

export async function checkInputs(root: string, configs: WorkerConfig[], base: string) {
  const history: Partial<Record<WorkerId, { label: string; raw: RawConfig }[]>> = {};
  for (const { id, config } of WORKER_CONFIG_PATHS) {
    const committed = await committedConfig(config, root);
    history[id] = committed ? [{ label: `${config} as last committed`, raw: committed }] : [];
  }
  for (const { environment, id, raw } of lastDeployed(base)) history[id]!.push({ label: `the last deploy to ${environment}`, raw });
  return { sources: workerSources(configs), history };
}

export function formatProblems(problems: Problem[]): string {
  return problems.map((problem) => `  [${problem.rule}]${problem.worker ? ` ${problem.worker}:` : ''} ${problem.message}`).join('\n');
}

class Stop extends Error {}

export async function main(argv: string[], io: DeployIo = { env: process.env, stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  const root = io.root ?? PROJECT_ROOT;
  const out = (line = '') => io.stdout.write(`${line}\n`);
  const fail = (line: string): never => {
    io.stderr.write(`${line}\n`);
    throw new Stop();
  };

  let options;
  try {
    options = parseArgs({
      args: argv,
      options: { plan: { type: 'boolean' }, env: { type: 'string' }, settings: { type: 'string' }, 'workers-dev': { type: 'string' }, 'skip-smoke': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    }).values;
  } catch (error) {
    io.stderr.write(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (options.help) {
    io.stdout.write(USAGE);
    return 0;
  }
  const environment = options.env ?? 'production';
  if (!/^[a-z][a-z0-9-]{0,30}$/.test(environment)) {
    io.stderr.write(`--env must be lowercase letters, digits and dashes, not "${environment}".\n${USAGE}`);
    return 2;
  }
  const subdomain = options['workers-dev'];
  if (subdomain !== undefined && !/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(subdomain)) {
    io.stderr.write(`--workers-dev takes the account's workers.dev subdomain (the part before .workers.dev), not "${subdomain}".\n${USAGE}`);
    return 2;
  }
  const plan = options.plan === true;
  const step = (title: string) => out(`\n== ${title}`);

  try {
    // 1. What is given, and the production check, before the account is touched.
    step(`1. check (${environment}${plan ? ', plan only: nothing is run or written' : ''})`);
    const settings = await loadSettings(root);
    let given: Record<string, string> = {};
    if (options.settings) {
      // npm run starts scripts in the project root; the path is the one typed where npm was run (INIT_CWD).
      const settingsPath = resolve(io.env.INIT_CWD ?? process.cwd(), options.settings);
      if (!existsSync(settingsPath)) fail(`The settings file ${settingsPath} does not exist.`);
      given = Object.fromEntries(Object.entries(parseEnv(readFileSync(settingsPath, 'utf8'))).filter(([, value]) => value !== undefined && value !== '')) as Record<string, string>;
      const unknown = Object.keys(given).filter((name) => !(name in settings));
      if (unknown.length) fail(`${options.settings} names ${unknown.join(', ')}, which ${unknown.length === 1 ? 'is not a setting' : 'are not settings'} of Sluice (SETTINGS in src/core/config.ts).`);
      out(`Settings from ${options.settings}: ${Object.keys(given).map((name) => (isSecretSetting(settings[name]) ? `${name} (secret)` : name)).join(', ') || 'none'}.`);
    }
    if (given.KEY_ENCRYPTION_KEY) {
      const malformed = given.KEY_ENCRYPTION_KEY.split(',').map((part) => part.trim()).findIndex((part) => !/^[A-Za-z0-9+/]{43}=$/.test(part));
      if (malformed !== -1) fail(`KEY_ENCRYPTION_KEY must be the base64 of 32 bytes (openssl rand -base64 32), or during a rotation <new>,<old> of those; part ${malformed + 1} is not.`);
    }
    const missingPartners = requiredTogether(settings).flatMap((group) => (group.some((name) => given[name]) ? group.filter((name) => !given[name]).map((name) => ({ name, with: group.find((other) => given[other])! })) : []));
    if (missingPartners.length) fail(`Missing required setting${missingPartners.length > 1 ? 's' : ''}: ${missingPartners.map(({ name, with: other }) => `${name} (${other} is set, and works only with it)`).join(', ')}. Add ${missingPartners.length > 1 ? 'them' : 'it'} to the settings file; nothing was deployed.`);

    const committed = await readWorkerConfigs(root);
    const names = Object.fromEntries(committed.map(({ id, raw }) => [id, nameIn(environment, String(raw.name))])) as Record<WorkerId, string>;
    const resolved = resolveUrls(given, names, subdomain);
    if (!resolved.urls) fail(`No public URL for ${resolved.missing.join(', ')}: set ${resolved.missing.length > 1 ? 'them' : 'it'} in the settings file (custom domains), or pass --workers-dev <your workers.dev subdomain>.`);
    const urls = resolved.urls as PublicUrls;
    for (const [name, url] of Object.entries(urls)) {
      let parsed: URL | undefined;
      try {
        parsed = new URL(url);
      } catch {
        parsed = undefined;
      }
      if (parsed?.protocol !== 'https:') fail(`${name} must be an https URL, not "${url}".`);
    }
    if (!urls.MCP_URL.endsWith('/mcp')) fail(`MCP_URL must end in /mcp (the MCP endpoint's path), not "${urls.MCP_URL}".`);
    const build = buildId(root);
    const plainSettings = Object.fromEntries(Object.entries(given).filter(([name]) => !isSecretSetting(settings[name]) && !(name in urls)));
    out(`Build ${build}; BASE_URL ${urls.BASE_URL}, MCP_URL ${urls.MCP_URL}, APP_URL ${urls.APP_URL}${urls.TOOLS_BASE_URL !== urls.BASE_URL ? `, TOOLS_BASE_URL ${urls.TOOLS_BASE_URL}` : ''}.`);

    const target = { environment, urls, buildId: build, vars: plainSettings, d1Ids: {} as Record<string, string> };
    const base = deployBase(io.env, root);
    const { sources, history } = await checkInputs(root, committed, base);
    const problems = productionProblems({ configs: renderConfigs(committed, target, base), sources, settings, history, given });
    if (problems.length) fail(`The production check failed; nothing was deployed:\n${formatProblems(problems)}`);
    out('Production check passed.');

    const wrangler = wranglerCli({ env: io.env, echo: (line) => out(plan ? `would run: ${line.slice(2)}` : line), stream: { stdout: io.stdout, stderr: io.stderr }, cwd: root });
    const run: Wrangler['must'] = plan ? async (args) => (out(`would run: ${commandLine(args)}`), { code: 0, stdout: '', stderr: '' }) : (args, runOptions) => wrangler.must(args, runOptions);

    if (!plan) {
      const version = (await wrangler.must(['--version'])).stdout.trim().split('\n').pop() ?? '';
      if (!WRANGLER_VERSION.test(version.replace(/^[^\d]*/, ''))) fail(`wrangler ${version} is on PATH; Sluice deploys with the pinned 4.86.x (npm run deploy puts node_modules/.bin first).`);
      const whoami = await wrangler.must(['whoami']);
      if (/not authenticated/i.test(whoami.stdout + whoami.stderr)) fail('wrangler is not logged in: run `npx wrangler login`, or set CLOUDFLARE_API_TOKEN (and CLOUDFLARE_ACCOUNT_ID) in the environment. Nothing was changed.');
    } else {
      await run(['--version']);
      await run(['whoami']);
    }

    // 2. Provision: find what exists, create what is missing.
    step('2. provision');
    const resources = resourcesOf(committed).map((resource) => ({ ...resource, name: resource.kind === 'browser' ? resource.name : nameIn(environment, resource.name) }));
    const d1 = resources.filter((resource) => resource.kind === 'd1');
    if (d1.length) {
      const listD1 = async () => JSON.parse((await run(['d1', 'list', '--json'])).stdout || '[]') as { name: string; uuid: string }[];
      let databases = await listD1();
      const missing = d1.filter(({ name }) => !databases.some((database) => database.name === name));
      for (const { name } of missing) await run(['d1', 'create', name]);
      if (missing.length && !plan) databases = await listD1();
      for (const { name } of d1) {
        const found = databases.find((database) => database.name === name);
        if (found) target.d1Ids[name] = found.uuid;
        else if (!plan) fail(`D1 database ${name} was created but wrangler d1 list does not show it.`);
        out(plan ? `D1 ${name}: found by name, or created if absent` : `D1 ${name}: ${missing.some((database) => database.name === name) ? 'created' : 'found'} (${found!.uuid})`);
      }
    }
    const r2 = resources.filter((resource) => resource.kind === 'r2');
    if (r2.length) {
      const buckets = bucketNames((await run(['r2', 'bucket', 'list'])).stdout);
      for (const { name } of r2) {
        if (!buckets.has(name)) await run(['r2', 'bucket', 'create', name]);
        out(`R2 bucket ${name}: ${plan ? 'found, or created if absent' : buckets.has(name) ? 'found' : 'created'}`);
      }
    }
    const queues = resources.filter((resource) => resource.kind === 'queue');
    if (queues.length) {
      const existing = queueNames((await run(['queues', 'list'])).stdout);
      for (const { name } of queues) {
        if (!existing.has(name)) await run(['queues', 'create', name]);
        out(`Queue ${name}: ${plan ? 'found, or created if absent' : existing.has(name) ? 'found' : 'created'}`);
      }
    }
    for (const { kind, name, worker } of resources) {
      if (kind === 'workflow') out(`Workflow ${name}: created or updated by the ${worker} worker's deploy`);
      if (kind === 'browser') out(`Browser Rendering (binding ${name} of ${worker}): needs no resource (Browser Rendering must be enabled for the account)`);
    }

    // 3. Render the deploy configs.
    step('3. render');
    const rendered = renderConfigs(committed, target, base);
    for (const config of rendered) {
      if (!plan) {
        writeJson(config.path, config.raw);
      }
      out(`${plan ? 'would write' : 'wrote'} ${relative(root, config.path)}`);
    }
    const configOf = (id: WorkerId) => relative(root, rendered.find((config) => config.id === id)!.path);

    // 4. Secrets: what each worker reads, from the settings file and the generated ones.
    step('4. secrets');
    const storePath = join(sluiceHome(io.env), 'deploy', environment, 'secrets.json');
    const stored = readJson<Partial<Record<GeneratedSecretName, string>>>(storePath) ?? {};
    const remote = new Map<WorkerId, Set<string>>();
    for (const config of rendered) {
      if (plan) {
        await run(['secret', 'list', '--config', configOf(config.id)]);
        continue;
      }
      const ran = await wrangler.run(['secret', 'list', '--config', configOf(config.id)]);
      if (ran.code !== 0 && /not found|does not exist|10007/i.test(ran.stderr + ran.stdout)) remote.set(config.id, new Set());
      else if (ran.code !== 0) throw new WranglerError(['secret', 'list'], ran);
      else remote.set(config.id, new Set((JSON.parse(ran.stdout) as { name: string }[]).map((secret) => secret.name)));
    }
    const secretNames = Object.keys(settings).filter((name) => isSecretSetting(settings[name]));
    const values: Record<string, string> = Object.fromEntries(secretNames.filter((name) => given[name]).map((name) => [name, given[name]!]));
    const readers = (name: string) => rendered.filter(({ id }) => id === 'api' || sources[id]?.envReads.has(name)).map(({ id }) => id);
    let generated = false;
    for (const name of Object.keys(GENERATED_SECRETS) as GeneratedSecretName[]) {
      if (values[name]) continue;
      if (stored[name]) {
        values[name] = stored[name]!;
        out(`${name}: kept from ${storePath}`);
        continue;
      }
      const holders = readers(name).filter((id) => remote.get(id)?.has(name));
      if (holders.length > 0) {
        // Set on the account but not known here: a new value would not match it (every stored password fails).
        const lacking = readers(name).filter((id) => !remote.get(id)?.has(name));
        if (lacking.length === 0) {
          out(`${name}: already set on ${holders.map((id) => names[id]).join(', ')}; left as it is`);
          continue;
        }
        fail(`Missing required secret ${name}: it is set on ${holders.map((id) => names[id]).join(', ')} but not on ${lacking.map((id) => names[id]).join(', ')}, and its value is neither in the settings file nor in ${storePath}. Put the value in the settings file; nothing was deployed.`);
      }
      if (plan) {
        values[name] = '(generated)';
        out(`${name}: taken from the settings file or ${storePath}, left as it is when set on the account, else generated and kept there (0600)`);
        continue;
      }
      values[name] = stored[name] = GENERATED_SECRETS[name]();
      generated = true;
      out(`${name}: generated and kept in ${storePath} (0600)`);
    }
    if (generated && !plan) writeJson(storePath, stored, 0o600);
    const secretsOf = (id: WorkerId) => Object.fromEntries(Object.entries(values).filter(([name]) => readers(name).includes(id)));
    for (const config of rendered) out(`${names[config.id]}: ${Object.keys(secretsOf(config.id)).join(', ') || 'no secrets'} (values not shown)`);

    // 5. Migrations, before the code that expects them.
    step('5. migrate');
    const migrated = new Set<string>();
    for (const config of rendered) {
      for (const database of ((config.raw as Record<string, unknown>).d1_databases as { database_name: string; migrations_dir?: string }[] | undefined) ?? []) {
        if (!database.migrations_dir || migrated.has(database.database_name)) continue;
        migrated.add(database.database_name);
        await run(['d1', 'migrations', 'apply', database.database_name, '--remote', '--config', configOf(config.id)], { stream: true });
      }
    }

    // 6. Deploy in order, each with its secrets in a file only this process can read, removed at once.
    step('6. deploy');
    for (const config of rendered) {
      const secrets = secretsOf(config.id);
      const folder = plan ? undefined : mkdtempSync(join(tmpdir(), 'sluice-deploy-'));
      const file = folder ? join(folder, 'secrets.json') : '<secrets file>';
      try {
        if (folder) writeFileSync(file, JSON.stringify(secrets), { mode: 0o600 });
        await run(['deploy', '--config', configOf(config.id), ...(Object.keys(secrets).length ? ['--secrets-file', file] : []), '--message', `Sluice ${build}`], { stream: true });
      } finally {
        if (folder) rmSync(folder, { recursive: true, force: true });
      }
      const crons = ((config.raw as Record<string, unknown>).triggers as { crons?: string[] } | undefined)?.crons ?? [];
      out(`${names[config.id]} ${plan ? 'would be deployed' : 'deployed'}${crons.length ? ` with cron ${crons.join(', ')}` : ''}`);
    }

    // 7. Smoke test.
    step('7. smoke test');
    if (options['skip-smoke']) out('Skipped (--skip-smoke).');
    else if (plan) out(`would check ${urls.BASE_URL}/health, ${new URL(urls.MCP_URL).origin}/health, ${urls.APP_URL}/health (build ${build}), ${urls.BASE_URL}/v1/platforms, ${new URL(urls.MCP_URL).origin}/.well-known/oauth-authorization-server, ${urls.APP_URL}/signup`);
    else {
      const failures = await smokeTest(urls, build, { fetch: io.fetch ?? fetch, sleep: io.sleep, log: out });
      if (failures.length) fail(`The smoke test failed:\n${failures.map((failure) => `  ${failure.url}: ${failure.reason}`).join('\n')}`);
    }
    out(plan ? '\nPlan only: nothing was run or written.' : `\nSluice ${build} is deployed to ${environment}: ${urls.BASE_URL} (API), ${urls.MCP_URL} (MCP), ${urls.APP_URL} (dashboard).`);
    if (!plan && generated) out(`The operator token (OPS_TOKEN) is in ${storePath}: SLUICE_OPS_URL=${urls.BASE_URL} OPS_TOKEN=... npm run ops -- <command>.`);
    return 0;
  } catch (error) {
    if (error instanceof Stop) return 1;
    if (error instanceof WranglerError) {
      io.stderr.write(`${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

// Run as a program (npm run deploy); imported, as the tests import it, it only defines main.
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) process.exitCode = await main(process.argv.slice(2));

