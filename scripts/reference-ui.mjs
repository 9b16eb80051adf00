// Puts the pinned reference UI (@scalar/api-reference's 3.5 MB browser bundle) among the api worker's
// static assets, the `[assets]` folder of wrangler.toml, which /docs serves it from (src/api/routes/docs.ts).
// Generated, not committed: wrangler.toml runs this before every build (deploy, deploy:check, npm start)
// and vitest.config.mts before the tests, so the folder always holds the installed version.
// Plain JavaScript: wrangler runs it with node before anything is compiled.
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const at = (path) => fileURLToPath(new URL(path, import.meta.url));
const source = at('../node_modules/@scalar/api-reference/dist/browser/standalone.js');
const target = at('../dist/api-assets/scalar-api-reference.js');
// Written outside the folder and renamed into it, so a build or test run reading the folder meanwhile
// sees the old file or the new one, never a partial one.
const partial = at(`../dist/scalar-api-reference.${process.pid}.partial`);

// An unchanged copy is left alone: its modification time is part of the ETag the local asset store gives it.
if (!existsSync(target) || !readFileSync(target).equals(readFileSync(source))) {
  mkdirSync(at('../dist/api-assets/'), { recursive: true });
  copyFileSync(source, partial);
  renameSync(partial, target);
}
