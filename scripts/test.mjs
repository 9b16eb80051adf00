// `npm test`: the typecheck, the layering rules (.dependency-cruiser.cjs) and every test file, failing when
// any fails. The typecheck's half minute of one core fits beside the workers files instead of before them.
// Plain JavaScript: it runs before anything is compiled.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { join } from 'node:path';

// The tests' state in memory when the machine has room there: every workerd's Durable Objects and D1 (SQLite,
// which syncs each commit to disk), the end-to-end stacks' homes and chromium's profiles live under the
// temporary folder. On this 2-core machine's disk the workers files spent 5-10 % of their time waiting on those
// syncs: on a clean clone the workers project took 213 s with its state on disk, 166 s in memory. A TMPDIR set
// by the caller is kept.
const MEMORY = '/dev/shm';
const ROOM_BYTES = 2 * 1024 ** 3;
let scratch;
if (!process.env.TMPDIR) {
  try {
    const { bavail, bsize } = statfsSync(MEMORY);
    if (bavail * bsize >= ROOM_BYTES) scratch = mkdtempSync(join(MEMORY, 'sluice-test-'));
  } catch {
    // No /dev/shm (not Linux) or no room: the system's temporary folder, as before.
  }
}
const env = scratch ? { ...process.env, TMPDIR: scratch } : process.env;
// Ctrl-C reaches the children too (one process group); what they left in memory goes with this process.
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]]) {
  process.on(signal, () => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
    process.exit(code);
  });
}

const run = (command, args) => new Promise((resolve) => spawn(command, args, { stdio: 'inherit', env }).on('exit', (code) => resolve(code ?? 1)));

// The workers files first, beside the typecheck and the layering rules; then the end-to-end files (node).
// Side by side, the two projects took 8-9 minutes on a 2-core machine where each alone takes 3 and 4.5: the
// end-to-end files' stacks, bundlers and chromium and three workerds of the workers files thrashed the two
// cores (the mcp file took 90 s beside them, 5 s alone). One after the other, each has the cores to itself.
// The default reporter (progress and every failure), then each file's duration, longest first.
const vitest = (project) => run('node_modules/.bin/vitest', ['run', '--project', project, '--reporter=default', '--reporter=./scripts/file-timings-reporter.ts']);
const [typecheck, layers, workers] = await Promise.all([run('npm', ['run', '-s', 'typecheck']), run('npm', ['run', '-s', 'layers']), vitest('workers')]);
const node = await vitest('node');
const tests = workers || node;
if (scratch) rmSync(scratch, { recursive: true, force: true });
if (typecheck !== 0) console.error('\nThe typecheck failed (its errors are above).');
if (layers !== 0) console.error('\nAn import crosses a layer or closes a cycle (dependency-cruiser, above; the rules are in .dependency-cruiser.cjs).');
process.exit(typecheck || layers || tests);
