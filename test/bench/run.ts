/**
 * `npm run bench`: the local stack under load, on loopback, in workerd reached directly on its own
 * sockets (no wrangler proxy). Prints requests/s and p50/p99 for
 *   - a bare worker answering the same JSON (the floor of this machine),
 *   - GET /v1/credits (authentication + a wallet read),
 *   - the metered company-by-domain call (authentication, window, hold, upstream, capture, usage row),
 *   - the fake upstream alone,
 * then the metered/floor throughput ratio and the latency the pipeline adds over the upstream.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { Log, LogLevel, Miniflare } from 'miniflare';
import company from '../fixtures/linkedin-company.json' with { type: 'json' };
import { startStack } from '../../scripts/stack';
import { opsClient } from '../../scripts/lib/ops-client';
import { startFakeLinkedin } from './fake-upstream';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);

interface Figures {
  name: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
}

async function load(name: string, url: string, headers: Record<string, string> = {}): Promise<Figures> {
  // A short warm-up so the first isolate start and JIT are not in the figures.
  await autocannon({ url, headers, connections: CONNECTIONS, duration: 2 });
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration: DURATION_S });
  return { name, requestsPerSecond: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx + result.errors };
}

async function startFloor(): Promise<{ url: string; stop: () => Promise<void> }> {
  const body = JSON.stringify({ success: true, message: '', data: company.data });
  const miniflare = new Miniflare({
    log: new Log(LogLevel.WARN),
    host: '127.0.0.1',
    port: 0,
    modules: true,
    script: `const body = ${JSON.stringify(body)}; export default { fetch() { return new Response(body, { headers: { 'content-type': 'application/json' } }); } };`,
    unsafeDirectSockets: [{ host: '127.0.0.1', port: 0 }],
  });
  const url = (await miniflare.unsafeGetDirectURL()).href.replace(/\/$/, '');
  return { url, stop: () => miniflare.dispose() };
}

async function main() {
  const home = mkdtempSync(join(tmpdir(), 'sluice-bench-'));
  const upstream = await startFakeLinkedin();
  const floor = await startFloor();
  const stack = await startStack({
    env: {
      ...process.env,
      SLUICE_HOME: home,
      SLUICE_API_PORT: process.env.SLUICE_API_PORT ?? '18787',
      LINKEDIN_API_KEY: 'bench-key',
      LINKEDIN_API_HOST: 'linkedin-data-api.p.rapidapi.com',
      LINKEDIN_BASE_URL: upstream.url,
    },
    log: (line) => console.error(line),
  });
  try {
    const api = stack.urls.api!;
    const ops = opsClient(api, stack.settings.OPS_TOKEN!);
    const organization = await ops.call<{ id: string }>('POST', '/ops/v1/organizations', { name: 'Bench', plan: 'business' });
    // A ceiling far above what the machine can serve, so the bench measures the pipeline, not the limiter.
    await ops.call('PUT', `/ops/v1/organizations/${organization.id}/plan`, { plan: 'business', rpm: 1_000_000 });
    await ops.call('POST', `/ops/v1/organizations/${organization.id}/wallet/credit`, { purchasedCents: 100_000_000 });
    const workspace = await ops.call<{ id: string }>('POST', '/ops/v1/workspaces', { organizationId: organization.id, name: 'Bench' });
    const key = await ops.call<{ key: string }>('POST', '/ops/v1/keys', { workspaceId: workspace.id, name: 'bench' });
    const auth = { authorization: `Bearer ${key.key}` };

    const rows = [
      await load('bare worker (floor)', floor.url),
      await load('GET /v1/credits', `${api}/v1/credits`, auth),
      await load('metered get-company-by-domain', `${api}/v1/data/linkedin/get-company-by-domain?domain=stripe.com`, auth),
      await load('fake upstream alone', `${upstream.url}/get-company-by-domain?domain=stripe.com`),
    ];
    const [floorRow, , meteredRow, upstreamRow] = rows as [Figures, Figures, Figures, Figures];

    console.log(`\nSluice bench: ${CONNECTIONS} connections, ${DURATION_S} s each, loopback, workerd sockets hit directly (no wrangler proxy)\n`);
    console.log('| target | requests/s | p50 ms | p99 ms | non-2xx |');
    console.log('|---|---:|---:|---:|---:|');
    for (const row of rows) console.log(`| ${row.name} | ${row.requestsPerSecond.toFixed(0)} | ${row.p50} | ${row.p99} | ${row.non2xx} |`);
    console.log(`\nmetered / floor throughput: ${(meteredRow.requestsPerSecond / floorRow.requestsPerSecond).toFixed(2)} (aim: 0.50 or better)`);
    console.log(`added p50 latency (metered p50 - upstream p50): ${(meteredRow.p50 - upstreamRow.p50).toFixed(1)} ms (aim: under 3 ms)`);
    if (rows.some((row) => row.non2xx > 0)) {
      console.log('\nWARNING: some requests did not answer 2xx; the figures above include failures.');
      process.exitCode = 1;
    }
  } finally {
    await stack.stop();
    await floor.stop();
    upstream.server.close();
    rmSync(home, { recursive: true, force: true });
  }
}

await main();
