/**
 * The production check: what differs between the local stack and Cloudflare, read from the configs that
 * would be deployed and the code they run, before anything ships. Each rule is a function of the configs
 * (and of the code's facts); a problem names its rule, the worker and what to change.
 *
 * Run by `npm run deploy:check`, by `npm run deploy` before it touches the account, and by npm test
 * (test/node/deploy-check.test.ts, which also feeds each rule a broken config).
 */
import { isIP } from 'node:net';
import { dirname, relative, resolve } from 'node:path';
import { PROJECT_ROOT } from '../lib/home';
import { bindingsOf, DEPLOYABLE_KINDS, entryOf, liveClasses, migrationsOf, objectBindingsOf, type Migration, type RawConfig, type WorkerConfig, type WorkerId } from './configs';
import type { SourceFacts } from './source';
import { JOB_WORKFLOW_SUBREQUESTS, MOST_DOWNLOAD_SUBREQUESTS } from '../../src/core/protocols/job';

export interface Problem {
  rule: RuleId;
  worker?: WorkerId;
  message: string;
}

export type RuleId =
  | 'shared-d1'
  | 'bound-classes'
  | 'migrations-append-only'
  | 'class-renamed-in-place'
  | 'compatibility'
  | 'local-only'
  | 'secret-in-vars'
  | 'undeclared-setting'
  | 'missing-binding'
  | 'observability'
  | 'cron'
  | 'provisionable'
  | 'subrequests';

export interface CheckInput {
  /** The configs to deploy, in deploy order (the api worker first). */
  configs: WorkerConfig[];
  /** What each worker's code reads and exports (scanSources). */
  sources: Partial<Record<WorkerId, SourceFacts>>;
  /** SETTINGS of src/core/config.ts: name to description ("Secret: ..." marks a secret). */
  settings: Record<string, string>;
  /** Earlier versions of each worker's config (oldest first): their Durable Object migrations must be where they were. */
  history?: Partial<Record<WorkerId, { label: string; raw: RawConfig }[]>>;
  /** Settings an installation gives besides [vars] (the deploy's settings file): checked for local-only values too. */
  given?: Record<string, string>;
}

/** Settings that only make sense on one's own machine: set for production they open a hole or keep mail unsent. */
export const LOCAL_ONLY_SETTINGS: Record<string, string> = {
  DEV_OUTBOX: 'keeps the emails in D1 and shows them to anyone at /dev/outbox',
  SCRAPE_ALLOW_PRIVATE_HOSTS: 'lets the scraper fetch private hosts',
  WEBHOOK_ALLOW_PRIVATE_HOSTS: 'lets webhook events go to private hosts',
  OAUTH_CLIENT_ALLOW_PRIVATE_HOSTS: 'lets the authorization server read client documents from private hosts',
};

export const isSecretSetting = (description: string | undefined) => description?.startsWith('Secret:') ?? false;

type Entry = Record<string, unknown>;
const field = (raw: RawConfig, key: string) => (raw as Entry)[key];

export function productionProblems(input: CheckInput): Problem[] {
  return [
    ...sharedDatabases(input),
    ...boundClasses(input),
    ...migrationsAppendOnly(input),
    ...classesRenamedInPlace(input),
    ...compatibility(input),
    ...localOnly(input),
    ...secretsInVars(input),
    ...settingsAndBindings(input),
    ...observability(input),
    ...cron(input),
    ...provisionable(input),
    ...subrequests(input),
  ];
}

/** Two workers binding the same D1 name mean the same database, with the same migrations. */
export function sharedDatabases({ configs }: CheckInput): Problem[] {
  const problems: Problem[] = [];
  const byBinding = new Map<string, { worker: WorkerId; name: unknown; id: unknown; migrations: string | undefined }>();
  for (const { id, path, raw } of configs) {
    for (const database of (field(raw, 'd1_databases') as Entry[] | undefined) ?? []) {
      const binding = String(database.binding);
      const migrations = typeof database.migrations_dir === 'string' ? relative(PROJECT_ROOT, resolve(dirname(path), database.migrations_dir)) : undefined;
      const seen = byBinding.get(binding);
      if (!seen) {
        byBinding.set(binding, { worker: id, name: database.database_name, id: database.database_id, migrations });
        continue;
      }
      const differs = [
        seen.name !== database.database_name && `database_name "${String(database.database_name)}" (${seen.worker}: "${String(seen.name)}")`,
        seen.id !== database.database_id && `database_id "${String(database.database_id)}" (${seen.worker}: "${String(seen.id)}")`,
        seen.migrations !== migrations && `migrations_dir ${migrations ?? '(none)'} (${seen.worker}: ${seen.migrations ?? '(none)'})`,
      ].filter(Boolean);
      if (differs.length) problems.push({ rule: 'shared-d1', worker: id, message: `D1 binding ${binding} is the shared database but has ${differs.join(', ')}.` });
    }
  }
  return problems;
}

/** A binding to another worker's class or entrypoint names one that worker exports and (for a class) has migrated. */
export function boundClasses({ configs, sources }: CheckInput): Problem[] {
  const problems: Problem[] = [];
  const byName = new Map(configs.map((config) => [String(field(config.raw, 'name')), config]));
  for (const { id, raw } of configs) {
    for (const binding of objectBindingsOf(raw)) {
      if (!binding.script_name) continue;
      const target = byName.get(binding.script_name);
      if (!target) {
        problems.push({ rule: 'bound-classes', worker: id, message: `Durable Object binding ${binding.name} names script_name "${binding.script_name}", which is none of the deployed workers (${[...byName.keys()].join(', ')}).` });
        continue;
      }
      const exported = sources[target.id]?.exports;
      if (exported && !exported.has(binding.class_name)) {
        problems.push({ rule: 'bound-classes', worker: id, message: `Durable Object binding ${binding.name} names class ${binding.class_name}, which ${binding.script_name} does not export (it exports ${[...exported].join(', ')}).` });
      } else if (!liveClasses(migrationsOf(target.raw)).has(binding.class_name)) {
        problems.push({ rule: 'bound-classes', worker: id, message: `Durable Object binding ${binding.name} names class ${binding.class_name}, which no migration of ${binding.script_name} creates.` });
      }
    }
    for (const service of ((field(raw, 'services') as Entry[] | undefined) ?? []) as { binding: string; service: string; entrypoint?: string }[]) {
      const target = byName.get(service.service);
      if (!target) {
        problems.push({ rule: 'bound-classes', worker: id, message: `Service binding ${service.binding} names "${service.service}", which is none of the deployed workers.` });
        continue;
      }
      const exported = sources[target.id]?.exports;
      if (service.entrypoint && exported && !exported.has(service.entrypoint)) {
        problems.push({ rule: 'bound-classes', worker: id, message: `Service binding ${service.binding} names entrypoint ${service.entrypoint}, which ${service.service} does not export.` });
      }
    }
  }
  return problems;
}

const stepKey = (step: Migration) => JSON.stringify(step, Object.keys(step).sort());

/** Migrations that shipped stay as they were, in their order: a new step is added at the end, never edited in. */
export function migrationsAppendOnly({ configs, history }: CheckInput): Problem[] {
  const problems: Problem[] = [];
  for (const { id, raw } of configs) {
    const current = migrationsOf(raw);
    for (const earlier of history?.[id] ?? []) {
      const before = migrationsOf(earlier.raw);
      const index = before.findIndex((step, position) => current[position] === undefined || stepKey(step) !== stepKey(current[position]!));
      if (index === -1) continue;
      const step = before[index]!;
      problems.push({
        rule: 'migrations-append-only',
        worker: id,
        message: current[index] === undefined
          ? `Durable Object migration ${step.tag ?? `#${index + 1}`} of ${earlier.label} was removed: shipped migrations stay, a change is a new step at the end.`
          : `Durable Object migration ${step.tag ?? `#${index + 1}`} differs from ${earlier.label}: shipped migrations stay as they were, a change is a new step at the end.`,
      });
      break;
    }
  }
  return problems;
}

/**
 * The classes a worker's migrations leave are the classes it exports and binds: a class renamed in the code
 * (or in a binding) without a renamed_classes step would strand every object of the old name.
 */
export function classesRenamedInPlace({ configs, sources }: CheckInput): Problem[] {
  const problems: Problem[] = [];
  for (const { id, raw } of configs) {
    const live = liveClasses(migrationsOf(raw));
    const exported = sources[id]?.exports;
    for (const binding of objectBindingsOf(raw)) {
      if (binding.script_name) continue;
      if (!live.has(binding.class_name)) problems.push({ rule: 'class-renamed-in-place', worker: id, message: `Durable Object binding ${binding.name} names class ${binding.class_name}, which no migration creates: a renamed class needs a [[migrations]] step with renamed_classes, a new one new_sqlite_classes.` });
    }
    if (!exported) continue;
    for (const name of live) {
      if (!exported.has(name)) problems.push({ rule: 'class-renamed-in-place', worker: id, message: `The migrations define Durable Object class ${name}, which the worker no longer exports: renaming it needs a renamed_classes step, removing it a deleted_classes step.` });
    }
  }
  return problems;
}

/** One runtime for the three: the same compatibility date and flags. */
export function compatibility({ configs }: CheckInput): Problem[] {
  const [first, ...rest] = configs;
  if (!first) return [];
  const problems: Problem[] = [];
  const flags = (raw: RawConfig) => [...new Set((field(raw, 'compatibility_flags') as string[] | undefined) ?? [])].sort().join(', ');
  for (const other of rest) {
    if (field(other.raw, 'compatibility_date') !== field(first.raw, 'compatibility_date')) {
      problems.push({ rule: 'compatibility', worker: other.id, message: `compatibility_date ${String(field(other.raw, 'compatibility_date'))} differs from ${first.id}'s ${String(field(first.raw, 'compatibility_date'))}.` });
    }
    if (flags(other.raw) !== flags(first.raw)) {
      problems.push({ rule: 'compatibility', worker: other.id, message: `compatibility_flags [${flags(other.raw)}] differ from ${first.id}'s [${flags(first.raw)}].` });
    }
  }
  return problems;
}

/** Whether a URL points at this machine or a private network: fine for npm start, wrong for a deployment. */
export function isLocalUrl(value: string): boolean {
  let host: string;
  try {
    host = new URL(value).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  } catch {
    return false;
  }
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal')) return true;
  if (isIP(host) === 4) {
    const [a, b] = host.split('.').map(Number) as [number, number];
    return a === 127 || a === 10 || a === 0 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 169 && b === 254) || (a === 100 && b >= 64 && b <= 127);
  }
  if (isIP(host) === 6) return host === '::1' || host === '::' || /^f[cd]/.test(host) || /^fe[89ab]/.test(host) || host.startsWith('::ffff:127.');
  return false;
}

/** No setting of one's own machine ships: DEV_OUTBOX and the private-host allowances, and no loopback or private URL. */
export function localOnly({ configs, given }: CheckInput): Problem[] {
  const problems: Problem[] = [];
  const inspect = (values: Record<string, unknown>, where: string, worker?: WorkerId) => {
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined || value === '' || value === null) continue;
      if (LOCAL_ONLY_SETTINGS[name]) problems.push({ rule: 'local-only', worker, message: `${name} is set in ${where}; it ${LOCAL_ONLY_SETTINGS[name]}, so it is for npm start only.` });
      else if (typeof value === 'string' && isLocalUrl(value)) problems.push({ rule: 'local-only', worker, message: `${name} in ${where} is a local address (${value}); a deployment serves and calls public URLs.` });
    }
  };
  for (const { id, raw } of configs) inspect((field(raw, 'vars') as Entry | undefined) ?? {}, `${id}'s [vars]`, id);
  if (given) inspect(given, 'the settings file');
  return problems;
}

/** A secret is never a plain var: vars are shown in the dashboard and kept in the config. */
export function secretsInVars({ configs, settings }: CheckInput): Problem[] {
  const problems: Problem[] = [];
  for (const { id, raw } of configs) {
    for (const name of Object.keys((field(raw, 'vars') as Entry | undefined) ?? {})) {
      if (isSecretSetting(settings[name])) problems.push({ rule: 'secret-in-vars', worker: id, message: `${name} is a secret but ${id}'s [vars] sets it: secrets go through wrangler secrets (npm run deploy uploads them), never the config.` });
    }
  }
  return problems;
}

/**
 * What the code reads of its environment exists: a setting is declared in SETTINGS (so the deploy knows it,
 * and whether it is a secret); anything else is a binding. The worker's own code (its folder, and for the
 * worker that hosts the Durable Objects their folder) must find each binding in its own config; shared code
 * (src/services, src/core...), which a worker may import for a schema without running it, in some config.
 */
export function settingsAndBindings({ configs, sources, settings }: CheckInput): Problem[] {
  const problems: Problem[] = [];
  const everywhere = new Map<string, WorkerId>();
  for (const { id, raw } of configs) for (const name of bindingsOf(raw).keys()) everywhere.set(name, id);
  for (const config of configs) {
    const facts = sources[config.id];
    const entry = entryOf(config);
    if (!facts || !entry) continue;
    const own = bindingsOf(config.raw);
    const ownFolders = [dirname(entry), ...(objectBindingsOf(config.raw).some((binding) => !binding.script_name) ? [resolve(PROJECT_ROOT, 'durable-objects')] : [])].map((folder) => relative(PROJECT_ROOT, folder) + '/');
    for (const [name, file] of facts.envReads) {
      if (name in settings || own.has(name)) continue;
      if (!everywhere.has(name)) {
        problems.push({ rule: 'undeclared-setting', worker: config.id, message: `${file} reads env.${name}, which is neither a setting in SETTINGS (src/core/config.ts) nor a binding of any worker: declare it, or the deploy cannot set it.` });
      } else if (ownFolders.some((folder) => file.startsWith(folder))) {
        problems.push({ rule: 'missing-binding', worker: config.id, message: `${file} reads binding ${name}, which ${config.id}'s config does not declare (only ${everywhere.get(name)}'s does).` });
      }
    }
  }
  return problems;
}

/** Workers Logs keep the structured lines Sluice writes: every worker has [observability] enabled. */
export function observability({ configs }: CheckInput): Problem[] {
  return configs
    .filter(({ raw }) => (field(raw, 'observability') as Entry | undefined)?.enabled !== true)
    .map(({ id }) => ({ rule: 'observability' as const, worker: id, message: `${id}'s config lacks [observability] enabled = true: its log lines would not reach Workers Logs.` }));
}

/** A worker with a scheduled handler has the cron that runs it. */
export function cron({ configs, sources }: CheckInput): Problem[] {
  return configs
    .filter(({ id, raw }) => sources[id]?.scheduled && !(((field(raw, 'triggers') as Entry | undefined)?.crons as unknown[] | undefined)?.length))
    .map(({ id }) => ({ rule: 'cron' as const, worker: id, message: `${id} exports a scheduled handler but its config has no [triggers] crons: it would never run.` }));
}

/** Every binding is of a kind `npm run deploy` finds or creates; another would deploy broken or not at all. */
export function provisionable({ configs }: CheckInput): Problem[] {
  const problems: Problem[] = [];
  for (const { id, raw } of configs) {
    for (const [name, kind] of bindingsOf(raw)) {
      if (!DEPLOYABLE_KINDS.has(kind)) problems.push({ rule: 'provisionable', worker: id, message: `Binding ${name} is a ${kind} binding, which npm run deploy does not provision yet (scripts/deploy/provision.ts).` });
    }
  }
  return problems;
}

/**
 * A worker that binds the job results' bucket serves downloads, which read an R2 object per large answer: its
 * `[limits] subrequests` covers the most one download makes (Workers Paid allows 10,000 unless raised). The
 * worker that runs the jobs' Workflow (a `[[workflows]]` entry of its own class, no `script_name`) allows what a
 * job's instance makes over all its steps (JOB_WORKFLOW_SUBREQUESTS).
 */
export function subrequests({ configs }: CheckInput): Problem[] {
  const allowed = (raw: RawConfig) => Number((field(raw, 'limits') as Entry | undefined)?.subrequests ?? 10_000);
  const downloads = configs
    .filter(({ raw }) => ((field(raw, 'r2_buckets') as Entry[] | undefined) ?? []).some((bucket) => bucket.binding === 'RESULTS'))
    .filter(({ raw }) => allowed(raw) < MOST_DOWNLOAD_SUBREQUESTS)
    .map(({ id }) => ({
      rule: 'subrequests' as const,
      worker: id,
      message: `${id} serves data job downloads, up to ${MOST_DOWNLOAD_SUBREQUESTS.toLocaleString('en-US')} subrequests each: set [limits] subrequests to at least that.`,
    }));
  const runsJobs = configs
    .filter(({ raw }) => ((field(raw, 'workflows') as Entry[] | undefined) ?? []).some((workflow) => workflow.class_name === 'DataJobWorkflow' && workflow.script_name === undefined))
    .filter(({ raw }) => allowed(raw) < JOB_WORKFLOW_SUBREQUESTS)
    .map(({ id }) => ({
      rule: 'subrequests' as const,
      worker: id,
      message: `${id} runs the data jobs' Workflow, whose instance counts every subrequest of a job's items: set [limits] subrequests to ${JOB_WORKFLOW_SUBREQUESTS.toLocaleString('en-US')}.`,
    }));
  return [...downloads, ...runsJobs];
}
