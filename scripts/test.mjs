// `npm test`: the typecheck, the layering rules (.dependency-cruiser.cjs) and every test file at once,
// failing when any fails. The end-to-end files
// spend most of their time waiting on the stacks they start, so the typecheck's half minute of one core
// fits beside them instead of before them. Plain JavaScript: it runs before anything is compiled.
import { spawn } from 'node:child_process';

const run = (command, args) => new Promise((resolve) => spawn(command, args, { stdio: 'inherit' }).on('exit', (code) => resolve(code ?? 1)));

const [typecheck, layers, tests] = await Promise.all([
  run('npm', ['run', '-s', 'typecheck']),
  run('npm', ['run', '-s', 'layers']),
  // The default reporter (progress and every failure), then each file's duration, longest first.
  run('node_modules/.bin/vitest', ['run', '--reporter=default', '--reporter=./scripts/file-timings-reporter.ts']),
]);
if (typecheck !== 0) console.error('\nThe typecheck failed (its errors are above).');
if (layers !== 0) console.error('\nAn import crosses a layer or closes a cycle (dependency-cruiser, above; the rules are in .dependency-cruiser.cjs).');
process.exit(typecheck || layers || tests);
