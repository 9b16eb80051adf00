/** The metered design with no product in it, as workers the bench loads beside the product (`run.ts`, `instructions.ts`). */
import type { WorkerOptions } from 'miniflare';

/**
 * The metered design with no product in it: what a metered call must do, and nothing else, in two
 * shapes, and a balance read. `skeleton` is Sluice's: one object call sets money aside before the upstream is asked (in
 * memory), the upstream's JSON is parsed and wrapped, and a second call stores the charge with its usage
 * row (one SQLite INSERT) before the answer leaves. `skeleton-one-call` stores the charge in the first call,
 * before the upstream is asked, and makes no second call (what a single `meter()` per request costs at
 * best; decisions, "The design's floor, measured", says why Sluice does not do it). `skeleton-gate-fetch`
 * is the one-call shape that keeps every guarantee: the object asks the upstream itself and stores the
 * charge only when it answered 2xx, and the worker parses what it passes back. `skeleton-cached` is Sluice's
 * shape with the response cache's work on a miss (a lookup before the upstream, the answer stored after it,
 * off the response path): locally Miniflare's Cache API runs in the same workerd, so the metered row pays it
 * and only this skeleton compares with it like for like (issue 30 item 5). `skeleton-read` is
 * `/v1/credits` reduced to the same: one call that answers a balance. None checks a key,
 * validates, routes, counts a window, leases, reports to a wallet, writes D1 or sets headers: the metered
 * row can only come near them, so `metered / skeleton` is the product's own work and `skeleton / relay`
 * what the design itself leaves of the aim.
 */
export const SKELETON_MODES = { skeleton: 'two-calls', 'skeleton-cached': 'two-calls-cached', 'skeleton-one-call': 'one-call', 'skeleton-gate-fetch': 'gate-fetch', 'skeleton-read': 'read' };
const SKELETON = `
import { DurableObject } from 'cloudflare:workers';
export class Gate extends DurableObject {
  lease = Number.MAX_SAFE_INTEGER;
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec('CREATE TABLE IF NOT EXISTS charges (id TEXT PRIMARY KEY, units INTEGER NOT NULL, usage TEXT NOT NULL)');
  }
  meter(units, usage) {
    this.lease -= units;
    if (usage) this.#store(units, usage);
    return { kind: 'held', lease: this.lease };
  }
  read() {
    return { purchasedUnits: this.lease, subscriptionUnits: 0 };
  }
  async fetchAndCharge(units, usage, url) {
    this.lease -= units;
    const upstream = await fetch(url);
    const body = await upstream.text();
    if (upstream.ok) this.#store(units, usage);
    else this.lease += units;
    return { body, lease: this.lease };
  }
  settle(units, usage) {
    this.#store(units, usage);
    return { kind: 'captured', lease: this.lease };
  }
  #store(units, usage) {
    this.ctx.storage.sql.exec('INSERT INTO charges (id, units, usage) VALUES (?, ?, ?)', usage.id, units, JSON.stringify(usage));
  }
}
/** The upstream asked by the object, which stores the charge only on a 2xx. */
async function askedByGate(gate, usage, env) {
  const answer = await gate.fetchAndCharge(100, usage, env.UPSTREAM);
  return { data: JSON.parse(answer.body).data, lease: answer.lease };
}
/** The upstream asked by the worker between \`meter\` and \`settle\`, or after a \`meter\` that stored the charge. */
async function askedByWorker(gate, usage, env, ctx, started) {
  const oneCall = env.MODE === 'one-call';
  const entry = env.MODE === 'two-calls-cached' ? 'https://cache.bench/' + usage.id : null;
  const held = await gate.meter(100, oneCall ? usage : null);
  if (entry) await caches.default.match(entry);
  const upstream = await fetch(env.UPSTREAM);
  const { data } = await upstream.json();
  if (entry) ctx.waitUntil(caches.default.put(entry, new Response(JSON.stringify({ data }), { headers: { 'content-type': 'application/json', 'cache-control': 'max-age=86400' } })));
  const settled = oneCall ? held : await gate.settle(100, { ...usage, latencyMs: Date.now() - started });
  return { data, lease: settled.lease };
}
export default {
  async fetch(request, env, ctx) {
    const started = Date.now();
    const gate = env.GATE.get(env.GATE.idFromName('bench'));
    if (env.MODE === 'read') return Response.json({ success: true, data: await gate.read() });
    const id = crypto.randomUUID();
    const usage = { id, requestId: id, organizationId: 'org_bench', workspaceId: 'ws_bench', keyId: 'key_bench', operation: 'linkedin.get-company-by-domain', status: 200, errorCode: null, costUnits: 100, cached: false, latencyMs: 0, createdAt: new Date().toISOString() };
    const { data, lease } = env.MODE === 'gate-fetch' ? await askedByGate(gate, usage, env) : await askedByWorker(gate, usage, env, ctx, started);
    return Response.json({ success: true, data, meta: { costCents: 1, purchasedBalanceCents: lease, subscriptionRemainingCents: 0, cached: false, latencyMs: Date.now() - started } });
  },
};
`;

/** One of the skeleton's shapes as a worker of its own, listening on a port of its own. */
export function skeletonWorker(name: string, mode: string, upstreamUrl: string): WorkerOptions & { name: string } {
  return {
    name,
    modules: true,
    compatibilityDate: '2026-04-20',
    bindings: { UPSTREAM: `${upstreamUrl}/get-company-by-domain?domain=stripe.com`, MODE: mode },
    durableObjects: { GATE: { className: 'Gate', useSQLite: true } },
    script: SKELETON,
    unsafeDirectSockets: [{ host: '127.0.0.1', port: 0 }],
  };
}
