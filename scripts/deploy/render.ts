/**
 * The deploy configs: each committed config rendered for one environment into
 * dist/deploy/<environment>/<worker>/wrangler.json, with the account's resource ids, the public URLs, the
 * build and the installation's plain settings as [vars], and custom domains as routes. The committed configs
 * stay account-free: nothing here writes to them.
 */
import { dirname, join, relative, resolve } from 'node:path';
import { PROJECT_ROOT } from '../lib/home';
import type { RawConfig, WorkerConfig, WorkerId } from './configs';

export interface PublicUrls {
  BASE_URL: string;
  TOOLS_BASE_URL: string;
  MCP_URL: string;
  APP_URL: string;
}

export interface RenderTarget {
  environment: string;
  urls: PublicUrls;
  buildId: string;
  /** Plain (not secret) settings given for the installation: every worker gets them as [vars]. */
  vars: Record<string, string>;
  /** D1 database uuids by name on the account; a missing one keeps the committed placeholder (the plan, the check). */
  d1Ids: Record<string, string>;
}

/** Where the deploy configs go: dist/deploy, or SLUICE_DEPLOY_DIR (the tests use their own). */
export const deployBase = (env: NodeJS.ProcessEnv = process.env, root = PROJECT_ROOT) => (env.SLUICE_DEPLOY_DIR ? resolve(root, env.SLUICE_DEPLOY_DIR) : join(root, 'dist', 'deploy'));

/** Names on the account: production keeps the committed ones, another environment adds its name (sluice-api-staging). */
export function nameIn(environment: string, name: string): string {
  return environment === 'production' ? name : `${name}-${environment}`;
}

const URL_OF: Record<WorkerId, keyof PublicUrls> = { api: 'BASE_URL', mcp: 'MCP_URL', app: 'APP_URL' };

type Entry = Record<string, unknown>;

export function renderConfigs(configs: WorkerConfig[], target: RenderTarget, base = deployBase()): WorkerConfig[] {
  const ours = new Set(configs.map(({ raw }) => String((raw as Entry).name)));
  const rename = (name: unknown) => (typeof name === 'string' && ours.has(name) ? nameIn(target.environment, name) : name);
  const named = (name: unknown) => (typeof name === 'string' ? nameIn(target.environment, name) : name);

  return configs.map(({ id, path, raw }) => {
    const out = join(base, target.environment, id);
    const from = dirname(path);
    const moved = (value: unknown) => (typeof value === 'string' ? relative(out, resolve(from, value)) || '.' : value);
    const config = structuredClone(raw) as Entry;

    config.name = rename(config.name);
    for (const key of ['main', 'tsconfig', 'base_dir'] as const) if (key in config) config[key] = moved(config[key]);
    if (config.assets) config.assets = { ...(config.assets as Entry), directory: moved((config.assets as Entry).directory) };
    if (config.build) {
      // The build command runs where wrangler runs (the project root); nothing is watched in a deploy.
      const { watch_dir: _watch, ...build } = config.build as Entry;
      config.build = build;
    }

    config.d1_databases = ((config.d1_databases as Entry[] | undefined) ?? []).map((database) => {
      const name = named(database.database_name) as string;
      return { ...database, database_name: name, database_id: target.d1Ids[name] ?? database.database_id, migrations_dir: moved(database.migrations_dir) };
    });
    if (config.r2_buckets) config.r2_buckets = (config.r2_buckets as Entry[]).map((bucket) => ({ ...bucket, bucket_name: named(bucket.bucket_name) }));
    if (config.queues) {
      const queues = config.queues as Entry;
      config.queues = {
        ...queues,
        ...(queues.producers ? { producers: (queues.producers as Entry[]).map((producer) => ({ ...producer, queue: named(producer.queue) })) } : {}),
        ...(queues.consumers
          ? { consumers: (queues.consumers as Entry[]).map((consumer) => ({ ...consumer, queue: named(consumer.queue), ...(consumer.dead_letter_queue ? { dead_letter_queue: named(consumer.dead_letter_queue) } : {}) })) }
          : {}),
      };
    }
    if (config.workflows) config.workflows = (config.workflows as Entry[]).map((workflow) => ({ ...workflow, name: named(workflow.name), ...(workflow.script_name ? { script_name: rename(workflow.script_name) } : {}) }));
    if (config.services) config.services = (config.services as Entry[]).map((service) => ({ ...service, service: rename(service.service) }));
    if (config.durable_objects) {
      const objects = config.durable_objects as Entry;
      config.durable_objects = { ...objects, bindings: ((objects.bindings as Entry[] | undefined) ?? []).map((binding) => (binding.script_name ? { ...binding, script_name: rename(binding.script_name) } : binding)) };
    }

    config.vars = { ...((config.vars as Entry | undefined) ?? {}), ...target.vars, ...target.urls, BUILD_ID: target.buildId };

    // A URL off workers.dev is a custom domain of the worker that serves it (the api also serves TOOLS_BASE_URL).
    const hosts = new Set([target.urls[URL_OF[id]], ...(id === 'api' ? [target.urls.TOOLS_BASE_URL] : [])].map((url) => new URL(url).hostname).filter((host) => !host.endsWith('.workers.dev')));
    if (hosts.size > 0) config.routes = [...hosts].map((pattern) => ({ pattern, custom_domain: true }));

    return { id, path: join(out, 'wrangler.json'), raw: config as RawConfig };
  });
}

/** The public URLs from what was given: each one set, or made on workers.dev from the subdomain. */
export function resolveUrls(given: Record<string, string>, workerNames: Record<WorkerId, string>, subdomain: string | undefined): { urls?: PublicUrls; missing: string[] } {
  const onWorkersDev = (id: WorkerId) => (subdomain ? `https://${workerNames[id]}.${subdomain}.workers.dev` : undefined);
  const base = given.BASE_URL || onWorkersDev('api');
  const mcp = given.MCP_URL || (onWorkersDev('mcp') && `${onWorkersDev('mcp')}/mcp`);
  const app = given.APP_URL || onWorkersDev('app');
  const missing = [!base && 'BASE_URL', !mcp && 'MCP_URL', !app && 'APP_URL'].filter((name): name is string => Boolean(name));
  if (missing.length > 0) return { missing };
  const trim = (url: string) => url.replace(/\/+$/, '');
  return { urls: { BASE_URL: trim(base!), TOOLS_BASE_URL: trim(given.TOOLS_BASE_URL || base!), MCP_URL: trim(mcp!), APP_URL: trim(app!) }, missing };
}
