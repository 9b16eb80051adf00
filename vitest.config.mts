import { cloudflareTest, readD1Migrations } from '@cloudflare/vitest-pool-workers';
import { defineConfig } from 'vitest/config';
import { FAKE_LINKEDIN, linkedinUpstream } from './test/fakes/linkedin-upstream.ts';

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
                LINKEDIN_API_KEY: FAKE_LINKEDIN.key,
                LINKEDIN_API_HOST: FAKE_LINKEDIN.host,
                LINKEDIN_BASE_URL: FAKE_LINKEDIN.baseUrl,
              },
              // Outbound interception: every fetch the worker makes lands in these fakes, never the internet.
              outboundService: async (request: Request) => {
                const { hostname } = new URL(request.url);
                if (hostname === new URL(FAKE_LINKEDIN.baseUrl).hostname) return linkedinUpstream(request);
                return new Response(`no fake upstream for ${hostname}`, { status: 599 });
              },
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
