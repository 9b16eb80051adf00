/**
 * The committed wrangler configs of the three workers, read as written (wrangler's own reader, so TOML is
 * parsed as wrangler parses it), and what the deploy and the production check need of them: the bindings
 * each declares, the resources an account must hold, and the Durable Object classes its migrations leave.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import type { Unstable_RawConfig } from 'wrangler';
import { PROJECT_ROOT } from '../lib/home';

export type RawConfig = Unstable_RawConfig;
export type WorkerId = 'api' | 'mcp' | 'app';

export interface WorkerConfig {
  id: WorkerId;
  /** Path of the config file, absolute. */
  path: string;
  raw: RawConfig;
}

/** In deploy order: the api worker defines the Durable Objects and the McpGateway the others bind to. */
export const WORKER_CONFIG_PATHS: readonly { id: WorkerId; config: string }[] = [
  { id: 'api', config: 'wrangler.toml' },
  { id: 'mcp', config: 'src/mcp/wrangler.toml' },
  { id: 'app', config: 'src/app/wrangler.toml' },
];

let wrangler: Promise<typeof import('wrangler')> | undefined;
const loadWrangler = () => (wrangler ??= import('wrangler'));

export async function readWorkerConfigs(root = PROJECT_ROOT): Promise<WorkerConfig[]> {
  const { experimental_readRawConfig } = await loadWrangler();
  return WORKER_CONFIG_PATHS.map(({ id, config }) => {
    const path = resolve(root, config);
    return { id, path, raw: experimental_readRawConfig({ config: path }).rawConfig as RawConfig };
  });
}

/**
 * The config as the last commit has it, or undefined when it is new: one baseline of "migrations only grow"
 * (the other is what the last deploy from this machine rendered, dist/deploy/<env>/).
 */
export async function committedConfig(config: string, root = PROJECT_ROOT): Promise<RawConfig | undefined> {
  let text: string;
  try {
    text = execFileSync('git', ['show', `HEAD:${config}`], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 8 << 20 });
  } catch {
    return undefined;
  }
  const { experimental_readRawConfig } = await loadWrangler();
  const scratch = mkdtempSync(join(tmpdir(), 'sluice-committed-'));
  try {
    const file = join(scratch, basename(config));
    writeFileSync(file, text);
    return experimental_readRawConfig({ config: file }).rawConfig as RawConfig;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

export type ResourceKind = 'd1' | 'r2' | 'queue' | 'workflow' | 'browser';

/** Something an account must hold for a binding: found by name, created when missing (workflows by the deploy itself). */
export interface Resource {
  kind: ResourceKind;
  /** The name it has on the account (D1 database_name, bucket, queue, workflow name); the binding for browser. */
  name: string;
  binding: string;
  worker: WorkerId;
}

type Entry = Record<string, unknown>;
const list = (value: unknown): Entry[] => (Array.isArray(value) ? (value as Entry[]) : []);
const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/**
 * Every binding a config declares, by name, with its kind. The production check compares what the code reads
 * with these; kinds the deploy does not know how to provide are listed under their config key, so the check
 * can name them.
 */
export function bindingsOf(raw: RawConfig): Map<string, string> {
  const config = raw as Entry;
  const bindings = new Map<string, string>();
  const add = (name: unknown, kind: string) => {
    if (typeof name === 'string' && name !== '') bindings.set(name, kind);
  };
  for (const entry of list(config.d1_databases)) add(entry.binding, 'd1_databases');
  for (const entry of list((config.durable_objects as Entry | undefined)?.bindings)) add(entry.name, 'durable_objects');
  for (const entry of list(config.services)) add(entry.binding, 'services');
  for (const entry of list(config.r2_buckets)) add(entry.binding, 'r2_buckets');
  for (const entry of list(config.kv_namespaces)) add(entry.binding, 'kv_namespaces');
  for (const entry of list((config.queues as Entry | undefined)?.producers)) add(entry.binding, 'queues');
  for (const entry of list(config.workflows)) add(entry.binding, 'workflows');
  for (const key of ['browser', 'assets', 'ai', 'images', 'version_metadata'] as const) add((config[key] as Entry | undefined)?.binding, key);
  for (const key of ['analytics_engine_datasets', 'hyperdrive', 'vectorize', 'mtls_certificates', 'dispatch_namespaces', 'secrets_store_secrets'] as const) {
    for (const entry of list(config[key])) add(entry.binding, key);
  }
  for (const entry of list(config.send_email)) add(entry.name, 'send_email');
  for (const name of Object.keys((config.vars as Entry | undefined) ?? {})) add(name, 'vars');
  return bindings;
}

/** Binding kinds `npm run deploy` provides: it finds or creates their resources, or they need none. */
export const DEPLOYABLE_KINDS = new Set(['d1_databases', 'durable_objects', 'services', 'r2_buckets', 'queues', 'workflows', 'browser', 'assets', 'vars', 'version_metadata']);

/** The account resources the configs need, one per name and kind (two workers sharing the D1 database need one). */
export function resourcesOf(configs: WorkerConfig[]): Resource[] {
  const found = new Map<string, Resource>();
  const add = (resource: Resource) => {
    const key = `${resource.kind}:${resource.name}`;
    if (!found.has(key)) found.set(key, resource);
  };
  for (const { id, raw } of configs) {
    const config = raw as Entry;
    for (const entry of list(config.d1_databases)) {
      const name = text(entry.database_name);
      if (name) add({ kind: 'd1', name, binding: String(entry.binding), worker: id });
    }
    for (const entry of list(config.r2_buckets)) {
      const name = text(entry.bucket_name);
      if (name) add({ kind: 'r2', name, binding: String(entry.binding), worker: id });
    }
    const queues = (config.queues as Entry | undefined) ?? {};
    for (const entry of [...list(queues.producers), ...list(queues.consumers)]) {
      const name = text(entry.queue);
      if (name) add({ kind: 'queue', name, binding: String(entry.binding ?? name), worker: id });
      const deadLetter = text(entry.dead_letter_queue);
      if (deadLetter) add({ kind: 'queue', name: deadLetter, binding: deadLetter, worker: id });
    }
    for (const entry of list(config.workflows)) {
      const name = text(entry.name);
      if (name && !text(entry.script_name)) add({ kind: 'workflow', name, binding: String(entry.binding), worker: id });
    }
    const browser = text((config.browser as Entry | undefined)?.binding);
    if (browser) add({ kind: 'browser', name: browser, binding: browser, worker: id });
  }
  return [...found.values()];
}

export interface Migration {
  tag?: string;
  new_classes?: string[];
  new_sqlite_classes?: string[];
  renamed_classes?: { from: string; to: string }[];
  deleted_classes?: string[];
  transferred_classes?: { from: string; from_script: string; to: string }[];
}

export function migrationsOf(raw: RawConfig): Migration[] {
  return list((raw as Entry).migrations) as Migration[];
}

/** The classes the migrations leave defined, in order: created, renamed to, transferred in; minus deleted and renamed from. */
export function liveClasses(migrations: Migration[]): Set<string> {
  const live = new Set<string>();
  for (const step of migrations) {
    for (const name of [...(step.new_classes ?? []), ...(step.new_sqlite_classes ?? [])]) live.add(name);
    for (const { from, to } of step.renamed_classes ?? []) {
      live.delete(from);
      live.add(to);
    }
    for (const { to } of step.transferred_classes ?? []) live.add(to);
    for (const name of step.deleted_classes ?? []) live.delete(name);
  }
  return live;
}

/** Durable Object bindings of a config: to its own classes (no script_name) and to another worker's. */
export function objectBindingsOf(raw: RawConfig): { name: string; class_name: string; script_name?: string }[] {
  return list((raw as Entry).durable_objects && ((raw as Entry).durable_objects as Entry).bindings) as { name: string; class_name: string; script_name?: string }[];
}

export function entryOf(worker: WorkerConfig): string | undefined {
  const main = text((worker.raw as Entry).main);
  return main ? resolve(dirname(worker.path), main) : undefined;
}

/** The configs the last `npm run deploy` of each environment rendered (dist/deploy/<env>/<worker>/wrangler.json), by worker. */
export function lastDeployed(base: string): { environment: string; id: WorkerId; raw: RawConfig }[] {
  const found: { environment: string; id: WorkerId; raw: RawConfig }[] = [];
  if (!existsSync(base)) return found;
  for (const environment of readdirSync(base)) {
    for (const { id } of WORKER_CONFIG_PATHS) {
      const file = join(base, environment, id, 'wrangler.json');
      if (existsSync(file)) found.push({ environment, id, raw: JSON.parse(readFileSync(file, 'utf8')) as RawConfig });
    }
  }
  return found;
}
