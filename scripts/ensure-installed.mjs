// Runs before `npm start` and `npm test` so both work on a fresh clone: installs exactly the lockfile
// when node_modules is missing or older than it. Plain JavaScript, because nothing else is installed yet.
import { execSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';

const installed = 'node_modules/.package-lock.json';
const stale = !existsSync(installed) || statSync(installed).mtimeMs < statSync('package-lock.json').mtimeMs;
if (stale) {
  console.log('Installing dependencies (npm ci)...');
  execSync('npm ci --no-audit --no-fund', { stdio: 'inherit' });
}
