import { cloudflareTest, readD1Migrations } from '@cloudflare/vitest-pool-workers';
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { FAKE_SETTINGS, fakeUpstreams } from './test/fakes/index.ts';
import LongFilesFirstSequencer from './test/setup/sequencer.ts';
// The dashboard's browser code bundled into the module its worker imports (src/app/wrangler.toml's build
// command does this for deployments and npm start).
import './scripts/dashboard-script.mjs';
// The reference UI into the api worker's assets folder, which wrangler.toml names (its build command does
// this for deployments and npm start; the pool reads the config without building).
import './scripts/reference-ui.mjs';

const TEST_KEY_ENCRYPTION_KEY = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64');

export default defineConfig({
  test: {
    sequence: { sequencer: LongFilesFirstSequencer },
    projects: [
      {
        plugins: [
          cloudflareTest(async () => ({
            main: './src/api/index.ts',
            wrangler: { configPath: './wrangler.toml' },
            miniflare: {
              // A second, empty database: test/schema.test.ts builds schema.sql in it to compare with the migrations.
              d1Databases: { SCRATCH_DB: 'scratch' },
              bindings: {
                TEST_MIGRATIONS: await readD1Migrations('./migrations'),
                KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY,
                OPS_TOKEN: 'test-ops-token',
                BUILD_ID: 'test-build',
                ...FAKE_SETTINGS,
              },
              outboundService: fakeUpstreams,
              // No browser in workerd's tests: Miniflare's own Browser Rendering (wrangler.toml [browser]) would
              // download Chrome for Testing, so its binding is moved aside and BROWSER is absent (pages are read
              // as served). The renderer is driven by test/node/render.test.ts against Debian's chromium.
              browserRendering: { binding: 'MINIFLARE_BROWSER_UNUSED' },
            },
          })),
        ],
        test: {
          name: 'workers',
          // A file more than there are cores, each in its own workerd (one per vitest worker, reused from file
          // to file): these files also wait (a fake vendor's real 2 s, a job's polls, timers), and with a file
          // per core a fresh clone's `npm test` kept 1.49 of 2 cores busy (877 CPU-s in 588 s of wall time).
          maxWorkers: Math.max(2, availableParallelism()) + 1,
          sequence: { groupOrder: 0 },
          include: ['test/**/*.test.ts'],
          exclude: ['test/node/**'],
          // One workerd per vitest worker, reused from file to file, instead of one started (and the api worker
          // loaded, ~5 s) per file. Files do not share accounts: each provisions its own organizations and keys.
          isolate: false,
          // Several tests wait on a fake upstream's real 2 s; on a busy 2-core machine 5 s is too little.
          testTimeout: 20_000,
          setupFiles: ['./test/setup/apply-migrations.ts'],
        },
      },
      {
        test: {
          name: 'node',
          // A file more than there are cores. These files keep every core busy (their stacks, bundling and
          // chromium), so packing them otherwise gains nothing: two at a time took as long as three. `npm test`
          // runs this project after the workers project (scripts/test.mjs).
          maxWorkers: Math.max(2, availableParallelism()) + 1,
          sequence: { groupOrder: 1 },
          include: ['test/node/**/*.test.ts'],
          environment: 'node',
          testTimeout: 120_000,
          hookTimeout: 180_000,
          // What a page shows after a click, polled for up to 10 s rather than Vitest's 1 s: on a loaded CI run a
          // database created through the dashboard took longer than a second to be listed (2026-12-02).
          expect: { poll: { timeout: 10_000 } },
          // One stack for the files that need the same one, started when the first asks.
          globalSetup: ['./test/node/support/shared-stack.ts'],
          setupFiles: ['./test/node/support/fresh-connections.ts'],
        },
      },
    ],
  },
});
