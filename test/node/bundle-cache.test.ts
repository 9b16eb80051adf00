/**
 * The local stack's kept bundles (scripts/lib/bundle-cache.ts): reused only when the config, the lockfile and
 * every input esbuild read are what they were. A stale bundle would run code that is no longer in the tree.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { keepBundle, oneAtATime, reuseBundle } from '../../scripts/lib/bundle-cache';
import { PROJECT_ROOT } from '../../scripts/lib/home';
import { tempDir } from './support/processes';

const CACHE = join(PROJECT_ROOT, 'node_modules', '.cache', 'sluice-bundles');
const ids: string[] = [];
afterEach(() => {
  for (const id of ids.splice(0)) {
    rmSync(join(CACHE, id), { recursive: true, force: true });
    rmSync(join(CACHE, `${id}.lock`), { force: true });
  }
});

/** A worker's folder as wrangler sees it: a config, two sources (one under a sub-folder), a bundle and its metafile. */
function worker() {
  const id = `test-${Math.random().toString(36).slice(2)}`;
  ids.push(id);
  const dir = tempDir('bundle-cache');
  mkdirSync(join(dir, 'lib'));
  const config = join(dir, 'wrangler.toml');
  writeFileSync(config, 'name = "w"\nmain = "index.ts"\n');
  writeFileSync(join(dir, 'index.ts'), 'export { answer } from "./lib/answer";\n');
  writeFileSync(join(dir, 'lib', 'answer.ts'), 'export const answer = 42;\n');
  const outdir = join(dir, 'out');
  /** What a start that bundles does: wrangler writes the bundle and its metafile, the stack keeps them. */
  const bundle = (text: string) => {
    mkdirSync(outdir, { recursive: true });
    writeFileSync(join(outdir, 'index.js'), text);
    writeFileSync(`${outdir}.meta.json`, JSON.stringify({ inputs: { 'index.ts': {}, 'lib/answer.ts': {}, 'node-built-in-modules:util': {} } }));
    keepBundle(id, config, outdir, `${outdir}.meta.json`);
  };
  const reuse = () => reuseBundle(id, config, outdir);
  const served = () => readFileSync(join(outdir, 'index.js'), 'utf8');
  return { id, dir, config, outdir, bundle, reuse, served };
}

describe('the bundle cache', () => {
  it('gives back the bundle made from the same files, into a fresh output folder', () => {
    const w = worker();
    w.bundle('const answer = 42;');
    rmSync(w.outdir, { recursive: true });

    expect(w.reuse()).toBe(true);
    expect(w.served()).toBe('const answer = 42;');
  });

  it('bundles again when an input changed, even to the same size', () => {
    const w = worker();
    w.bundle('const answer = 42;');
    writeFileSync(join(w.dir, 'lib', 'answer.ts'), 'export const answer = 43;\n');

    expect(w.reuse()).toBe(false);
    // Left as it was, for wrangler to write.
    expect(w.served()).toBe('const answer = 42;');
  });

  it('bundles again when the config changed or an input is gone', () => {
    const w = worker();
    w.bundle('const answer = 42;');
    writeFileSync(w.config, 'name = "w"\nmain = "index.ts"\nminify = true\n');
    expect(w.reuse()).toBe(false);

    const v = worker();
    v.bundle('const answer = 42;');
    rmSync(join(v.dir, 'lib', 'answer.ts'));
    expect(v.reuse()).toBe(false);
  });

  it('reuses the bundle when files were only touched, and keeps the newest bundle', () => {
    const w = worker();
    w.bundle('const answer = 42;');
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(w.dir, 'lib', 'answer.ts'), later, later);
    expect(w.reuse()).toBe(true);

    writeFileSync(join(w.dir, 'lib', 'answer.ts'), 'export const answer = 43;\n');
    w.bundle('const answer = 43;');
    rmSync(w.outdir, { recursive: true });
    expect(w.reuse()).toBe(true);
    expect(w.served()).toBe('const answer = 43;');
  });

  it('lets one start bundle a worker at a time, and takes over the lock of a process that died', async () => {
    const id = `test-${Math.random().toString(36).slice(2)}`;
    ids.push(id);
    let inside = 0;
    let most = 0;
    const build = async () => {
      most = Math.max(most, ++inside);
      await new Promise((resolveWait) => setTimeout(resolveWait, 300));
      inside--;
    };
    await Promise.all([oneAtATime(id, build), oneAtATime(id, build), oneAtATime(id, build)]);
    expect(most).toBe(1);

    // A lock naming a process that has exited.
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    writeFileSync(join(CACHE, `${id}.lock`), String(gone));
    let built = false;
    await oneAtATime(id, async () => {
      built = true;
    });
    expect(built).toBe(true);
    expect(existsSync(join(CACHE, `${id}.lock`))).toBe(false);
    // Waiting out the lock instead would take minutes (LOCK_WAIT_MS), far past this test's bound.
  }, 10_000);
});
