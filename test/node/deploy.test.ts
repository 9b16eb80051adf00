/**
 * Each worker bundles for deployment with the pinned wrangler, with no account attached: the configs as
 * `npm run deploy` renders them (dist/deploy/<env>/<worker>/wrangler.json: paths moved, public URLs, build),
 * so the rendered configs are proven too. The three at once, as `npm start` bundles them (one after another,
 * the file took 20 s or more of its lane).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, it } from 'vitest';
import { readWorkerConfigs } from '../../scripts/deploy/configs';
import { renderConfigs, resolveUrls } from '../../scripts/deploy/render';
import { writeJson } from '../../scripts/lib/home';
import { ROOT, runCommand, tempDir } from './support/processes';

const rendered = tempDir('deploy-rendered');

beforeAll(async () => {
  const configs = await readWorkerConfigs();
  const urls = resolveUrls({}, { api: 'sluice-api', mcp: 'sluice-mcp', app: 'sluice-app' }, 'example').urls!;
  for (const config of renderConfigs(configs, { environment: 'production', urls, buildId: 'dry-run', vars: {}, d1Ids: {} }, rendered)) writeJson(config.path, config.raw);
});

describe('wrangler deploy --dry-run', () => {
  it.concurrent.for(['api', 'mcp', 'app'] as const)('bundles the %s worker from its rendered deploy config', async (name, { expect }) => {
    const outdir = join(tempDir('deploy'), name);
    const config = join(rendered, 'production', name, 'wrangler.json');
    const ran = await runCommand(join(ROOT, 'node_modules', '.bin', 'wrangler'), ['deploy', '--dry-run', '--config', config, '--outdir', outdir], {
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1' },
      timeoutMs: 110_000,
    });
    expect(ran.code, `${ran.stdout}\n${ran.stderr}`).toBe(0);
    expect(ran.stdout).toMatch(/--dry-run: exiting now/);
    expect(ran.stdout).toContain('BUILD_ID ("dry-run")');
    expect(existsSync(join(outdir, 'index.js'))).toBe(true);
  });
});
