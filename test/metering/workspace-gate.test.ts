import { createExecutionContext, runDurableObjectAlarm, runInDurableObject, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { VIEW_FRESH_MS } from '../../durable-objects/credit-view';
import { IDLE_LEASE_MS, KEY_USE_REPORT_MS, RECALL_IDLE_MS, REPORT_MS, WorkspaceGate } from '../../durable-objects/workspace-gate';
import type { UsageRow } from '../../src/core/usage';
import { FIRST_RETRY_MS, LeaseBook } from '../../durable-objects/lease-book';
import { OrgWallet } from '../../durable-objects/org-wallet';
import type { WalletLink } from '../../durable-objects/wallet-link';
import type { SyncMessage } from '../../src/core/protocols/lease';
import { HOLD_GRACE_MS, type MeterAsk, type SettleAnswer } from '../../src/core/protocols/gate';
import { findPrincipal } from '../../src/services/accounts';
import { clock } from '../../src/core/clock';
import type { Env } from '../../src/core/config';
import { ApiError } from '../../src/core/errors';
import { gateOf } from '../../src/services/gate';
import { hashKey } from '../../src/core/keys';
import { execute, type Call } from '../../src/services/pipeline';
import { settledStatement } from '../../src/services/wallet';
import { OPERATIONS } from '../../src/operations';
import type { Operation } from '../../src/core/operation';
import { losingSettleAnswers } from '../support/lost-answers';
import { bearer, call, companyByDomain, credit, eventually, json, ops, provision, tool, wallet, type Provisioned } from '../support/api';

const CENT = 10_000;
const companyByDomainOperation = OPERATIONS.find((operation) => operation.name === 'get-company-by-domain')!;

afterEach(() => {
  vi.restoreAllMocks();
});

/** A namespace whose stubs pass each method call through `around`, with the method's name, the call itself and its arguments. */
function intercepted<T>(namespace: T, around: (method: string, call: () => unknown, args: unknown[]) => unknown): T {
  const inner = namespace as unknown as DurableObjectNamespace;
  return {
    idFromName: (value: string) => inner.idFromName(value),
    get: (id: DurableObjectId) => {
      const stub = inner.get(id);
      return new Proxy(stub, {
        get(target, property) {
          const value = Reflect.get(target, property);
          if (typeof property !== 'string' || typeof value !== 'function') return value;
          return (...args: unknown[]) => around(property, () => (target as unknown as Record<string, (...rest: unknown[]) => unknown>)[property]!(...args), args);
        },
      });
    },
  } as unknown as T;
}

/** A namespace whose stubs write each method called into `log`, as `<name>.<method>`. */
function counted<T>(namespace: T, name: string, log: string[]): T {
  return intercepted(namespace, (method, call) => {
    log.push(`${name}.${method}`);
    return call();
  });
}

/** Every message the wallet's `sync` is sent from now on, with the workspace that sent it; each is still applied. */
function watchSyncs(): Array<{ workspaceId: string; message: SyncMessage }> {
  const sync = OrgWallet.prototype.sync;
  const sent: Array<{ workspaceId: string; message: SyncMessage }> = [];
  vi.spyOn(OrgWallet.prototype, 'sync').mockImplementation(function (this: OrgWallet, workspaceId: string, message: SyncMessage) {
    sent.push({ workspaceId, message });
    return sync.call(this, workspaceId, message);
  });
  return sent;
}

async function callFor(account: Provisioned, bindings: Env = env): Promise<{ call: Call; context: ExecutionContext }> {
  const principal = await findPrincipal(env.DB, await hashKey(account.key));
  const context = createExecutionContext();
  return { call: { env: bindings, principal: principal!, requestId: 'req_test', waitUntil: (promise) => context.waitUntil(promise) }, context };
}

/** The captures in an organization's wallet's ledger: one per success it has applied. */
function captureCount(organizationId: string): Promise<number> {
  return runInDurableObject(env.ORG_WALLET.get(env.ORG_WALLET.idFromName(organizationId)), (_, state) =>
    state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM ledger WHERE kind = 'capture'").one().n,
  );
}

/** A pay-as-you-go workspace with a dollar, after one call (to `domain`) that its gate reported and the wallet applied. */
async function afterOneReportedCall(domain: string): Promise<{ account: Provisioned; gate: ReturnType<typeof gateOf>; captures: () => Promise<number> }> {
  const account = await provision();
  await ops('PUT', `/organizations/${account.organizationId}/plan`, { plan: 'payg', rpm: 1_000 });
  await credit(account.organizationId, { purchasedCents: 100 });
  const captures = () => captureCount(account.organizationId);
  expect((await companyByDomain(account.key, domain)).status).toBe(200);
  expect(await eventually(captures, (n) => n === 1)).toBe(1);
  return { account, gate: gateOf(env, account.workspaceId), captures };
}

/** `afterOneReportedCall`, once the gate has also applied the wallet's reply (nothing outgoing). */
async function afterOneAcknowledgedCall(domain: string): Promise<Awaited<ReturnType<typeof afterOneReportedCall>>> {
  const reported = await afterOneReportedCall(domain);
  const acknowledged = () => runInDurableObject(reported.gate, (instance) => (instance as unknown as { book: LeaseBook }).book.outgoing === null);
  expect(await eventually(acknowledged, (done) => done)).toBe(true);
  return reported;
}

/** A usage row of `account`'s key, as `meter` is brought it (status 0) or as a call ended. */
function rowOf(account: Provisioned, id: string, requestId: string, ended: { status: number; costUnits: number } = { status: 0, costUnits: 0 }): UsageRow {
  return {
    id, requestId, organizationId: account.organizationId, workspaceId: account.workspaceId, keyId: account.keyId, operation: 'linkedin.get-company-by-domain',
    errorCode: null, cached: false, latencyMs: 1, createdAt: new Date(clock.now()).toISOString(), ...ended,
  };
}

/** An operation whose upstream answers only when the test says so. */
function gated(): { operation: Operation; started: Promise<void>; finish: () => void } {
  let markStarted!: () => void;
  let finish!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const answered = new Promise<void>((resolve) => (finish = resolve));
  const operation = {
    ...companyByDomainOperation,
    call: async (...args: Parameters<Operation['call']>) => {
      markStarted();
      await answered;
      return companyByDomainOperation.call(...args);
    },
  } as Operation;
  return { operation, started, finish };
}

describe('the workspace gate on the hot path', () => {
  it('costs a metered call one gate message before the upstream and one after, and no wallet or D1 call', async () => {
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 100 });
    // The first call of a workspace draws its lease; the figures are those of the calls after it.
    expect((await companyByDomain(account.key, 'warm.example.com')).status).toBe(200);

    const log: string[] = [];
    const database = new Proxy(env.DB, {
      get(target, property) {
        log.push(`db.${String(property)}`);
        const value = Reflect.get(target, property);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const bindings = { ...env, DB: database, WORKSPACE_GATE: counted(env.WORKSPACE_GATE, 'gate', log), ORG_WALLET: counted(env.ORG_WALLET, 'wallet', log) } as Env;
    const operation = {
      ...companyByDomainOperation,
      call: (...args: Parameters<Operation['call']>) => {
        log.push('upstream');
        return companyByDomainOperation.call(...args);
      },
    } as Operation;
    for (const domain of ['one.example.com', 'two.example.com', 'three.example.com']) {
      log.length = 0;
      const { call: metered, context } = await callFor(account, bindings);
      await execute(operation, { domain }, 'query', metered);
      await waitOnExecutionContext(context);
      expect(log).toEqual(['gate.meter', 'upstream', 'gate.settle']);
    }
  });

  it("sends a call's usage row once: `meter` brings it, `settle` only how the call ended, and the row stored is that one completed", async () => {
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 100 });
    const sent = new Map<string, unknown[]>();
    const gates = intercepted(env.WORKSPACE_GATE, (method, call, args) => {
      sent.set(method, args);
      return call();
    });
    const bindings = { ...env, WORKSPACE_GATE: gates } as Env;
    const { call: metered, context } = await callFor(account, bindings);
    await execute(companyByDomainOperation, { domain: 'once.example.com' }, 'query', metered);
    await waitOnExecutionContext(context);

    const brought = (sent.get('meter')![0] as MeterAsk).usage;
    const [holdId, actualUnits, ended] = sent.get('settle')!;
    expect([holdId, actualUnits]).toEqual([brought.id, CENT]);
    expect(ended).toEqual({ status: 200, errorCode: null, costUnits: CENT, cached: false, latencyMs: expect.any(Number), createdAt: expect.any(String) });
    const stored = await eventually(
      () => env.DB.prepare('SELECT id, request_id, key_id, operation, status, cost_units FROM usage WHERE workspace_id = ?').bind(account.workspaceId).all(),
      (result) => result.results.length === 1,
    );
    expect(stored.results).toEqual([{ id: brought.id, request_id: 'req_test', key_id: account.keyId, operation: brought.operation, status: 200, cost_units: CENT }]);
  });

  it('asks for the whole usage row when it no longer has the one `meter` brought (it restarted), and bills the call once it has it', async () => {
    const { account, gate, captures } = await afterOneReportedCall('before.example.com');
    await runInDurableObject(gate, async (_, state) => {
      const usage: UsageRow = {
        id: `use_${'m'.repeat(24)}`, requestId: 'req_meter', organizationId: account.organizationId, workspaceId: account.workspaceId, keyId: account.keyId,
        operation: 'linkedin.get-company-by-domain', status: 0, errorCode: null, costUnits: 0, cached: false, latencyMs: 0, createdAt: new Date(clock.now()).toISOString(),
      };
      const first = new WorkspaceGate(state, env as never);
      await state.blockConcurrencyWhile(async () => {});
      expect((await first.meter({ keyId: account.keyId, amountUnits: CENT, ttlMs: 1_000, usage })).kind).toBe('held');
      const restarted = new WorkspaceGate(state, env as never);
      await state.blockConcurrencyWhile(async () => {});
      const ended = { status: 200, errorCode: null, costUnits: CENT, cached: false, latencyMs: 5, createdAt: usage.createdAt };
      expect(await restarted.settle(usage.id, CENT, ended)).toEqual({ kind: 'row_needed' });
      expect(await restarted.settle(usage.id, CENT, { ...usage, ...ended })).toMatchObject({ kind: 'captured', balance: { purchasedUnits: 98 * CENT } });
      await restarted.flush();
    });
    expect(await captures()).toBe(2);
  });

  it("asks once more for a success's settle whose answer was lost on the way back, and answers 200, billed once", async () => {
    const { account, gate, captures } = await afterOneReportedCall('before.example.com');
    const settles = losingSettleAnswers(1);
    const response = await companyByDomain(account.key, 'answer-lost.example.com');
    expect(response.status).toBe(200);
    expect((await json(response)).meta.costCents).toBe(1);
    expect(settles.lost).toBe(1);
    await runInDurableObject(gate, (instance) => (instance as unknown as { flush(): Promise<void> }).flush());
    expect(await captures()).toBe(2);
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(98);
  });

  it('shows a late capture of a charge the wallet has already once, as it charges it once', async () => {
    const { account, gate, captures } = await afterOneAcknowledgedCall('before.example.com');
    await runInDurableObject(gate, async (instance) => {
      const live = instance as unknown as WorkspaceGate;
      const usage: UsageRow = {
        id: `use_${'l'.repeat(24)}`, requestId: 'req_late', organizationId: account.organizationId, workspaceId: account.workspaceId, keyId: account.keyId,
        operation: 'linkedin.get-company-by-domain', status: 0, errorCode: null, costUnits: 0, cached: false, latencyMs: 0, createdAt: new Date(clock.now()).toISOString(),
      };
      const ended = { status: 200, errorCode: null, costUnits: CENT, cached: false, latencyMs: 5, createdAt: usage.createdAt };
      expect((await live.meter({ keyId: account.keyId, amountUnits: CENT, ttlMs: 1_000, usage })).kind).toBe('held');
      expect((await live.settle(usage.id, CENT, ended)).kind).toBe('captured');
      // The charge leaves for the wallet, which takes it.
      await live.flush();
      // The settle asked again, its answer lost: the gate no longer has the hold nor the charge, and takes it anew.
      expect((await live.settle(usage.id, CENT, { ...usage, ...ended })).kind).toBe('captured');
      // Read at once, before the report that tells the wallet of it: 100 less the two calls, not three.
      expect(await live.credits(account.keyId, account)).toMatchObject({ revoked: false, balance: { purchasedUnits: 98 * CENT } });
    });
    expect(await captures()).toBe(2);
  });

  it("answers 200, billed once, for a success whose settle's answer was lost twice: its charge is found where it went", async () => {
    // Acknowledged, not only reported: with the first call's reply still on its way, the balance read counts that
    // call twice for a moment (WalletLink.read: "what is shown, never what is charged").
    const { account, gate, captures } = await afterOneAcknowledgedCall('before.example.com');
    const settles = losingSettleAnswers(2);
    const response = await companyByDomain(account.key, 'answer-lost-twice.example.com');
    expect(response.status).toBe(200);
    // No settle answered with the balance after the charge: it is read as /v1/credits reads it.
    expect((await json(response)).meta).toMatchObject({ costCents: 1, purchasedBalanceCents: 98 });
    expect(settles.lost).toBe(2);
    await runInDurableObject(gate, (instance) => (instance as unknown as { flush(): Promise<void> }).flush());
    expect(await captures()).toBe(2);
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(98);
  });

  it("answers 200 for a success whose settle's answer was lost after its charge left the gate, though no money is left to take it again", async () => {
    const account = await provision();
    await ops('PUT', `/organizations/${account.organizationId}/plan`, { plan: 'payg', rpm: 1_000 });
    await credit(account.organizationId, { purchasedCents: 1 });
    const settles = losingSettleAnswers(1, { handedOn: true });
    const response = await companyByDomain(account.key, 'answer-lost-late.example.com');
    expect(response.status).toBe(200);
    expect(settles.lost).toBe(1);
    expect(await captureCount(account.organizationId)).toBe(1);
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(0);
  });

  it('looks the response cache up while the gate meters: the lookup does not wait for the money to be held', async () => {
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 100 });
    expect((await companyByDomain(account.key, 'warm.example.com')).status).toBe(200);
    const log: string[] = [];
    let lookedUp!: () => void;
    const lookup = new Promise<void>((resolve) => (lookedUp = resolve));
    vi.spyOn(caches.default, 'match').mockImplementation(function (this: Cache, ...args: Parameters<Cache['match']>) {
      log.push('cache.match');
      lookedUp();
      return Cache.prototype.match.apply(this, args);
    });
    // A gate whose `meter` answers once the lookup has begun, or after a second when it never does.
    const gates = intercepted(env.WORKSPACE_GATE, async (method, call) => {
      if (method !== 'meter') return call();
      log.push('gate.meter');
      await Promise.race([lookup, new Promise((resolve) => setTimeout(resolve, 1_000))]);
      const answer = await call();
      log.push('gate.meter answered');
      return answer;
    });
    const bindings = { ...env, WORKSPACE_GATE: gates } as Env;
    const { call: metered, context } = await callFor(account, bindings);
    const outcome = await execute(companyByDomainOperation, { domain: 'overlap.example.com' }, 'query', metered);
    await waitOnExecutionContext(context);
    expect(outcome.meta.cached).toBe(false);
    expect(log).toEqual(['gate.meter', 'cache.match', 'gate.meter answered']);
  });

  it('keeps a 429 flood off the gate: once the window refused, this isolate refuses the workspace by itself until the minute ends', async () => {
    const windowStart = Date.UTC(2030, 0, 1, 12, 0, 0);
    const now = vi.spyOn(clock, 'now').mockReturnValue(windowStart + 15_000);
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 100 });
    expect((await ops('PUT', `/organizations/${account.organizationId}/plan`, { plan: 'payg', rpm: 3 })).status).toBe(200);
    const log: string[] = [];
    const bindings = { ...env, WORKSPACE_GATE: counted(env.WORKSPACE_GATE, 'gate', log), ORG_WALLET: counted(env.ORG_WALLET, 'wallet', log) } as Env;
    const send = async (domain: string): Promise<string> => {
      const { call: metered, context } = await callFor(account, bindings);
      try {
        await execute(companyByDomainOperation, { domain }, 'query', metered);
        return 'ok';
      } catch (error) {
        return error instanceof ApiError ? error.code : String(error);
      } finally {
        await waitOnExecutionContext(context);
      }
    };

    for (const domain of ['a.example.com', 'b.example.com', 'c.example.com']) expect(await send(domain)).toBe('ok');
    // The gate itself gives the first refusal.
    log.length = 0;
    expect(await send('d.example.com')).toBe('RATE_LIMITED');
    expect(log).toEqual(['gate.meter']);

    log.length = 0;
    const flood = await Promise.all(Array.from({ length: 50 }, (_, index) => send(`flood${index}.example.com`)));
    expect(new Set(flood)).toEqual(new Set(['RATE_LIMITED']));
    expect(log).toEqual([]);

    // The next minute reaches the gate again.
    now.mockReturnValue(windowStart + 60_000);
    expect(await send('next.example.com')).toBe('ok');
    expect(log).toContain('gate.meter');
  });

  it("answers /v1/credits from the gate, reading the wallet once per VIEW_FRESH_MS; a top-up shows from the very next request", async () => {
    const start = Date.now();
    const now = vi.spyOn(clock, 'now').mockReturnValue(start);
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 100 });
    const sibling = await ops('POST', '/workspaces', { organizationId: account.organizationId, name: 'sibling' });
    const siblingKey = (await ops('POST', '/keys', { workspaceId: sibling.body.data.id })).body.data.key as string;
    const purchased = async () => (await json(await call('/v1/credits', bearer(account.key)))).data.purchasedBalanceCents as number;

    expect(await purchased()).toBe(100);
    // This workspace's own spending shows at once.
    expect((await companyByDomain(account.key, 'own.example.com')).status).toBe(200);
    expect(await purchased()).toBe(99);
    // A top-up tells the gate, which reads the wallet again on the next request.
    await credit(account.organizationId, { purchasedCents: 50 });
    expect(await purchased()).toBe(149);
    // A sibling's spending, reported to the wallet: within VIEW_FRESH_MS of its last read the gate answers
    // from the figures it holds (the wallet is not asked: one object call per request), then reads again.
    expect((await companyByDomain(siblingKey, 'sibling.example.com')).status).toBe(200);
    await gateOf(env, sibling.body.data.id).flush();
    expect(await purchased()).toBe(149);
    now.mockReturnValue(start + VIEW_FRESH_MS);
    expect(await purchased()).toBe(148);
  });

  it('bills a success exactly once when its capture arrives after its hold expired', async () => {
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 5 });
    const { operation, started, finish } = gated();
    const settled: string[] = [];
    const gates = intercepted(env.WORKSPACE_GATE, async (method, call) => {
      const answer = await call();
      if (method === 'settle') settled.push((answer as SettleAnswer).kind);
      return answer;
    });
    const bindings = { ...env, WORKSPACE_GATE: gates } as Env;
    const { call: metered, context } = await callFor(account, bindings);
    const pending = execute(operation, { domain: 'late.example.com' }, 'query', metered);
    await started;

    // The call outlives its hold: the alarm gives the money back to the lease, and drops the row `meter` brought.
    vi.spyOn(clock, 'now').mockReturnValue(Date.now() + 30_000 + HOLD_GRACE_MS + 1);
    await runDurableObjectAlarm(gateOf(env, account.workspaceId));
    finish();
    const outcome = await pending;
    await waitOnExecutionContext(context);
    expect(outcome.meta).toMatchObject({ costCents: 1, purchasedBalanceCents: 4 });
    // Its outcome alone could not settle it: the whole row went after it.
    expect(settled).toEqual(['row_needed', 'captured']);

    const { balance, ledger } = await settledStatement(env, account.organizationId);
    expect(balance).toMatchObject({ purchasedUnits: 40_000, heldUnits: 0 });
    expect(ledger.filter((entry) => entry.kind === 'capture')).toHaveLength(1);
    const rows = await eventually(
      () => env.DB.prepare('SELECT status, cost_units AS cost FROM usage WHERE workspace_id = ?').bind(account.workspaceId).all(),
      (result) => result.results.length === 1,
    );
    expect(rows.results).toEqual([{ status: 200, cost: 10_000 }]);
  });

  it('refuses, unbilled, a success whose hold expired and whose money another call has spent since', async () => {
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 1 });
    const { operation, started, finish } = gated();
    const { call: metered, context } = await callFor(account);
    const pending = execute(operation, { domain: 'late.example.com' }, 'query', metered).then(() => undefined, (error: unknown) => error);
    await started;
    vi.spyOn(clock, 'now').mockReturnValue(Date.now() + 30_000 + HOLD_GRACE_MS + 1);
    await runDurableObjectAlarm(gateOf(env, account.workspaceId));
    // The cent came back to the lease; another call spends it.
    expect((await companyByDomain(account.key, 'other.example.com')).status).toBe(200);
    finish();
    const error = await pending;
    await waitOnExecutionContext(context);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'INSUFFICIENT_CREDITS', status: 402 });

    const { balance, ledger } = await settledStatement(env, account.organizationId);
    expect(balance).toMatchObject({ purchasedUnits: 0, heldUnits: 0 });
    expect(ledger.filter((entry) => entry.kind === 'capture')).toHaveLength(1);
    const rows = await eventually(
      () => env.DB.prepare('SELECT status, cost_units AS cost FROM usage WHERE workspace_id = ? ORDER BY status').bind(account.workspaceId).all(),
      (result) => result.results.length === 2,
    );
    expect(rows.results).toEqual([{ status: 200, cost: 10_000 }, { status: 402, cost: 0 }]);
  });

  it('answers 409 CONFLICT with retryAfter, never 402, while calls in flight hold money the balance has', async () => {
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 10 });
    expect((await call('/v1/credits', bearer(account.key))).status).toBe(200);
    // 30 concurrent calls whose upstream never answers: the 20 the holds block answer at once; then the
    // clients of the 10 held calls go away (no timer: a loaded machine must not change what is asserted).
    const leave = new AbortController();
    let answered = 0;
    const responses = await Promise.all(
      Array.from({ length: 30 }, () =>
        call('/v1/data/linkedin/get-company-by-domain?domain=hang.com', { ...bearer(account.key), signal: leave.signal }).then((response) => {
          if (++answered === 20) leave.abort();
          return response;
        }),
      ),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 402)).toEqual([]);
    expect(statuses.filter((status) => status === 502)).toHaveLength(10);
    const conflicts = responses.filter((response) => response.status === 409);
    expect(conflicts).toHaveLength(20);
    const { error } = await json(conflicts[0]!);
    expect(error).toMatchObject({ code: 'CONFLICT', retryAfter: 1 });
    expect(conflicts[0]!.headers.get('retry-after')).toBe('1');
    expect(await wallet(account.organizationId)).toMatchObject({ purchasedBalanceCents: 10, heldCents: 0 });
  });

  /** Two workspaces of an organization with 8 cents: the first draws a lease of 2 and spends 1, the sibling spends 6. */
  async function oneCentInAnIdleLease(start: number) {
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 8 });
    const sibling = await ops('POST', '/workspaces', { organizationId: account.organizationId, name: 'sibling' });
    const siblingKey = (await ops('POST', '/keys', { workspaceId: sibling.body.data.id })).body.data.key as string;
    expect((await companyByDomain(account.key, `first-${start}.example.com`)).status).toBe(200);
    for (let spent = 0; spent < 6; spent++) expect((await companyByDomain(siblingKey, `s${spent}.example.com`)).status).toBe(200);
    return { account, siblingKey };
  }

  it('gives a lease back when a short sibling recalls it, once no call has asked for money there for a second', async () => {
    // Idleness is on the injectable clock, so the test, not the machine's speed, says when a lease is idle.
    const start = Date.now();
    const now = vi.spyOn(clock, 'now').mockReturnValue(start);
    const { siblingKey } = await oneCentInAnIdleLease(start);
    // The last cent sits in the first workspace's lease, drawn on just now: it stays there, and the sibling
    // is told to retry, not to top up.
    const blocked = await companyByDomain(siblingKey, 'last.example.com');
    expect(blocked.status).toBe(409);

    // A second later that lease is idle: the sibling's call recalls it and is served at once, with no alarm run.
    now.mockReturnValue(start + RECALL_IDLE_MS + 100);
    expect((await companyByDomain(siblingKey, 'last.example.com')).status).toBe(200);
    expect((await companyByDomain(siblingKey, 'after.example.com')).status).toBe(402);
  });

  it('returns a lease nobody recalls to the wallet by itself after IDLE_LEASE_MS, not before', async () => {
    const start = Date.now();
    const now = vi.spyOn(clock, 'now').mockReturnValue(start);
    const { account } = await oneCentInAnIdleLease(start);
    // This workspace's lease as the wallet records it (the operator's statement would have every gate return its lease first).
    const held = () =>
      runInDurableObject(env.ORG_WALLET.get(env.ORG_WALLET.idFromName(account.organizationId)), (_, state) =>
        state.storage.sql.exec<{ units: number }>('SELECT subscription_units + purchased_units AS units FROM leases WHERE workspace_id = ?', account.workspaceId).one().units,
      );
    now.mockReturnValue(start + IDLE_LEASE_MS - 100);
    await runDurableObjectAlarm(gateOf(env, account.workspaceId));
    expect(await held()).toBeGreaterThan(0);
    now.mockReturnValue(start + IDLE_LEASE_MS + 100);
    // The gate's own alarm is due (real time) within a moment of the last one: it may be the one that runs
    // now, in which case there is none left to run here, so the lease is awaited rather than read once.
    await runDurableObjectAlarm(gateOf(env, account.workspaceId));
    expect(await eventually(held, (units) => units === 0)).toBe(0);
  });

  it("tops a busy workspace's lease up with the reports it sends anyway, so after its first call none waits for a draw; from plenty only", async () => {
    // Each call REPORT_MS after the last on the injectable clock, so each is reported in the turn that settles it.
    const start = Date.now();
    const now = vi.spyOn(clock, 'now').mockReturnValue(start);
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 1_000 });
    const sent = watchSyncs();
    const messagesOf = (workspaceId: string) => sent.filter((sync) => sync.workspaceId === workspaceId).map((sync) => sync.message);
    // A draw asks for 20 calls' worth: 45 calls run through more than two leases of it.
    for (let n = 0; n < 45; n++) {
      now.mockReturnValue(start + n * REPORT_MS);
      expect((await companyByDomain(account.key, `busy${n}.example.com`)).status).toBe(200);
    }
    expect(messagesOf(account.workspaceId).filter((message) => message.needUnits > 0)).toHaveLength(1);
    expect(messagesOf(account.workspaceId).filter((message) => message.needUnits === 0 && message.targetUnits > 0).length).toBeGreaterThan(0);
    // All 45 calls' charges reached the wallet: 45 cents spent, whatever the leases hold.
    expect(await eventually(async () => (await wallet(account.organizationId)).purchasedBalanceCents, (cents) => cents === 955)).toBe(955);

    // With 50 cents, a top-up of 20 calls' worth would take more than a sibling's share: none is granted,
    // the money stays where any workspace's call can draw it, and this workspace's calls draw as they need.
    const short = await provision();
    await credit(short.organizationId, { purchasedCents: 50 });
    for (let n = 0; n < 25; n++) {
      now.mockReturnValue(start + (45 + n) * REPORT_MS);
      expect((await companyByDomain(short.key, `short${n}.example.com`)).status).toBe(200);
    }
    expect(messagesOf(short.workspaceId).filter((message) => message.needUnits > 0).length).toBeGreaterThan(1);
  });

  it('asks for no top-up in a message that gives the lease back, whatever the turn asked for', async () => {
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 1_000 });
    expect((await companyByDomain(account.key, 'one.example.com')).status).toBe(200);
    const sent = watchSyncs();
    const gate = gateOf(env, account.workspaceId);
    await runInDurableObject(gate, (instance) => (instance as unknown as { link: WalletLink }).link.exchange(() => ({ need: 0, target: 50 * CENT }), true));
    // The call's own report may go first, in the same turn of the queue.
    const givingBack = sent.filter((sync) => sync.workspaceId === account.workspaceId && sync.message.giveBack.purchasedUnits > 0).map((sync) => sync.message);
    expect(givingBack).toHaveLength(1);
    expect(givingBack[0]!.targetUnits).toBe(0);
    const held = await runInDurableObject(env.ORG_WALLET.get(env.ORG_WALLET.idFromName(account.organizationId)), (_, state) =>
      state.storage.sql.exec<{ units: number }>('SELECT subscription_units + purchased_units AS units FROM leases WHERE workspace_id = ?', account.workspaceId).one().units,
    );
    expect(held).toBe(0);
  });

  it("reports a quiet workspace's call to the wallet in the turn that stored it, and batches the calls that follow within REPORT_MS behind the alarm", async () => {
    // Report pacing is on the injectable clock; the alarm's time is real time.
    const start = Date.now();
    const now = vi.spyOn(clock, 'now').mockReturnValue(start);
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 100 });
    const gate = gateOf(env, account.workspaceId);
    const captures = () => captureCount(account.organizationId);
    /** The gate's messages the wallet has applied (each carries the next sequence number). */
    const messages = () =>
      runInDurableObject(env.ORG_WALLET.get(env.ORG_WALLET.idFromName(account.organizationId)), (_, state) =>
        state.storage.sql.exec<{ seq: number }>('SELECT last_seq AS seq FROM leases WHERE workspace_id = ?', account.workspaceId).one().seq,
      );
    /**
     * Makes a call and answers the report alarm it left behind, null when none: an alarm due within REPORT_MS of
     * the call's end. The key's use arms one KEY_USE_REPORT_MS after the call began (real time), which a loaded
     * machine can bring within REPORT_MS of the end: that one is not a report's. One found is described with the
     * gate's line to the wallet, so a failure says why it was armed.
     */
    const reportAlarmLeft = async (domain: string) => {
      // An alarm armed before the call (the key use of a call before it, KEY_USE_REPORT_MS after that one began, which a
      // loaded machine brings this close: a clean clone's CI saw it) is not this call's.
      const armedBefore = await runInDurableObject(gate, (_, state) => state.storage.getAlarm());
      const began = Date.now();
      expect((await companyByDomain(account.key, domain)).status).toBe(200);
      const ended = Date.now();
      return runInDurableObject(gate, async (instance, state) => {
        const alarmAt = (await state.storage.getAlarm()) ?? Infinity;
        if (alarmAt > ended + REPORT_MS || alarmAt >= began + KEY_USE_REPORT_MS || alarmAt === armedBefore) return null;
        const { book } = instance as unknown as { book: LeaseBook };
        return `an alarm ${alarmAt - ended} ms after a call of ${ended - began} ms; a message undelivered: ${book.delivery !== null}, one outgoing: ${book.outgoing !== null}, charges unsent: ${book.hasUnsent()}`;
      });
    };

    // The workspace's first call has nothing before it: it is reported at once, and no report alarm is armed,
    // nor one that fired at once (the report an alarm would have sent lands all the same).
    // This gate's alarms: a workerd serves file after file (isolate: false), and the objects of files before go on
    // running theirs through the same prototype.
    const alarms = vi.spyOn(WorkspaceGate.prototype, 'alarm');
    const alarmsOfThisGate = () => alarms.mock.contexts.filter((instance) => (instance as unknown as { ctx: DurableObjectState }).ctx.id.equals(gate.id)).length;
    expect(await reportAlarmLeft('first.example.com')).toBeNull();
    expect(await eventually(captures, (n) => n === 1)).toBe(1);
    expect(alarmsOfThisGate()).toBe(0);

    // Calls within REPORT_MS of a report wait for the alarm and go together: ten calls one after another
    // (at one instant of the injectable clock) take a message or a few (one per REPORT_MS of real time,
    // when the alarm fires between them), not one each.
    const messagesBefore = await messages();
    const busySince = Date.now();
    for (let n = 0; n < 10; n++) expect((await companyByDomain(account.key, `busy${n}.example.com`)).status).toBe(200);
    const busyFor = Date.now() - busySince;
    await runDurableObjectAlarm(gate);
    expect(await eventually(captures, (n) => n === 11)).toBe(11);
    // At most one message per REPORT_MS of real time (the alarm's), and the one run here: a loaded machine that
    // takes longer over the ten calls lets more alarms fire between them, never one per call while they come fast.
    expect((await messages()) - messagesBefore).toBeLessThanOrEqual(Math.min(10, Math.floor(busyFor / REPORT_MS) + 2));
    // The gate's own alarm may have fired beside the one run here, its reply still on its way once the wallet
    // has the captures: a call whose report queued behind it would find its charge waiting when that report
    // ends, and be batched behind the alarm. So the reply is awaited in the gate too.
    const acknowledged = () => runInDurableObject(gate, (instance) => (instance as unknown as { book: LeaseBook }).book.outgoing === null);
    expect(await eventually(acknowledged, (done) => done)).toBe(true);

    // REPORT_MS after the last report, the workspace is quiet again: the next call goes at once.
    now.mockReturnValue(start + REPORT_MS);
    alarms.mockClear();
    expect(await reportAlarmLeft('quiet.example.com')).toBeNull();
    expect(await eventually(captures, (n) => n === 12)).toBe(12);
    expect(alarmsOfThisGate()).toBe(0);
  });

  it('restarts after a reply it had not stored: sends that message again, which the wallet applies once, and shows the right balance meanwhile', async () => {
    const { account, gate, captures } = await afterOneReportedCall('before.example.com');
    await runInDurableObject(gate, async (_, state) => {
      // The wallet took the report and the gate applied its reply, without a commit of its own for it: a
      // restart now (a new object over the same storage) finds that message still outgoing.
      expect(new LeaseBook(state.storage.sql).outgoing?.charges).toHaveLength(1);
      const restarted = new WorkspaceGate(state, env as never);
      const usage: UsageRow = {
        id: `use_${'r'.repeat(24)}`, requestId: 'req_restart', organizationId: account.organizationId, workspaceId: account.workspaceId, keyId: account.keyId,
        operation: 'linkedin.get-company-by-domain', status: 0, errorCode: null, costUnits: 0, cached: false, latencyMs: 1, createdAt: new Date(clock.now()).toISOString(),
      };
      expect((await restarted.meter({ keyId: account.keyId, amountUnits: CENT, ttlMs: 1_000, usage })).kind).toBe('held');
      // Before anything is sent again: the figures and the lease of the same earlier reply, less both calls.
      expect(await restarted.settle(usage.id, CENT, { ...usage, status: 200, costUnits: CENT })).toMatchObject({ kind: 'captured', balance: { purchasedUnits: 98 * CENT } });
      // The first report goes again and is answered from the wallet's stored reply; then the second call's.
      await restarted.flush();
      expect(new LeaseBook(state.storage.sql).outgoing).not.toBeNull();
      // A quiet gate stores its last reply at its alarm, so a later start has nothing to send again.
      await restarted.alarm();
      expect(new LeaseBook(state.storage.sql).outgoing).toBeNull();
    });
    expect(await captures()).toBe(2);
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(98);
  });

  it('sends a charge that settles while a turn to the wallet waits in its queue once, behind that turn, not in a message of its own beside it', async () => {
    const { account, gate, captures } = await afterOneAcknowledgedCall('first.example.com');
    // A report is due: the last one went more than REPORT_MS ago by the injectable clock.
    vi.spyOn(clock, 'now').mockReturnValue(Date.now() + 2 * REPORT_MS);
    const sent = watchSyncs();
    await runInDurableObject(gate, async (object) => {
      const instance = object as unknown as WorkspaceGate;
      const usage = rowOf(account, `use_${'q'.repeat(24)}`, 'req_queued');
      expect((await instance.meter({ keyId: account.keyId, amountUnits: CENT, ttlMs: 1_000, usage })).kind).toBe('held');
      // A read of the wallet's figures (a `/v1/credits` with stale figures) is queued and has not run yet when the call settles.
      const reading = (instance as unknown as { link: WalletLink }).link.read();
      expect(await instance.settle(usage.id, CENT, { ...usage, status: 200, costUnits: CENT })).toMatchObject({ kind: 'captured' });
      await reading;
      await instance.flush();
      expect(instance.keyBudgets([account.keyId])[0]!.spentUnits).toBe(2 * CENT);
    });
    const seqs = sent.filter((sync) => sync.workspaceId === account.workspaceId).map((sync) => sync.message.seq);
    expect(seqs.length).toBeGreaterThan(0);
    // Each message once: a message composed beside the queued turn would be sent by that turn and again by its own.
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(await captures()).toBe(2);
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(98);
  });

  it('puts a call id in a message once when a retry that took it over settles while the first charge still waits, as the waiting list would', async () => {
    const { account, gate, captures } = await afterOneAcknowledgedCall('first.example.com');
    await runInDurableObject(gate, async (object) => {
      const instance = object as unknown as WorkspaceGate;
      const book = (instance as unknown as { book: LeaseBook }).book;
      const usage = rowOf(account, `use_${'t'.repeat(24)}`, 'req_took_over', { status: 200, costUnits: CENT });
      const now = clock.now();
      // The first call's charge waits on the list; the retry that took over its id is captured as a report falls due.
      expect(book.capture(book.take(usage.id, CENT, now + 1_000, now)!, CENT, usage).message).toBeNull();
      const { message } = book.capture(book.take(usage.id, CENT, now + 1_000, now)!, CENT, usage, account.keyId, { ask: () => ({ need: 0, target: 0 }), now });
      expect(message!.charges.map((charge) => charge.id)).toEqual([usage.id]);
      await instance.flush();
      // Nothing is left counted as on its way to the wallet.
      expect(book.unacknowledged).toEqual({ subscriptionUnits: 0, purchasedUnits: 0 });
    });
    expect(await captures()).toBe(2);
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(98);
  });

  it("charges a success whose call id's first try was released as failed (its settle went unanswered), its row waiting on the list, composed at once, or outgoing", async () => {
    const { account, gate, captures } = await afterOneAcknowledgedCall('first.example.com');
    let offset = 0;
    vi.spyOn(clock, 'now').mockImplementation(() => Date.now() + offset);
    await runInDurableObject(gate, async (object) => {
      const instance = object as unknown as WorkspaceGate;
      const { book } = instance as unknown as { book: LeaseBook };
      const spent = () => instance.keyBudgets([account.keyId])[0]!.spentUnits;
      const tried = async (id: string, status: number) => {
        const usage = rowOf(account, id, `req_${id}`);
        expect((await instance.meter({ keyId: account.keyId, amountUnits: CENT, ttlMs: 1_000, usage })).kind).toBe('held');
        await instance.settle(usage.id, status < 400 ? CENT : 0, { ...usage, status, errorCode: status < 400 ? null : 'INTERNAL_ERROR', costUnits: status < 400 ? CENT : 0 });
      };
      const reportJustNow = () => ((instance as unknown as { reportedAt: number }).reportedAt = clock.now());
      const reportDue = () => ((instance as unknown as { reportedAt: number }).reportedAt = clock.now() - 2 * REPORT_MS);
      // The failure's row waits on the list; the retry's success takes its place there.
      reportJustNow();
      await tried(`use_${'f'.repeat(24)}`, 500);
      await tried(`use_${'f'.repeat(24)}`, 200);
      // The call before these counted a cent already.
      expect(spent()).toBe(2 * CENT);
      await instance.flush();
      // The failure's row waits; the retry's success is composed at once with it, and replaces it in the message.
      reportJustNow();
      await tried(`use_${'g'.repeat(24)}`, 500);
      offset += 2 * REPORT_MS;
      await tried(`use_${'g'.repeat(24)}`, 200);
      expect(spent()).toBe(3 * CENT);
      await instance.flush();
      // The failure's row left already, in the message outgoing: the success goes after it, and is charged.
      reportDue();
      await tried(`use_${'h'.repeat(24)}`, 500);
      expect(book.outgoing?.charges.map((charge) => charge.id)).toEqual([`use_${'h'.repeat(24)}`]);
      offset += 2 * REPORT_MS;
      await tried(`use_${'h'.repeat(24)}`, 200);
      expect(spent()).toBe(4 * CENT);
      await instance.flush();
      expect(spent()).toBe(4 * CENT);
    });
    expect(await captures()).toBe(4);
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(96);
  });

  it("counts a key's spend once when a retry that took over a call id settles while the first charge still waits, on the list or composed at once", async () => {
    const { account, gate, captures } = await afterOneAcknowledgedCall('first.example.com');
    let offset = 0;
    vi.spyOn(clock, 'now').mockImplementation(() => Date.now() + offset);
    await runInDurableObject(gate, async (object) => {
      const instance = object as unknown as WorkspaceGate;
      const spent = () => instance.keyBudgets([account.keyId])[0]!.spentUnits;
      /** A call to `id` metered and settled: a success, charged at a cent. */
      const settled = async (id: string) => {
        const usage = rowOf(account, id, `req_${id}`);
        expect((await instance.meter({ keyId: account.keyId, amountUnits: CENT, ttlMs: 1_000, usage })).kind).toBe('held');
        expect(await instance.settle(usage.id, CENT, { ...usage, status: 200, costUnits: CENT })).toMatchObject({ kind: 'captured' });
      };
      // A report went just now: the first call's charge waits on the list, and so does its retry's.
      (instance as unknown as { reportedAt: number }).reportedAt = clock.now();
      await settled(`use_${'l'.repeat(24)}`);
      await settled(`use_${'l'.repeat(24)}`);
      expect(spent()).toBe(2 * CENT);
      await instance.flush();
      // Again, with a report due when the retry settles: its charge is composed into a message at once.
      (instance as unknown as { reportedAt: number }).reportedAt = clock.now();
      await settled(`use_${'n'.repeat(24)}`);
      offset += 2 * REPORT_MS;
      await settled(`use_${'n'.repeat(24)}`);
      expect(spent()).toBe(3 * CENT);
      await instance.flush();
      expect(spent()).toBe(3 * CENT);
      // And with the first charge itself composed at once and not yet acknowledged when the retry settles (a slow
      // machine's clean clone found this: the retry's charge was counted again).
      (instance as unknown as { reportedAt: number }).reportedAt = clock.now() - 2 * REPORT_MS;
      await settled(`use_${'o'.repeat(24)}`);
      expect((instance as unknown as { book: LeaseBook }).book.outgoing?.charges.map((charge) => charge.id)).toEqual([`use_${'o'.repeat(24)}`]);
      offset += 2 * REPORT_MS;
      await settled(`use_${'o'.repeat(24)}`);
      expect(spent()).toBe(4 * CENT);
      await instance.flush();
      expect(spent()).toBe(4 * CENT);
    });
    expect(await captures()).toBe(4);
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(96);
  });

  it('composes no message of more than 500 charges, a call settled behind a full list of them included', async () => {
    const { account, gate } = await afterOneAcknowledgedCall('first.example.com');
    const sent = watchSyncs();
    await runInDurableObject(gate, async (object) => {
      const instance = object as unknown as WorkspaceGate;
      const book = (instance as unknown as { book: LeaseBook }).book;
      const now = clock.now();
      const capture = (n: number, sendNow?: Parameters<LeaseBook['capture']>[4]) => {
        const usage = rowOf(account, `use_full${String(n).padStart(20, '0')}`, `req_${n}`, { status: 200, costUnits: 0 });
        return book.capture(book.take(usage.id, 0, now + 1_000, now)!, 0, usage, account.keyId, sendNow).message;
      };
      for (let n = 0; n < 500; n++) expect(capture(n)).toBeNull();
      // The 501st, with a report due: it waits behind the 500 rather than make the message one longer.
      capture(500, { ask: () => ({ need: 0, target: 0 }), now });
      await instance.flush();
      await instance.flush();
      expect(book.hasUnsent()).toBe(false);
    });
    const rows = await runInDurableObject(env.ORG_WALLET.get(env.ORG_WALLET.idFromName(account.organizationId)), (_, state) =>
      state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM ledger WHERE kind = 'capture'").one().n,
    );
    expect(rows).toBe(502);
    const sizes = sent.filter((sync) => sync.workspaceId === account.workspaceId).map((sync) => sync.message.charges.length);
    expect(Math.max(...sizes)).toBe(500);
  });

  it("counts a key's spend once when a retry takes over a call id the wallet has charged already, in memory and once restarted", async () => {
    const { account, gate, captures } = await afterOneAcknowledgedCall('first.example.com');
    const charged = await runInDurableObject(env.ORG_WALLET.get(env.ORG_WALLET.idFromName(account.organizationId)), (_, state) =>
      state.storage.sql.exec<{ id: string }>("SELECT hold_id AS id FROM ledger WHERE kind = 'capture'").one().id,
    );
    vi.spyOn(clock, 'now').mockReturnValue(Date.now() + 2 * REPORT_MS);
    await runInDurableObject(gate, async (object, state) => {
      const instance = object as unknown as WorkspaceGate;
      expect(instance.keyBudgets([account.keyId])[0]!.spentUnits).toBe(CENT);
      // The retry of a call whose answer was lost after it was charged: same call id, asked and answered again.
      const usage = rowOf(account, charged, 'req_retry');
      expect((await instance.meter({ keyId: account.keyId, amountUnits: CENT, ttlMs: 1_000, usage })).kind).toBe('held');
      expect(await instance.settle(usage.id, CENT, { ...usage, status: 200, costUnits: CENT })).toMatchObject({ kind: 'captured' });
      // Its report went at once; once the reply is in, nothing else is written before the restart below.
      const book = (instance as unknown as { book: LeaseBook }).book;
      for (let waited = 0; book.outgoing !== null && waited < 5_000; waited += 5) await scheduler.wait(5);
      expect(book.outgoing).toBeNull();
      expect(instance.keyBudgets([account.keyId])[0]!.spentUnits).toBe(CENT);
      // A restart sends nothing again that would take the spend out a second time.
      const restarted = new WorkspaceGate(state, env as never);
      await state.blockConcurrencyWhile(async () => {});
      await restarted.flush();
      expect(restarted.keyBudgets([account.keyId])[0]!.spentUnits).toBe(CENT);
    });
    expect(await captures()).toBe(1);
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(99);
  });

  it('gives back, when it gives its lease back, the money a retry of a charged call id counted, which the wallet did not spend', async () => {
    const { account, gate, captures } = await afterOneAcknowledgedCall('first.example.com');
    const walletOf = env.ORG_WALLET.get(env.ORG_WALLET.idFromName(account.organizationId));
    const charged = await runInDurableObject(walletOf, (_, state) => state.storage.sql.exec<{ id: string }>("SELECT hold_id AS id FROM ledger WHERE kind = 'capture'").one().id);
    const sent = watchSyncs();
    await runInDurableObject(gate, async (object) => {
      const instance = object as unknown as WorkspaceGate;
      // Within REPORT_MS of the last report, so the retry's charge waits on the list and goes with the lease given back.
      (instance as unknown as { reportedAt: number }).reportedAt = clock.now();
      const usage = rowOf(account, charged, 'req_retry');
      expect((await instance.meter({ keyId: account.keyId, amountUnits: CENT, ttlMs: 1_000, usage })).kind).toBe('held');
      expect(await instance.settle(usage.id, CENT, { ...usage, status: 200, costUnits: CENT })).toMatchObject({ kind: 'captured' });
      await instance.flush();
    });
    // The message that gave the lease back carried the retry's charge, which the wallet had applied already.
    expect(sent.some((sync) => sync.message.charges.some((charge) => charge.id === charged) && sync.message.giveBack.purchasedUnits > 0)).toBe(true);
    const balance = await walletOf.balance();
    expect(balance.heldUnits).toBe(0);
    expect(balance.purchasedUnits).toBe(99 * CENT);
    expect(await captures()).toBe(1);
  });

  it('restarted with a message whose reply it had not stored, keeps the alarm it had, which sends the message again if no call does; a refused one goes at its next attempt', async () => {
    const { account, gate, captures } = await afterOneReportedCall('quiet.example.com');
    await runInDurableObject(gate, async (_, state) => {
      expect(new LeaseBook(state.storage.sql).outgoing?.charges).toHaveLength(1);
      // The lease it holds goes back at IDLE_LEASE_MS: that alarm is set, and a restart (a gate out of memory
      // after 10 s idle) keeps it rather than setting one of its own for the message.
      const idleReturn = await state.storage.getAlarm();
      expect(idleReturn).toBeGreaterThan(Date.now() + IDLE_LEASE_MS / 2);
      new WorkspaceGate(state, env as never);
      await state.blockConcurrencyWhile(async () => {});
      expect(await state.storage.getAlarm()).toBe(idleReturn);

      // With no alarm set, a restart sets one within IDLE_LEASE_MS, so the message cannot wait for ever.
      await state.storage.deleteAlarm();
      const before = Date.now();
      const restarted = new WorkspaceGate(state, env as never);
      await state.blockConcurrencyWhile(async () => {});
      const alarm = await state.storage.getAlarm();
      expect(alarm).toBeGreaterThanOrEqual(before + IDLE_LEASE_MS);
      expect(alarm).toBeLessThanOrEqual(Date.now() + IDLE_LEASE_MS);

      // A message the wallet refused goes again at its next attempt, ahead of a later alarm (due now here).
      (restarted as unknown as { book: LeaseBook }).book.undelivered('refused', clock.now() - FIRST_RETRY_MS);
      await state.storage.setAlarm(Date.now() + 60_000);
      const retrying = new WorkspaceGate(state, env as never);
      await state.blockConcurrencyWhile(async () => {});
      expect(await state.storage.getAlarm()).toBeLessThanOrEqual(Date.now());
      // That alarm sends the message again; the wallet answers it from its stored reply and applies nothing twice.
      await retrying.alarm();
      expect(new LeaseBook(state.storage.sql).outgoing).toBeNull();
    });
    expect(await captures()).toBe(1);
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(99);
  });

  it("keeps its window and the wallet's figures through a restart, stored in the lease's row, and reads them where older gates kept them", async () => {
    vi.spyOn(clock, 'now').mockReturnValue(Date.parse('2026-11-25T10:00:10.000Z'));
    const account = await provision();
    await ops('PUT', `/organizations/${account.organizationId}/plan`, { plan: 'payg', rpm: 6 });
    await credit(account.organizationId, { purchasedCents: 100 });
    for (const domain of ['one', 'two', 'three']) expect((await companyByDomain(account.key, `${domain}.example.com`)).status).toBe(200);
    const gate = gateOf(env, account.workspaceId);
    let n = 0;
    const usage = (): UsageRow => ({
      id: `use_${String(++n).padStart(24, '0')}`, requestId: 'req_restart', organizationId: account.organizationId, workspaceId: account.workspaceId, keyId: account.keyId,
      operation: 'linkedin.get-company-by-domain', status: 0, errorCode: null, costUnits: 0, cached: false, latencyMs: 1, createdAt: new Date(clock.now()).toISOString(),
    });
    /** A new object over the same storage, once its constructor's read is done; it meters and settles one call. */
    const callAfterRestart = async (state: DurableObjectState) => {
      const restarted = new WorkspaceGate(state, env as never);
      // Its constructor reads the window under blockConcurrencyWhile, which holds back events, not this direct
      // call: a second one runs once the first is done.
      await state.blockConcurrencyWhile(async () => {});
      const ask = usage();
      const metered = await restarted.meter({ keyId: account.keyId, amountUnits: CENT, ttlMs: 1_000, usage: ask });
      const settled = metered.kind === 'held' ? await restarted.settle(ask.id, CENT, { ...ask, status: 200, costUnits: CENT }) : undefined;
      return { remaining: 'admission' in metered ? metered.admission.remaining : undefined, settled };
    };

    // The alarm reports the calls that came within REPORT_MS of the first, and stores the window with them.
    await runDurableObjectAlarm(gate);
    await runInDurableObject(gate, async (_, state) => {
      // Three calls counted of six, and 97 cents after them: both come back from the one row.
      expect(state.storage.sql.exec("SELECT 1 FROM sqlite_master WHERE name = 'credit_view'").toArray()).toEqual([]);
      const after = await callAfterRestart(state);
      expect(after.remaining).toBe(2);
      expect(after.settled).toMatchObject({ kind: 'captured', balance: { purchasedUnits: 96 * CENT } });

      // A gate stored before the window and the figures went into that row: its window under its own
      // key, its figures in their own table. Its next call reads both from there.
      const { doc } = state.storage.sql.exec<{ doc: string }>('SELECT doc FROM lease_state').one();
      const { parts, ...older } = JSON.parse(doc) as { parts: { window: { start: number; count: number }; view: object } };
      state.storage.sql.exec('UPDATE lease_state SET doc = ?', JSON.stringify(older));
      await state.storage.put('window', { ...parts.window, count: 5 });
      state.storage.sql.exec('CREATE TABLE credit_view (id INTEGER PRIMARY KEY CHECK (id = 1), doc TEXT NOT NULL)');
      state.storage.sql.exec('INSERT INTO credit_view VALUES (1, ?)', JSON.stringify({ ...parts.view, purchasedUnits: 50 * CENT }));
      const legacy = await callAfterRestart(state);
      expect(legacy.remaining).toBe(0);
      expect(legacy.settled).toMatchObject({ kind: 'captured' });
      expect(legacy.settled?.kind === 'captured' && legacy.settled.balance?.purchasedUnits).toBeLessThan(50 * CENT);
    });
  });

  it('follows a plan change from the very next call, in a gate that already knew the old plan', async () => {
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 10 });
    expect((await companyByDomain(account.key, 'a.example.com')).headers.get('ratelimit-limit')).toBe('60');
    await ops('PUT', `/organizations/${account.organizationId}/plan`, { plan: 'payg', rpm: 7 });
    expect((await companyByDomain(account.key, 'b.example.com')).headers.get('ratelimit-limit')).toBe('7');
    await ops('PUT', `/organizations/${account.organizationId}/plan`, { plan: null });
    const refused = await companyByDomain(account.key, 'c.example.com');
    expect(refused.status).toBe(402);
    expect((await json(refused)).error.code).toBe('SUBSCRIPTION_REQUIRED');
  });

  it.each([
    ['GET /v1/credits', (key: string) => call('/v1/credits', bearer(key))],
    ['GET /v1/usage', (key: string) => call('/v1/usage', bearer(key))],
    ['a metered GET', (key: string) => companyByDomain(key, 'stripe.com')],
    ['a metered POST at a root path', (key: string) => tool(key, '/scrape', { url: 'https://example.com' })],
    ['a metered call with an invalid input', (key: string) => companyByDomain(key, '')],
    ['a metered POST whose body is not JSON', (key: string) => call('/scrape', { method: 'POST', headers: { ...bearer(key).headers, 'content-type': 'application/json' }, body: '{"url":' })],
    ['a metered POST with a query string', (key: string) => tool(key, '/scrape?x=1', { url: 'https://example.com' })],
    ['a metered path with the wrong method', (key: string) => call('/scrape', bearer(key))],
    ['an unknown /v1 path', (key: string) => call('/v1/nothing-here', bearer(key))],
  ])('refuses a remembered key on %s from the very next request after its revocation', async (_, send) => {
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 10 });
    // Served once, so this isolate remembers the key.
    expect((await send(account.key)).status).not.toBe(401);
    expect((await ops('POST', `/keys/${account.keyId}/revoke`)).status).toBe(200);
    const refused = await send(account.key);
    expect(refused.status).toBe(401);
    expect((await json(refused)).error).toMatchObject({ code: 'UNAUTHORIZED', message: expect.stringMatching(/revoked/) });
  });

  it('refuses a remembered key with 401, not 503, on a source switched off after its revocation', async () => {
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 10 });
    expect((await tool(account.key, '/scrape', { url: 'https://example.com' })).status).not.toBe(401);
    expect((await ops('POST', `/keys/${account.keyId}/revoke`)).status).toBe(200);
    try {
      expect((await ops('POST', '/platforms/web/disable')).status).toBe(200);
      const refused = await tool(account.key, '/scrape', { url: 'https://example.com' });
      expect(refused.status).toBe(401);
      expect((await json(refused)).error).toMatchObject({ code: 'UNAUTHORIZED', message: expect.stringMatching(/revoked/) });
      // A key that may be served is still told the source is off.
      const other = await provision();
      expect((await tool(other.key, '/scrape', { url: 'https://example.com' })).status).toBe(503);
    } finally {
      await ops('POST', '/platforms/web/enable');
    }
  });
});
