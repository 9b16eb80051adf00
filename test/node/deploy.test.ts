/** The api worker bundles for deployment with the pinned wrangler, with no account attached. */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCommand, tempDir } from './support/processes';

describe('wrangler deploy --dry-run', () => {
  it('bundles the api worker', async () => {
    const outdir = join(tempDir('deploy'), 'api');
    const ran = await runCommand('npx', ['wrangler', 'deploy', '--dry-run', '--outdir', outdir], {
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1' },
      timeoutMs: 110_000,
    });
    expect(ran.code, `${ran.stdout}\n${ran.stderr}`).toBe(0);
    expect(ran.stdout).toMatch(/--dry-run: exiting now/);
    expect(existsSync(join(outdir, 'index.js'))).toBe(true);
    expect(readdirSync(outdir)).toContain('index.js');
  });
});
