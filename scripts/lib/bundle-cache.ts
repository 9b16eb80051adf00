/**
 * Bundles kept from one start of the local stack to the next. A worker's bundle is reused when its wrangler
 * config, the lockfile and every file esbuild read for it (the inputs of the metafile `wrangler deploy
 * --dry-run --metafile` writes) hold what they held when it was made, compared by content, not by time: a
 * checkout or a copy that touches files without changing them still finds its bundle. Anything else bundles
 * again, as before. A second `npm start` of unchanged code skips wrangler's three bundlings (~10 s of a
 * 2-core machine), and so do the end-to-end tests' stacks after the first.
 *
 * The cache lives in node_modules/.cache (shared by every SLUICE_HOME of the checkout, gone with a fresh
 * install); it is written to a folder of its own and renamed into place, so a stack starting beside another
 * never reads half of one, and stacks starting together bundle a worker once (`oneAtATime`). It holds
 * nothing secret: settings and secrets are given to workerd, not bundled.
 */
import { createHash } from 'node:crypto';
import { closeSync, cpSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { PROJECT_ROOT } from './home';

const CACHE_ROOT = join(PROJECT_ROOT, 'node_modules', '.cache', 'sluice-bundles');
const RECORD = 'inputs.json';
const BUNDLE = 'bundle';

/** What a bundle was made from: its config and lockfile (one digest) and each input file's digest, by path. */
interface Kept {
  base: string;
  inputs: { [path: string]: string };
}

const digest = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('base64url');

/** The config's text and the lockfile: what decides how wrangler bundles, besides the inputs. */
function baseOf(configPath: string): string {
  return digest(`${readFileSync(configPath, 'utf8')}\0${readFileSync(join(PROJECT_ROOT, 'package-lock.json'), 'utf8')}`);
}

/** The digest of a file esbuild read, or undefined when it is gone. Paths are as the metafile gives them: from the config's folder. */
function inputDigest(configDir: string, path: string): string | undefined {
  try {
    return digest(readFileSync(resolve(configDir, path)));
  } catch {
    return undefined;
  }
}

/**
 * Copies the kept bundle of `id` into `outdir` and answers true when it was made from exactly these
 * files; answers false (touching nothing) otherwise. Run the config's own build command first: it makes
 * files the bundle imports.
 */
export function reuseBundle(id: string, configPath: string, outdir: string): boolean {
  const folder = join(CACHE_ROOT, id);
  let record: Kept;
  try {
    record = JSON.parse(readFileSync(join(folder, RECORD), 'utf8')) as Kept;
  } catch {
    return false;
  }
  if (record.base !== baseOf(configPath)) return false;
  const configDir = dirname(configPath);
  for (const [path, kept] of Object.entries(record.inputs)) if (inputDigest(configDir, path) !== kept) return false;
  rmSync(outdir, { recursive: true, force: true });
  try {
    cpSync(join(folder, BUNDLE), outdir, { recursive: true });
  } catch {
    // Replaced by another stack at this moment: bundle afresh.
    rmSync(outdir, { recursive: true, force: true });
    return false;
  }
  return true;
}

/** Keeps the bundle wrangler just wrote to `outdir` (with its metafile) for the next start. Best effort: a failure only costs a bundling. */
export function keepBundle(id: string, configPath: string, outdir: string, metafile: string): void {
  const folder = join(CACHE_ROOT, id);
  const fresh = `${folder}.${process.pid}.${Date.now()}`;
  try {
    const configDir = dirname(configPath);
    const inputs: Kept['inputs'] = {};
    const meta = JSON.parse(readFileSync(metafile, 'utf8')) as { inputs: { [path: string]: unknown } };
    for (const path of Object.keys(meta.inputs)) {
      // esbuild's own namespaces (node built-ins wrangler marks external) are not files.
      if (/^[a-z-]+:/.test(path)) continue;
      const kept = inputDigest(configDir, path);
      if (kept === undefined) return;
      inputs[path] = kept;
    }
    mkdirSync(fresh, { recursive: true });
    cpSync(outdir, join(fresh, BUNDLE), { recursive: true });
    writeFileSync(join(fresh, RECORD), JSON.stringify({ base: baseOf(configPath), inputs } satisfies Kept));
    rmSync(folder, { recursive: true, force: true });
    renameSync(fresh, folder);
  } catch {
    // Another stack kept its bundle at the same moment, or the disk said no: the next start bundles again.
  } finally {
    if (existsSync(fresh)) rmSync(fresh, { recursive: true, force: true });
  }
}

/** How long a start waits for another process bundling the same worker before bundling it too. */
const LOCK_WAIT_MS = 180_000;

/**
 * Runs `build` (reuse or bundle, then keep) while no other process does so for worker `id`: two stacks
 * started together (the end-to-end tests start two) then bundle it once, the second reusing the first's.
 * A lock left by a process that died is taken over; one held past LOCK_WAIT_MS is ignored.
 */
export async function oneAtATime<T>(id: string, build: () => Promise<T>): Promise<T> {
  mkdirSync(CACHE_ROOT, { recursive: true });
  const lock = join(CACHE_ROOT, `${id}.lock`);
  let held = false;
  for (const until = Date.now() + LOCK_WAIT_MS; !held && Date.now() < until; ) {
    try {
      const fd = openSync(lock, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      held = true;
    } catch {
      if (!holderAlive(lock)) rmSync(lock, { force: true });
      else await new Promise((resolveWait) => setTimeout(resolveWait, 250));
    }
  }
  try {
    return await build();
  } finally {
    if (held) unlinkSync(lock);
  }
}

function holderAlive(lock: string): boolean {
  try {
    const pid = Number(readFileSync(lock, 'utf8'));
    // A lock whose pid is not written yet is being taken right now.
    if (!pid) return true;
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, someone else's. ENOENT (the lock went away) and ESRCH (its process did) are not.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
