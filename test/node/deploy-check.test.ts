/**
 * The production check (scripts/deploy/check.ts): the committed configs, rendered as `npm run deploy` renders
 * them, pass; each rule fails on a config broken the way it guards against.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { productionProblems, isLocalUrl, type CheckInput, type RuleId } from '../../scripts/deploy/check';
import { readWorkerConfigs, type RawConfig, type WorkerConfig } from '../../scripts/deploy/configs';
import { renderConfigs, resolveUrls } from '../../scripts/deploy/render';
import { scanSources } from '../../scripts/deploy/source';
import { workerSources } from '../../scripts/deploy';
import { productionCheck } from '../../scripts/deploy-check';
import { ROOT, tempDir } from './support/processes';

type Entry = Record<string, any>;

let base: CheckInput;

beforeAll(async () => {
  // By path at run time, as the scripts load it: the node typecheck does not follow the workers' type graph.
  const { SETTINGS } = (await import(pathToFileURL(join(ROOT, 'src', 'core', 'config.ts')).href)) as { SETTINGS: Record<string, string> };
  const committed = await readWorkerConfigs();
  const urls = resolveUrls({}, { api: 'sluice-api', mcp: 'sluice-mcp', app: 'sluice-app' }, 'example').urls!;
  const configs = renderConfigs(committed, { environment: 'production', urls, buildId: 'test', vars: {}, d1Ids: {} }, tempDir('deploy-check'));
  base = { configs, sources: workerSources(committed), settings: SETTINGS, history: { api: [{ label: 'the committed config', raw: committed[0]!.raw }] } };
});

/** A copy of the input to break: configs and code facts deep-copied. */
function broken(change: (input: CheckInput & { config: (id: 'api' | 'mcp' | 'app') => Entry }) => void): CheckInput {
  const input: CheckInput = {
    ...base,
    configs: base.configs.map((config) => ({ ...config, raw: structuredClone(config.raw) })),
    sources: Object.fromEntries(Object.entries(base.sources).map(([id, facts]) => [id, { ...facts!, envReads: new Map(facts!.envReads), exports: new Set(facts!.exports) }])),
    history: structuredClone(base.history),
  };
  const config = (id: string) => input.configs.find((candidate) => candidate.id === id)!.raw as Entry;
  change(Object.assign(input, { config }));
  return input;
}

const rulesOf = (input: CheckInput) => productionProblems(input).map((problem) => problem.rule);

describe('the production check', () => {
  it('passes on the committed configs, as npm run deploy:check runs it', async () => {
    expect(productionProblems(base)).toEqual([]);
    expect(await productionCheck(ROOT)).toEqual([]);
  });

  const cases: [RuleId, string, (input: CheckInput & { config: (id: 'api' | 'mcp' | 'app') => Entry }) => void][] = [
    ['shared-d1', 'the dashboard binds another database as DB', ({ config }) => (config('app').d1_databases[0].database_name = 'sluice-dashboard')],
    ['shared-d1', 'the mcp worker reads its migrations from elsewhere', ({ config }) => (config('mcp').d1_databases[0].migrations_dir = '../../../migrations-old')],
    ['bound-classes', "the dashboard binds a class the api does not export", ({ config }) => (config('app').durable_objects.bindings[0].class_name = 'WorkspaceGates')],
    ['bound-classes', 'the dashboard binds a worker that is not deployed', ({ config }) => (config('app').durable_objects.bindings[1].script_name = 'sluice-api-old')],
    ['bound-classes', 'the mcp worker binds an entrypoint the api does not export', ({ config }) => (config('mcp').services[0].entrypoint = 'McpGateways')],
    ['migrations-append-only', 'a shipped migration is edited', ({ config }) => (config('api').migrations[1].new_sqlite_classes = ['WorkspaceDatabase', 'Another'])],
    ['migrations-append-only', 'a shipped migration is removed', ({ config }) => config('api').migrations.splice(2, 1)],
    ['class-renamed-in-place', 'a class renamed in the code only', ({ sources }) => {
      sources.api!.exports.delete('OrgWallet');
      sources.api!.exports.add('OrganizationWallet');
    }],
    ['class-renamed-in-place', 'a binding renamed to a class no migration creates', ({ config, sources }) => {
      config('api').durable_objects.bindings[0].class_name = 'Gate';
      sources.api!.exports.add('Gate');
    }],
    ['compatibility', 'the mcp worker on another compatibility date', ({ config }) => (config('mcp').compatibility_date = '2025-01-01')],
    ['compatibility', 'the dashboard without a flag the others have', ({ config }) => (config('app').compatibility_flags = ['nodejs_compat'])],
    ['local-only', 'DEV_OUTBOX in [vars]', ({ config }) => (config('app').vars.DEV_OUTBOX = '1')],
    ['local-only', 'a loopback URL in [vars]', ({ config }) => (config('api').vars.SCRAPE_DNS_URL = 'http://127.0.0.1:5353/dns-query')],
    ['local-only', 'SCRAPE_ALLOW_PRIVATE_HOSTS in the settings file', (input) => (input.given = { SCRAPE_ALLOW_PRIVATE_HOSTS: 'intranet:80' })],
    ['secret-in-vars', 'a secret written into [vars]', ({ config }) => (config('api').vars.OPS_TOKEN = 'plain-text-token')],
    ['undeclared-setting', 'the code reads a name SETTINGS lacks', ({ sources }) => sources.api!.envReads.set('SLUICE_NEW_SETTING', 'src/api/index.ts')],
    ['missing-binding', "the dashboard's own code reads a binding its config lacks (its D1 database)", ({ config }) => delete config('app').d1_databases],
    ['observability', 'a worker without [observability]', ({ config }) => delete config('mcp').observability],
    ['cron', 'the scheduled handler without its cron', ({ config }) => delete config('api').triggers],
    ['provisionable', 'a binding kind the deploy does not provision', ({ config }) => (config('app').kv_namespaces = [{ binding: 'CACHE', id: 'abc' }])],
    ['subrequests', "the dashboard serves downloads on the platform's default subrequests", ({ config }) => delete config('app').limits],
    ['subrequests', "the api runs the jobs' Workflow with a download's subrequests, not a whole job's", ({ config }) => (config('api').limits.subrequests = 20_000)],
  ];

  it.each(cases)('[%s] fails when %s', (rule, _what, change) => {
    expect(rulesOf(broken(change))).toContain(rule);
  });

  it('reads the code itself: a worker whose own files read a binding it lacks and a name declared nowhere', async () => {
    const folder = join(ROOT, 'test', 'deploy', 'fixtures', 'reader');
    const { experimental_readRawConfig } = await import('wrangler');
    const raw = experimental_readRawConfig({ config: join(folder, 'wrangler.json') }).rawConfig as RawConfig;
    const app: WorkerConfig = { id: 'app', path: join(folder, 'wrangler.json'), raw };
    const facts = scanSources(join(folder, 'index.ts'));
    expect([...facts.envReads.keys()].sort()).toEqual(['DB', 'NOT_A_SETTING', 'ORG_WALLET']);
    const problems = productionProblems({ ...base, configs: [base.configs[0]!, base.configs[1]!, app], sources: { ...base.sources, app: facts } });
    expect(problems.filter((problem) => problem.worker === 'app').map((problem) => [problem.rule, problem.message.split(',')[0]])).toEqual([
      ['undeclared-setting', 'test/deploy/fixtures/reader/index.ts reads env.NOT_A_SETTING'],
      ['missing-binding', 'test/deploy/fixtures/reader/wallet.ts reads binding ORG_WALLET'],
    ]);
  });

  it('tells local and private addresses from public ones', () => {
    for (const url of ['http://127.0.0.1:8787', 'http://localhost:8789', 'http://[::1]:8788/mcp', 'http://10.1.2.3', 'https://192.168.0.10', 'http://app.localhost', 'http://169.254.169.254/']) expect(isLocalUrl(url), url).toBe(true);
    for (const url of ['https://api.sluice.dev', 'https://sluice-api.acme.workers.dev', 'https://8.8.8.8/dns-query', 'not a url']) expect(isLocalUrl(url), url).toBe(false);
  });
});
