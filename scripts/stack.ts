/**
 * The local stack: every worker bundled as it deploys and served by workerd through Miniflare's API
 * (not `wrangler dev`, whose proxy costs ~4x in throughput), each on its own port of 127.0.0.1, with one
 * shared persistence folder so D1 and Durable Objects survive restarts.
 *
 *   const stack = await startStack();
 *   stack.urls.api            // http://127.0.0.1:8787
 *   await stack.stop();
 *
 * Adding a worker is one entry in WORKERS: its wrangler config and the port it gets. Workers bind to each
 * other with ordinary `[[services]]` entries naming the other worker's `name`; they all run in one
 * Miniflare instance, so those bindings resolve locally.
 *
 * One exception: the workspace databases (the WorkspaceDatabase objects, users' own SQL) run in a workerd
 * process of their own, reached through Miniflare's dev registry. workerd runs every worker of a process
 * on one thread and enforces no CPU limit, and a SQLite statement cannot be interrupted from JavaScript,
 * so a statement that computes for minutes would otherwise freeze every worker. The process is restarted
 * (killed: nothing uncommitted is kept) when it stops answering for DATABASE_LIMITS.statementMs, which
 * is what Cloudflare's CPU limit does to the object when deployed.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { basename, dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { Cron } from 'croner';
import { Log, LogLevel, Miniflare, type WorkerOptions } from 'miniflare';
import type { Unstable_Config, unstable_getMiniflareWorkerOptions } from 'wrangler';
import { DATABASE_LIMITS } from '../src/core/database-limits';
import { startBrowserService, type BrowserService } from './browser-service';
import { keepBundle, oneAtATime, reuseBundle } from './lib/bundle-cache';
import { GENERATED_SECRETS, type GeneratedSecretName, PROJECT_ROOT, readDevVars, readSecrets, sluiceHome, stateDir, writeSecrets } from './lib/home';
import { loadSettingNames } from './lib/settings';

const run = promisify(execFile);

/** The ports of the stack. A port is known even before its worker exists, because public URLs name it. */
export const PORTS = {
  api: { env: 'SLUICE_API_PORT', default: 8787 },
  mcp: { env: 'SLUICE_MCP_PORT', default: 8788 },
  app: { env: 'SLUICE_APP_PORT', default: 8789 },
} as const;

export type WorkerId = keyof typeof PORTS;

export interface WorkerSpec {
  /** Short name, also the key of its port in PORTS. */
  id: WorkerId;
  /** Its wrangler config, relative to the project root. */
  config: string;
}

/** The workers `npm start` runs. The first is also what Miniflare's own entry socket forwards to. */
export const WORKERS: WorkerSpec[] = [
  { id: 'api', config: 'wrangler.toml' },
  { id: 'mcp', config: 'src/mcp/wrangler.toml' },
  { id: 'app', config: 'src/app/wrangler.toml' },
];

export interface StackOptions {
  /** Where settings, ports and folders are read from; default process.env. */
  env?: NodeJS.ProcessEnv;
  workers?: WorkerSpec[];
  /**
   * Workers of the caller's own, served by the same workerd as the stack's (the bench's skeleton, so the
   * product's rows and the design's floor are measured in one process). Each is reached at `extraUrls[name]`.
   */
  alongside?: Array<WorkerOptions & { name: string }>;
  /** Progress lines ("Bundling api...", "Applied migration ..."); default: silent. */
  log?: (line: string) => void;
}

export interface Stack {
  /** Listening URL of each worker, by id. */
  urls: Partial<Record<WorkerId, string>>;
  /** Listening URL of each worker given in `alongside`, by name. */
  extraUrls: Record<string, string>;
  /** Every setting (a name in SETTINGS of src/core/config.ts) the workers were given, secrets included. */
  settings: Record<string, string>;
  ports: Record<WorkerId, number>;
  /** The `[triggers] crons` of each worker, run on schedule (UTC) as Cloudflare would: Miniflare runs none. */
  crons: { worker: string; cron: string; next: Date | null }[];
  stateDir: string;
  home: string;
  miniflare: Miniflare;
  /** The local Browser Rendering service (scripts/browser-service.ts), when a worker has [browser]. */
  browser?: BrowserService;
  /** How often the workspace databases' process was restarted because a statement ran past its bound. */
  databaseRestarts(): number;
  /** Disposes Miniflare (and so workerd). Safe to call twice. */
  stop(): Promise<void>;
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => {});
  const workers = options.workers ?? WORKERS;
  const home = sluiceHome(env);
  const state = stateDir(env);
  const ports = resolvePorts(env);
  await Promise.all(workers.map((worker) => assertPortFree(ports[worker.id], PORTS[worker.id].env)));

  const configs = await Promise.all(workers.map((worker) => readConfig(worker)));
  const devVars = readDevVars(env);
  const settings = resolveSettings(await loadSettingNames(), env, ports, configs);

  log(`Bundling ${workers.map((worker) => worker.id).join(', ')}...`);
  const built = await Promise.all(workers.map((worker, index) => buildWorker(worker, configs[index]!, join(home, 'build', worker.id))));

  const persistence = { cf: false, defaultPersistRoot: join(state, 'v3'), log: new Log(LogLevel.WARN) } as const;

  // Migrations go in before anything listens, through a throwaway instance bound to the same databases.
  const databases = collectDatabases(built);
  if (databases.length > 0) await migrate(databases, persistence, log);

  // A worker with Browser Rendering ([browser]) gets the local service of the same shape over Debian's chromium.
  const browser = built.some((worker) => worker.options.browserRendering) ? await startBrowserService({ executablePath: env.CHROMIUM_PATH || undefined, priority: env.BROWSER_PRIORITY === 'normal' ? 'normal' : 'idle' }) : undefined;
  const workerOptions: WorkerOptions[] = built.map((worker) => ({
    ...worker.options,
    ...browserBinding(worker.options, browser),
    name: worker.name,
    modulesRoot: worker.outdir,
    ...bundleModules(worker),
    // [vars] of the config, then every entry of the dotenv file, then the resolved settings.
    bindings: { ...(worker.options.bindings ?? {}), ...devVars, ...settings },
    unsafeDirectSockets: [{ host: '127.0.0.1', port: ports[worker.spec.id] }],
  }));

  const registry = join(home, 'dev-registry');
  const databaseHost = built.find((worker) => Object.values(worker.options.durableObjects ?? {}).some((designator) => classOf(designator) === DATABASE_CLASS && !scriptOf(designator)));
  const databaseProcess = databaseHost ? await startDatabaseProcess(databaseWorkerOptions(workerOptions[built.indexOf(databaseHost)]!), { ...persistence, unsafeDevRegistryPath: registry }, log) : undefined;
  if (databaseProcess) for (const options of workerOptions) pointDatabasesAt(options, DATABASE_WORKER);

  // Miniflare's own entry socket is required; it gets a throwaway port, every worker has its direct one.
  // SLUICE_INSPECTOR_PORT opens workerd's inspector (Chrome DevTools, CPU profiles) on that loopback port.
  const inspector = env.SLUICE_INSPECTOR_PORT ? { inspectorPort: Number(env.SLUICE_INSPECTOR_PORT) } : {};
  const registryOption = databaseProcess ? { unsafeDevRegistryPath: registry } : {};
  const miniflare = new Miniflare({ ...persistence, ...inspector, ...registryOption, host: '127.0.0.1', port: 0, workers: [...workerOptions.flatMap(withAssetsBeside), ...(options.alongside ?? [])] });
  try {
    await miniflare.ready;
  } catch (error) {
    await Promise.all([miniflare.dispose().catch(() => {}), databaseProcess?.stop(), browser?.stop()]);
    throw error;
  }
  databaseProcess?.watch();

  const urls: Stack['urls'] = {};
  for (const worker of built) urls[worker.spec.id] = trimSlash((await miniflare.unsafeGetDirectURL(worker.name)).href);

  const extraUrls: Record<string, string> = {};
  for (const worker of options.alongside ?? []) extraUrls[worker.name] = trimSlash((await miniflare.unsafeGetDirectURL(worker.name)).href);

  const schedules = built.flatMap((worker) =>
    (worker.config.triggers?.crons ?? []).map((cron) => ({
      worker: worker.name,
      cron,
      job: new Cron(cron, { timezone: 'UTC', protect: true }, async () => {
        const scheduledTime = new Date();
        const { outcome } = await (await miniflare.getWorker(worker.name)).scheduled({ cron, scheduledTime });
        log(`Cron ${cron} of ${worker.name} at ${scheduledTime.toISOString()}: ${outcome}`);
      }),
    })),
  );

  let stopping: Promise<void> | undefined;
  return {
    urls,
    extraUrls,
    settings,
    ports,
    crons: schedules.map(({ worker, cron, job }) => ({ worker, cron, next: job.nextRun() })),
    stateDir: state,
    home,
    miniflare,
    ...(browser ? { browser } : {}),
    databaseRestarts: () => databaseProcess?.restarts ?? 0,
    stop: () => {
      for (const { job } of schedules) job.stop();
      return (stopping ??= Promise.all([miniflare.dispose(), databaseProcess?.stop(), browser?.stop()]).then(() => {}));
    },
  };
}

/**
 * Miniflare's own local Browser Rendering always installs Chrome for Testing (a download) and cannot be
 * pointed at another executable, so the binding becomes a service binding to the browser service.
 */
function browserBinding(options: WorkerOptions, browser: BrowserService | undefined): Partial<WorkerOptions> {
  const binding = options.browserRendering?.binding;
  if (!binding || !browser) return {};
  return { browserRendering: undefined, serviceBindings: { ...options.serviceBindings, [binding]: { external: { address: browser.address, http: {} } } } };
}

/**
 * A worker that reaches its static assets only through their binding (`run_worker_first`: the api and its
 * reference UI) gets them from a worker of their own beside it, bound under the same name. Given the assets
 * itself, Miniflare would put its asset router and a proxy in front of the worker's socket: two more
 * workers on workerd's one thread for every request (/health took 0.43 ms of workerd CPU instead of
 * 0.13), where Cloudflare runs its router outside the worker.
 */
function withAssetsBeside(options: WorkerOptions): WorkerOptions[] {
  const { assets, ...worker } = options;
  if (!assets?.binding || !assets.routerConfig?.invoke_user_worker_ahead_of_assets) return [options];
  const name = `${options.name}-assets`;
  return [
    { ...worker, serviceBindings: { ...worker.serviceBindings, [assets.binding]: name } },
    {
      name,
      modules: true,
      // Never run: with no user worker the assets' router answers every request itself.
      script: 'export default {};',
      compatibilityDate: options.compatibilityDate,
      assets: { directory: assets.directory, assetConfig: assets.assetConfig, routerConfig: { has_user_worker: false } },
    },
  ];
}

// ---------------------------------------------------------------------------------------------------------
// The workspace databases' own process

const DATABASE_CLASS = 'WorkspaceDatabase';
/** The name the databases' worker registers under; its objects' storage folder and ids derive from it. */
const DATABASE_WORKER = 'sluice-databases';
/** How often the process is asked whether it still answers. */
const DATABASE_PING_MS = 250;
/**
 * How long one ping may take before it counts as unanswered. Generous: a process that is merely slow (a
 * loaded machine) must not look stuck, or it would be restarted before a statement reached its bound.
 */
const DATABASE_PING_TIMEOUT_MS = 2_000;

/**
 * The databases' process's output, less the request lines of the watch's own pings: four a second, they
 * buried every line a person's own calls printed. Nothing else asks that process for /health (requests
 * reach it only as object calls), so every other line, its errors included, still comes through.
 */
function withoutPings(stdout: Readable, stderr: Readable): void {
  createInterface(stdout).on('line', (line) => {
    if (!isPingLine(line)) console.log(line);
  });
  createInterface(stderr).on('line', (line) => console.error(line));
}

/** Whether a line is the request log line of a successful /health ping. */
function isPingLine(line: string): boolean {
  if (!line.startsWith('{')) return false;
  try {
    const logged = JSON.parse(line) as { event?: unknown; route?: unknown; status?: unknown };
    return logged.event === 'request' && logged.route === '/health' && logged.status === 200;
  } catch {
    return false;
  }
}

type ObjectDesignator = NonNullable<WorkerOptions['durableObjects']>[string];

function classOf(designator: ObjectDesignator): string {
  return typeof designator === 'string' ? designator : designator.className;
}

function scriptOf(designator: ObjectDesignator): string | undefined {
  return typeof designator === 'string' ? undefined : designator.scriptName;
}

/** The worker that defines the class, as the databases' process runs it: the same bundle, only that class's namespace. */
function databaseWorkerOptions(host: WorkerOptions): WorkerOptions {
  const namespaces = Object.entries(host.durableObjects ?? {}).filter(([, designator]) => classOf(designator) === DATABASE_CLASS);
  return {
    name: DATABASE_WORKER,
    modulesRoot: host.modulesRoot,
    modules: host.modules,
    scriptPath: host.scriptPath,
    modulesRules: host.modulesRules,
    compatibilityDate: host.compatibilityDate,
    compatibilityFlags: host.compatibilityFlags,
    bindings: host.bindings,
    durableObjects: Object.fromEntries(namespaces.map(([binding]) => [binding, { className: DATABASE_CLASS, useSQLite: true }])),
  } as WorkerOptions;
}

/** Every binding to the class (the api's own, and the app's through script_name) goes to the databases' process. */
function pointDatabasesAt(options: WorkerOptions, scriptName: string): void {
  for (const [binding, designator] of Object.entries(options.durableObjects ?? {})) {
    if (classOf(designator) === DATABASE_CLASS) options.durableObjects![binding] = { className: DATABASE_CLASS, scriptName, useSQLite: true };
  }
}

interface DatabaseProcess {
  readonly restarts: number;
  /**
   * Starts the watch, once the rest of the stack is up: until then nothing can send a statement, and on a
   * small machine the other workers' start starves the pings past the bound (on a loaded 2-core machine the
   * process was restarted during two starts of three, its restart competing with the stack's own start).
   */
  watch(): void;
  stop(): Promise<void>;
}

/**
 * Runs the databases in a workerd of their own and watches it: asked every DATABASE_PING_MS, a process
 * that has not answered for DATABASE_LIMITS.statementMs is busy in one statement past its bound, and is
 * killed and started again. The request that ran it sees its call fail after the bound and answers the
 * bound's 400 (core/databases.ts); the transaction was never committed, so nothing of it is kept.
 */
async function startDatabaseProcess(worker: WorkerOptions, shared: { cf: false; defaultPersistRoot: string; log: Log; unsafeDevRegistryPath: string }, log: (line: string) => void): Promise<DatabaseProcess> {
  const start = async () => {
    const instance = new Miniflare({ ...shared, host: '127.0.0.1', port: 0, workers: [worker], handleRuntimeStdio: withoutPings });
    try {
      return { instance, url: new URL('/health', await instance.ready).href };
    } catch (error) {
      await instance.dispose().catch(() => {});
      throw error;
    }
  };
  let current = await start();
  let restarts = 0;
  let answeredAt = Date.now();
  let stopped = false;
  let busy = false;
  let watching: NodeJS.Timeout | undefined;
  const ping = async () => {
    if (busy || stopped) return;
    busy = true;
    try {
      // The answer is read to its end, not cancelled: a cancelled body closes the connection while workerd may
      // still be writing it, and workerd then prints a "Broken pipe" error with a stack into the terminal. A
      // timeout while the body is read counts as no answer too: thrown from this timer's callback, it ended
      // the process ("TimeoutError", a bench on a loaded machine, 2026-11-29).
      const answered = await fetch(current.url, { signal: AbortSignal.timeout(DATABASE_PING_TIMEOUT_MS) })
        .then((response) => response.arrayBuffer())
        .then(() => true, () => false);
      if (answered) answeredAt = Date.now();
      else if (Date.now() - answeredAt > DATABASE_LIMITS.statementMs && !stopped) {
        log(`A workspace database statement ran past ${DATABASE_LIMITS.statementMs / 1000} s: restarting the databases' process.`);
        await current.instance.dispose().catch(() => {});
        if (!stopped) current = await start();
        restarts++;
        answeredAt = Date.now();
      }
    } finally {
      busy = false;
    }
  };
  return {
    get restarts() {
      return restarts;
    },
    watch: () => {
      if (watching || stopped) return;
      answeredAt = Date.now();
      watching = setInterval(ping, DATABASE_PING_MS);
    },
    stop: async () => {
      stopped = true;
      clearInterval(watching);
      await current.instance.dispose();
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Settings

export function resolvePorts(env: NodeJS.ProcessEnv): Record<WorkerId, number> {
  const ports = {} as Record<WorkerId, number>;
  for (const [id, port] of Object.entries(PORTS) as [WorkerId, (typeof PORTS)[WorkerId]][]) {
    const given = env[port.env];
    const value = given === undefined || given === '' ? port.default : Number(given);
    if (!Number.isInteger(value) || value < 1 || value > 65535) throw new Error(`${port.env} must be a port number (1-65535), not "${given}".`);
    ports[id] = value;
  }
  return ports;
}

/**
 * Every name in SETTINGS, from (first wins): the environment, `.dev.vars` ($SLUICE_DEV_VARS), the worker configs' [vars], then
 * defaults. Public URLs default to the local ports — a [vars] URL is what a deploy serves, not this stack —
 * and the two secrets are generated once and kept in $SLUICE_HOME/secrets.json.
 */
export function resolveSettings(names: readonly string[], env: NodeJS.ProcessEnv, ports: Record<WorkerId, number>, configs: Unstable_Config[]): Record<string, string> {
  const devVars = readDevVars(env);
  // The first worker's [vars] win where two configs give the same name.
  const configVars: Record<string, unknown> = {};
  for (const config of [...configs].reverse()) Object.assign(configVars, config.vars);

  const local = (port: number) => `http://127.0.0.1:${port}`;
  const defaults: Record<string, () => string> = {
    BASE_URL: () => local(ports.api),
    TOOLS_BASE_URL: () => local(ports.api),
    MCP_URL: () => `${local(ports.mcp)}/mcp`,
    APP_URL: () => local(ports.app),
    BUILD_ID: gitBuildId,
    // A machine of one's own: the emails the dashboard would send are kept and shown at /dev/outbox.
    DEV_OUTBOX: () => '1',
  };
  const urlSettings = new Set(['BASE_URL', 'TOOLS_BASE_URL', 'MCP_URL', 'APP_URL']);

  const settings: Record<string, string> = {};
  for (const name of names) {
    const fromConfig = urlSettings.has(name) ? undefined : configVars[name];
    const value = nonEmpty(env[name]) ?? nonEmpty(devVars[name]) ?? (typeof fromConfig === 'string' ? nonEmpty(fromConfig) : undefined) ?? defaults[name]?.();
    if (value !== undefined) settings[name] = value;
  }

  const stored = readSecrets(env);
  let changed = false;
  for (const name of Object.keys(GENERATED_SECRETS) as GeneratedSecretName[]) {
    if (settings[name] !== undefined) continue;
    let secret = stored[name];
    if (!secret) {
      secret = stored[name] = GENERATED_SECRETS[name]();
      changed = true;
    }
    settings[name] = secret;
  }
  if (changed) writeSecrets(stored, env);
  return settings;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

function gitBuildId(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: PROJECT_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || 'dev';
  } catch {
    return 'dev';
  }
}

// ---------------------------------------------------------------------------------------------------------
// Building

type Wrangler = typeof import('wrangler');
let wranglerModule: Promise<Wrangler> | undefined;

/**
 * wrangler, imported on first use. Importing it installs SIGINT/SIGTERM listeners that exit the process
 * at once (for its own commands); the stack's owner decides how to shut down, so those come off again.
 */
export function loadWrangler(): Promise<Wrangler> {
  return (wranglerModule ??= (async () => {
    const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
    const before = new Map(signals.map((signal) => [signal, new Set(process.listeners(signal))]));
    const wrangler = await import('wrangler');
    for (const signal of signals) {
      for (const listener of process.listeners(signal)) if (!before.get(signal)!.has(listener)) process.removeListener(signal, listener);
    }
    return wrangler;
  })());
}

interface BuiltWorker {
  spec: WorkerSpec;
  name: string;
  configPath: string;
  config: Unstable_Config;
  options: ReturnType<typeof unstable_getMiniflareWorkerOptions>['workerOptions'];
  outdir: string;
  entry: string;
}

async function readConfig(worker: WorkerSpec): Promise<Unstable_Config> {
  const { unstable_readConfig } = await loadWrangler();
  return unstable_readConfig({ config: resolve(PROJECT_ROOT, worker.config) }, { hideWarnings: true });
}

/**
 * Bundles with the project's own wrangler exactly as `wrangler deploy` would, and reads the config's bindings.
 * A bundle made from the same files before is reused (scripts/lib/bundle-cache.ts) once the config's own build
 * command has run, since that makes files the bundle imports.
 */
async function buildWorker(spec: WorkerSpec, config: Unstable_Config, outdir: string): Promise<BuiltWorker> {
  const configPath = resolve(PROJECT_ROOT, spec.config);
  const { unstable_getMiniflareWorkerOptions } = await loadWrangler();
  const env = { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1' };
  await oneAtATime(spec.id, async () => {
    // The config's `[build] command`, run as wrangler runs it: a shell, in its `cwd` or the project's folder.
    const command = config.build.command;
    if (command !== undefined) {
      const [shell, flag] = process.platform === 'win32' ? (['cmd', '/c'] as const) : (['sh', '-c'] as const);
      await runOrSay(`The build command of ${spec.id} (${command})`, shell, [flag, command], config.build.cwd ?? PROJECT_ROOT, env);
    }
    if (reuseBundle(spec.id, configPath, outdir)) return;
    rmSync(outdir, { recursive: true, force: true });
    const metafile = `${outdir}.meta.json`;
    const wrangler = join(PROJECT_ROOT, 'node_modules', '.bin', process.platform === 'win32' ? 'wrangler.cmd' : 'wrangler');
    await runOrSay(`Bundling ${spec.id} (${spec.config})`, wrangler, ['deploy', '--dry-run', '--outdir', outdir, '--metafile', metafile, '--config', configPath], PROJECT_ROOT, env);
    keepBundle(spec.id, configPath, outdir, metafile);
  });
  const entry = bundleEntry(outdir, config.main);

  // wrangler would also fold .dev.vars (beside the config) into the vars; the stack gives its own
  // dotenv file and settings on top (see startStack), so only the config's own [vars] are kept here.
  const previousLog = process.env.WRANGLER_LOG;
  process.env.WRANGLER_LOG = 'error';
  try {
    const { workerOptions } = unstable_getMiniflareWorkerOptions(config);
    const vars = Object.fromEntries(Object.entries(workerOptions.bindings ?? {}).filter(([name]) => Object.hasOwn(config.vars, name)));
    return { spec, name: config.name ?? spec.id, configPath, config, options: { ...workerOptions, bindings: vars }, outdir, entry };
  } finally {
    restoreEnv('WRANGLER_LOG', previousLog);
  }
}

/** Runs a build step; when it fails, the error says which (`what`) and carries everything it printed. */
async function runOrSay(what: string, file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  try {
    await run(file, args, { cwd, env, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${what} failed:\n${`${stdout}\n${stderr}`.trim()}`);
  }
}

function restoreEnv(name: string, value: string | undefined) {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

/**
 * The bundle's modules, listed. With `modules: true` Miniflare parses the entry to find what it imports:
 * 6-7 s of a 29 s start on a quiet machine, for the three workers' 5-6 MB bundles and the databases' process
 * (the banner came after 22-23 s without it). wrangler's
 * bundle is that one module unless it imports something esbuild keeps apart (wasm, text), when Miniflare
 * still finds them itself.
 */
function bundleModules(worker: BuiltWorker): { modules: [{ type: 'ESModule'; path: string }] } | { modules: true; scriptPath: string } {
  const beside = readdirSync(worker.outdir).filter((file) => !file.endsWith('.map') && file !== 'README.md' && join(worker.outdir, file) !== worker.entry);
  return beside.length === 0 ? { modules: [{ type: 'ESModule', path: worker.entry }] } : { modules: true, scriptPath: worker.entry };
}

/** wrangler names the bundle after the entry module (src/api/index.ts -> index.js). */
function bundleEntry(outdir: string, main: string | undefined): string {
  const expected = main ? join(outdir, basename(main).replace(/\.[cm]?[jt]sx?$/, '.js')) : undefined;
  if (expected && existsSync(expected)) return expected;
  const scripts = readdirSync(outdir).filter((file) => /\.m?js$/.test(file));
  if (scripts.length !== 1) throw new Error(`Cannot tell the entry module of the bundle in ${outdir} (${scripts.join(', ') || 'no scripts'}).`);
  return join(outdir, scripts[0]!);
}

// ---------------------------------------------------------------------------------------------------------
// D1 migrations, the way `wrangler d1 migrations apply --local` does them

interface Database {
  id: string;
  binding: string;
  migrationsDir: string;
  migrationsTable: string;
  compatibilityDate: string;
}

function collectDatabases(workers: BuiltWorker[]): Database[] {
  const byId = new Map<string, Database>();
  for (const worker of workers) {
    for (const database of worker.config.d1_databases) {
      const designator = worker.options.d1Databases && !Array.isArray(worker.options.d1Databases) ? worker.options.d1Databases[database.binding] : undefined;
      const id = typeof designator === 'string' ? designator : designator?.id;
      if (!id || byId.has(id)) continue;
      byId.set(id, {
        id,
        binding: `D1_${byId.size}`,
        migrationsDir: resolve(dirname(worker.configPath), database.migrations_dir ?? 'migrations'),
        migrationsTable: database.migrations_table ?? 'd1_migrations',
        compatibilityDate: worker.config.compatibility_date ?? '2026-04-20',
      });
    }
  }
  return [...byId.values()];
}

/**
 * The throwaway worker that applies migrations, inside workerd: it is sent a database's migrations in one request
 * and applies, each in one batch with its record, those its table does not list yet. Not through Miniflare's D1
 * proxy from Node: the proxy's synchronous calls (`prepare`) lost their answer in a CI run (an assert in Miniflare's
 * `SynchronousFetcher`, 2026-12-02), and the stack did not start.
 */
const MIGRATIONS_WORKER = `export default {
  async fetch(request, env) {
    const { binding, table, migrations } = await request.json();
    const db = env[binding];
    await db.exec("CREATE TABLE IF NOT EXISTS " + table + "(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL);");
    const applied = new Set((await db.prepare("SELECT name FROM " + table).all()).results.map((row) => row.name));
    const done = [];
    for (const { name, statements } of migrations) {
      if (applied.has(name)) continue;
      try {
        await db.batch([...statements.map((sql) => db.prepare(sql)), db.prepare("INSERT INTO " + table + " (name) VALUES (?)").bind(name)]);
      } catch (error) {
        return Response.json({ applied: done, failed: name, error: String(error) }, { status: 500 });
      }
      done.push(name);
    }
    return Response.json({ applied: done });
  },
};`;

async function migrate(databases: Database[], persistence: { cf: false; defaultPersistRoot: string; log: Log }, log: (line: string) => void) {
  const { unstable_splitSqlQuery } = await loadWrangler();
  const miniflare = new Miniflare({
    ...persistence,
    host: '127.0.0.1',
    port: 0,
    name: 'sluice-migrations',
    modules: true,
    script: MIGRATIONS_WORKER,
    compatibilityDate: databases[0]!.compatibilityDate,
    d1Databases: Object.fromEntries(databases.map((database) => [database.binding, database.id])),
  });
  try {
    for (const database of databases) {
      if (!existsSync(database.migrationsDir)) continue;
      // In the order wrangler applies them: by file name. One batch each is one transaction: a migration applies
      // whole, and is recorded with it, or not at all.
      const migrations = readdirSync(database.migrationsDir)
        .filter((file) => file.endsWith('.sql'))
        .sort()
        .map((name) => ({ name, statements: unstable_splitSqlQuery(readFileSync(join(database.migrationsDir, name), 'utf8')) }));
      const response = await miniflare.dispatchFetch('http://migrations.local/', {
        method: 'POST',
        body: JSON.stringify({ binding: database.binding, table: database.migrationsTable, migrations }),
      });
      const result = (await response.json()) as { applied: string[]; failed?: string; error?: string };
      for (const name of result.applied) log(`Applied migration ${name}`);
      if (!response.ok) throw new Error(`Migration ${result.failed} failed: ${result.error}`);
    }
  } finally {
    await miniflare.dispose();
  }
}

// ---------------------------------------------------------------------------------------------------------

function assertPortFree(port: number, variable: string): Promise<void> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new Error(error.code === 'EADDRINUSE' ? `Port ${port} is already in use; stop what holds it or set ${variable}.` : `Cannot listen on 127.0.0.1:${port}: ${error.message}`)),
    );
    server.listen(port, '127.0.0.1', () => server.close(() => resolvePort()));
  });
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
