/**
 * Each worker bundles for deployment with the pinned wrangler, with no account attached. The three at once,
 * as `npm start` bundles them (one after another, the file took 20 s or more of its lane).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { ROOT, runCommand, tempDir } from './support/processes';

describe('wrangler deploy --dry-run', () => {
  it.concurrent.for([
    ['api', 'wrangler.toml'],
    ['mcp', 'src/mcp/wrangler.toml'],
    ['app', 'src/app/wrangler.toml'],
  ] as const)('bundles the %s worker', async ([name, config], { expect }) => {
    const outdir = join(tempDir('deploy'), name);
    const ran = await runCommand(join(ROOT, 'node_modules', '.bin', 'wrangler'), ['deploy', '--dry-run', '--config', config, '--outdir', outdir], {
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1' },
      timeoutMs: 110_000,
    });
    expect(ran.code, `${ran.stdout}\n${ran.stderr}`).toBe(0);
    expect(ran.stdout).toMatch(/--dry-run: exiting now/);
    expect(existsSync(join(outdir, 'index.js'))).toBe(true);
  });
});
