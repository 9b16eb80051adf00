import { cloudflareTest, readD1Migrations } from '@cloudflare/vitest-pool-workers';
import { defineConfig } from 'vitest/config';
import { FAKE_SETTINGS, fakeUpstreams } from './test/fakes/index.ts';

const TEST_KEY_ENCRYPTION_KEY = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64');

export default defineConfig({
  test: {
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
            },
          })),
        ],
        test: {
          name: 'workers',
          include: ['test/**/*.test.ts'],
          exclude: ['test/node/**'],
          setupFiles: ['./test/setup/apply-migrations.ts'],
        },
      },
      {
        test: {
          name: 'node',
          include: ['test/node/**/*.test.ts'],
          environment: 'node',
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
