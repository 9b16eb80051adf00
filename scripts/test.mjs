// `npm test`: the typecheck, the layering rules (.dependency-cruiser.cjs) and every test file at once,
// failing when any fails. The end-to-end files
// spend most of their time waiting on the stacks they start, so the typecheck's half minute of one core
// fits beside them instead of before them. Plain JavaScript: it runs before anything is compiled.
import { spawn } from 'node:child_process';

const run = (command, args) => new Promise((resolve) => spawn(command, args, { stdio: 'inherit' }).on('exit', (code) => resolve(code ?? 1)));

// Each project in a vitest of its own, side by side: the workers files keep every core busy in their workerds,
// while the end-to-end files (node) mostly wait on the shared stack and chromium. In one vitest they shared
// its workers, and a file waiting on a browser held a core the workers files could have used.
// The default reporter (progress and every failure), then each file's duration, longest first.
const vitest = (project) => run('node_modules/.bin/vitest', ['run', '--project', project, '--reporter=default', '--reporter=./scripts/file-timings-reporter.ts']);
const [typecheck, layers, workers, node] = await Promise.all([
  run('npm', ['run', '-s', 'typecheck']),
  run('npm', ['run', '-s', 'layers']),
  vitest('workers'),
  vitest('node'),
]);
const tests = workers || node;
if (typecheck !== 0) console.error('\nThe typecheck failed (its errors are above).');
if (layers !== 0) console.error('\nAn import crosses a layer or closes a cycle (dependency-cruiser, above; the rules are in .dependency-cruiser.cjs).');
process.exit(typecheck || layers || tests);
