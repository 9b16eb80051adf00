import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HOLD_GRACE_MS } from '../../src/core/protocols/gate';
import { clock } from '../../src/core/clock';
import { intoOneMonth } from '../support/held-minute';
import { gateOf } from '../../src/services/gate';
import type { UsageRow } from '../../src/core/usage';
import { settledStatement, walletOf } from '../../src/services/wallet';
import { bearer, call, credit, eventually, json, ops, provision } from '../support/api';
import { losingSettleAnswers } from '../support/lost-answers';

/**
 * The money property: whatever mix of concurrent calls, failures, client timeouts, revocations, top-ups,
 * plan changes, expired holds, late captures and settles whose answers are lost several workspaces of one
 * organization go through, once everything has settled the balance plus what was captured is what was put in, nothing is held,
 * and the ledger's captures, the usage rows that say 200 and the successes the clients saw are the same
 * calls. An overspend shows up as a capture the wallet cannot take (the balance may not go negative),
 * so a success without its capture; a double charge as a capture too many.
 */

const CENT = 10_000;
const WORKSPACES = 3;

afterEach(() => {
  vi.restoreAllMocks();
});

async function organization(startCents: number, rpm = 1_000_000) {
  const account = await provision();
  await ops('PUT', `/organizations/${account.organizationId}/plan`, { plan: 'payg', rpm });
  if (startCents > 0) await credit(account.organizationId, { purchasedCents: startCents });
  const workspaces = [{ id: account.workspaceId, key: account.key, keyId: account.keyId }];
  while (workspaces.length < WORKSPACES) {
    const workspace = await ops('POST', '/workspaces', { organizationId: account.organizationId, name: `ws ${workspaces.length}` });
    const key = await ops('POST', '/keys', { workspaceId: workspace.body.data.id });
    workspaces.push({ id: workspace.body.data.id, key: key.body.data.key, keyId: key.body.data.id });
  }
  return { organizationId: account.organizationId, workspaces };
}

async function usageRows(organizationId: string, count: number) {
  return (
    await eventually(
      () => env.DB.prepare('SELECT id, request_id AS requestId, status, cost_units AS cost FROM usage WHERE organization_id = ?').bind(organizationId).all(),
      (result) => result.results.length >= count,
    )
  ).results as Array<{ id: string; requestId: string; status: number; cost: number }>;
}

/** The items for which `test` holds, then the others. */
function partition<T>(items: T[], test: (item: T) => boolean): [T[], T[]] {
  return [items.filter(test), items.filter((item) => !test(item))];
}

type Action =
  /** `key`: sent with one of a few Idempotency-Keys, so that calls repeat, race or reuse one another's key. */
  | { kind: 'call'; workspace: number; outcome: 'ok' | 'fails' | 'client gone'; key: number | null }
  | { kind: 'revoke'; workspace: number }
  | { kind: 'top up'; cents: number }
  | { kind: 'plan'; rpm: number | null };

const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('call' as const), workspace: fc.nat(WORKSPACES - 1), outcome: fc.constantFrom('ok' as const, 'ok' as const, 'fails' as const, 'client gone' as const), key: fc.option(fc.nat(2), { nil: null }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('revoke' as const), workspace: fc.nat(WORKSPACES - 1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('top up' as const), cents: fc.integer({ min: 1, max: 5 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('plan' as const), rpm: fc.option(fc.constantFrom(4, 50, 1_000_000), { nil: null }) }) },
);

/** Whether a wave's settles lose their answers on the way back (a dropped connection, a gate reset mid-message). */
const lostAnswers = fc.constantFrom('none' as const, 'none' as const, 'in the gate' as const, 'after handing the charge on' as const);

describe('the money property, end to end', () => {
  it('balance + captured = start, and ledger = usage rows = successes, under concurrent mixes with idempotency keys', { timeout: 240_000 }, async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 12 }), fc.array(fc.tuple(fc.array(action, { minLength: 1, maxLength: 12 }), lostAnswers), { minLength: 1, maxLength: 4 }), async (startCents, waves) => {
        run += 1;
        const org = await organization(startCents);
        let putIn = startCents;
        const answers: Array<{ status: number; requestId: string | null; costCents?: number; replayed: boolean }> = [];
        for (const [wave, [actions, lost]] of waves.entries()) {
          // A wave whose successes' settles each lose their first answer on the way back, the charge still in the gate or handed on.
          const losing = lost === 'none' ? null : losingSettleAnswers(1, { handedOn: lost === 'after handing the charge on' });
          await Promise.all(
            actions.map(async (step, index) => {
              if (step.kind === 'call') {
                // A success sent again with its key asks the same: it is answered again, uncharged.
                const ok = step.key === null ? `ok-${run}-${wave}-${index}` : `ok-${run}-key-${step.key}`;
                const domain = { ok: `${ok}.example.com`, fails: 'status500.com', 'client gone': 'slow.com' }[step.outcome];
                const signal = step.outcome === 'client gone' ? AbortSignal.timeout(60) : undefined;
                const headers: Record<string, string> = step.key === null ? {} : { 'idempotency-key': `key-${run}-${step.key}` };
                const response = await call(`/v1/data/linkedin/get-company-by-domain?domain=${domain}`, { ...bearer(org.workspaces[step.workspace]!.key, { headers }), ...(signal ? { signal } : {}) });
                const body = await json(response);
                const replayed = response.headers.get('idempotent-replayed') === 'true';
                answers.push({ status: response.status, requestId: response.headers.get('x-request-id'), ...(body.meta ? { costCents: body.meta.costCents } : {}), replayed });
              } else if (step.kind === 'revoke') {
                const workspace = org.workspaces[step.workspace]!;
                const old = workspace.keyId;
                const fresh = await ops('POST', '/keys', { workspaceId: workspace.id });
                Object.assign(workspace, { key: fresh.body.data.key, keyId: fresh.body.data.id });
                await ops('POST', `/keys/${old}/revoke`);
              } else if (step.kind === 'top up') {
                putIn += step.cents;
                await credit(org.organizationId, { purchasedCents: step.cents });
              } else {
                await ops('PUT', `/organizations/${org.organizationId}/plan`, { plan: step.rpm === null ? null : 'payg', rpm: step.rpm });
              }
            }),
          );
          losing?.restore();
        }

        expect(answers.filter((answer) => answer.status >= 500 && answer.status !== 502)).toEqual([]);
        for (const success of answers.filter((answer) => answer.status === 200)) expect(success.costCents).toBe(1);
        // A replay shows the first call's answer and cost; it is not charged again.
        const successes = answers.filter((answer) => answer.status === 200 && !answer.replayed);

        const { balance, ledger } = await settledStatement(env, org.organizationId, 100_000);
        // The ledger counts every success, a replay with a capture of nothing.
        const [captures, free] = partition(ledger.filter((entry) => entry.kind === 'capture'), (entry) => entry.purchasedDelta + entry.subscriptionDelta !== 0);
        const captured = 0 - captures.reduce((sum, entry) => sum + entry.purchasedDelta + entry.subscriptionDelta, 0);
        expect(balance.heldUnits).toBe(0);
        expect(balance.purchasedUnits + captured).toBe(putIn * CENT);
        expect(captures).toHaveLength(successes.length);
        expect(free).toHaveLength(answers.filter((answer) => answer.replayed).length);
        expect(captured).toBe(successes.length * CENT);

        // Every call that reached the pipeline has its row, except those the window refused or a revoked key never got to make.
        const recorded = answers.filter((answer) => answer.status !== 429 && answer.status !== 401);
        const rows = await usageRows(org.organizationId, recorded.length);
        expect(rows).toHaveLength(recorded.length);
        const [charged, replays] = partition(rows.filter((row) => row.status === 200), (row) => row.cost > 0);
        expect(new Set(charged.map((row) => row.requestId))).toEqual(new Set(successes.map((success) => success.requestId)));
        expect(new Set(charged.map((row) => row.id))).toEqual(new Set(captures.map((entry) => entry.holdId)));
        expect(new Set(replays.map((row) => row.requestId))).toEqual(new Set(answers.filter((answer) => answer.replayed).map((answer) => answer.requestId)));
        expect(rows.filter((row) => row.status !== 200).every((row) => row.cost === 0)).toBe(true);
      }),
      { numRuns: 12 },
    );
  });
});

type GateStep =
  | { kind: 'meter'; workspace: number; cents: number }
  | { kind: 'settle'; pick: number; succeeds: boolean; spendsAll: boolean }
  /** An idempotent retry that takes over a call's id: one whose process died in flight, or after it was charged and before its answer was kept. */
  | { kind: 'take over'; pick: number; charged: boolean }
  | { kind: 'expire'; workspace: number }
  | { kind: 'flush'; workspace: number }
  /** The gate's object restarts (evicted, or its process moved): what it kept in memory only is gone. */
  | { kind: 'restart'; workspace: number }
  | { kind: 'top up'; cents: number }
  /** A plan change with a small allowance (the real plans' are hundreds of calls here), told to the gates or left for their next message to learn. */
  | { kind: 'plan'; allowanceCents: number; told: boolean };

const gateStep: fc.Arbitrary<GateStep> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('meter' as const), workspace: fc.nat(WORKSPACES - 1), cents: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('settle' as const), pick: fc.nat(), succeeds: fc.boolean(), spendsAll: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('take over' as const), pick: fc.nat(), charged: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('expire' as const), workspace: fc.nat(WORKSPACES - 1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('flush' as const), workspace: fc.nat(WORKSPACES - 1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('restart' as const), workspace: fc.nat(WORKSPACES - 1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('top up' as const), cents: fc.integer({ min: 1, max: 6 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('plan' as const), allowanceCents: fc.integer({ min: 0, max: 4 }), told: fc.boolean() }) },
);

/** The most one run moves the test's clock: 8 batches of 10 steps, each an expired hold of 61 s, with room for the run's own time. */
const RUN_SPAN_MS = 2 * 60 * 60_000;

/** Each workspace's key gets a monthly limit in cents, or none. */
const keyLimits = fc.array(fc.option(fc.integer({ min: 0, max: 8 }), { nil: null }), { minLength: WORKSPACES, maxLength: WORKSPACES });

describe('the money property, at the gates', () => {
  it('bills each success once, late captures, expired holds, restarts, plan changes and retries that take over a call included, and never spends money that is not there, nor past a key limit', { timeout: 240_000 }, async () => {
    let offset = 0;
    vi.spyOn(clock, 'now').mockImplementation(() => Date.now() + offset);
    let sequence = 0;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 10 }), fc.array(fc.array(gateStep, { minLength: 1, maxLength: 10 }), { minLength: 1, maxLength: 8 }), keyLimits, async (startCents, batches, limits) => {
        // A run stays in one calendar month, as a key's limit is a month's: its expired holds move the clock on
        // by up to 80 × 61 s, and the runs before it by an hour or more.
        offset += intoOneMonth(clock.now(), RUN_SPAN_MS);
        const org = await organization(startCents);
        let allowanceChanged = false;
        for (const [index, limit] of limits.entries()) if (limit !== null) await ops('PUT', `/keys/${org.workspaces[index]!.keyId}/limit`, { monthlyLimitCents: limit });
        let putIn = startCents;
        type Call = { workspace: number; usage: UsageRow; cents: number };
        const open: Call[] = [];
        /** What the wallet must hold, by call id: the first capture of an id, which its retries do not add to. */
        const charged = new Map<string, { workspace: number; cents: number }>();
        /** Charged calls no retry is running for: a retry's claim keeps a second one off the id while it runs. */
        const idle: Call[] = [];
        const rowOf = (workspace: number, status: number, costUnits: number): UsageRow => ({
          id: `use_${(sequence += 1).toString(16).padStart(24, '0')}`,
          requestId: `req_${sequence}`,
          organizationId: org.organizationId,
          workspaceId: org.workspaces[workspace]!.id,
          keyId: org.workspaces[workspace]!.keyId,
          operation: 'test.money',
          status,
          errorCode: status === 200 ? null : 'PROVIDER_ERROR',
          costUnits,
          cached: false,
          latencyMs: 1,
          createdAt: new Date(clock.now()).toISOString(),
        });
        const settle = async (entry: (typeof open)[number], succeeds: boolean, spendsAll: boolean) => {
          const gate = gateOf(env, org.workspaces[entry.workspace]!.id);
          const actual = spendsAll ? entry.cents : Math.max(1, entry.cents - 1);
          const row = { ...rowOf(entry.workspace, succeeds ? 200 : 502, succeeds ? actual * CENT : 0), id: entry.usage.id };
          const answer = await gate.settle(entry.usage.id, succeeds ? actual * CENT : 0, row);
          if (answer.kind === 'captured') {
            if (!charged.has(entry.usage.id)) charged.set(entry.usage.id, { workspace: entry.workspace, cents: actual });
          } else if (succeeds) {
            expect(['insufficient', 'busy', 'key_limit']).toContain(answer.kind);
          }
          if (charged.has(entry.usage.id)) idle.push(entry);
        };
        const meter = async (workspaceIndex: number, usage: UsageRow, cents: number) => {
          const workspace = org.workspaces[workspaceIndex]!;
          const answer = await gateOf(env, workspace.id).meter({ keyId: workspace.keyId, amountUnits: cents * CENT, ttlMs: 1_000, usage });
          if (answer.kind === 'held') open.push({ workspace: workspaceIndex, usage, cents });
          else expect(['insufficient', 'busy', 'key_limit']).toContain(answer.kind);
        };

        for (const batch of batches) {
          await Promise.all(
            batch.map(async (step) => {
              if (step.kind === 'restart') {
                return;
              } else if (step.kind === 'meter') {
                await meter(step.workspace, rowOf(step.workspace, 0, 0), step.cents);
              } else if (step.kind === 'settle') {
                if (open.length === 0) return;
                const [entry] = open.splice(step.pick % open.length, 1);
                await settle(entry!, step.succeeds, step.spendsAll);
              } else if (step.kind === 'take over') {
                // The first call never settles (in flight) or never keeps its answer (charged): the retry runs as the same call.
                const from = step.charged ? idle : open;
                if (from.length === 0) return;
                const [dead] = from.splice(step.pick % from.length, 1);
                await meter(dead!.workspace, { ...rowOf(dead!.workspace, 0, 0), id: dead!.usage.id }, dead!.cents);
              } else if (step.kind === 'expire') {
                // Holds outlive their calls: the alarm gives their money back; their captures come late.
                offset += 1_000 + HOLD_GRACE_MS + 1;
                await runDurableObjectAlarm(gateOf(env, org.workspaces[step.workspace]!.id));
              } else if (step.kind === 'flush') {
                await gateOf(env, org.workspaces[step.workspace]!.id).flush();
              } else if (step.kind === 'top up') {
                putIn += step.cents;
                await credit(org.organizationId, { purchasedCents: step.cents });
              } else if (step.kind === 'plan') {
                // A new allowance generation: subscription units held or charged under the old one expire with it.
                allowanceChanged = true;
                const configured = await walletOf(env, org.organizationId).configure({ allowanceUnits: step.allowanceCents * CENT, plan: 'payg', rpmOverride: 1_000_000 });
                if (step.told) await Promise.all(configured.workspaces.map((id) => gateOf(env, id).adoptTerms(configured.terms, configured.generation, configured.balance)));
              }
            }),
          );
          // Once the batch's calls are answered (a call in flight when its gate dies is the chaos test's): the holds,
          // the rows `meter` brought and the key spends in memory go; what the gate stored stays.
          for (const step of batch) {
            if (step.kind !== 'restart') continue;
            await runInDurableObject(gateOf(env, org.workspaces[step.workspace]!.id), (_, state) => state.abort('restart')).catch(() => undefined);
          }
        }
        // What is still open settles late, half of it as successes.
        await Promise.all(open.splice(0).map((entry, index) => settle(entry, index % 2 === 0, true)));

        const { balance, ledger } = await settledStatement(env, org.organizationId, 100_000);
        const captureRows = ledger.filter((entry) => entry.kind === 'capture');
        const captured = 0 - captureRows.reduce((sum, entry) => sum + entry.purchasedDelta + entry.subscriptionDelta, 0);
        const capturedByKey = limits.map((_, index) => [...charged.values()].filter((call) => call.workspace === index).reduce((sum, call) => sum + call.cents, 0));
        const capturedPurchased = 0 - captureRows.reduce((sum, entry) => sum + entry.purchasedDelta, 0);
        expect(balance.heldUnits).toBe(0);
        expect(balance.subscriptionUnits).toBeGreaterThanOrEqual(0);
        expect(captureRows.map((entry) => entry.holdId).sort()).toEqual([...charged.keys()].sort());
        // Each success at its price, except what an allowance replaced since paid of it (that allowance expired, and the part with it).
        const price = capturedByKey.reduce((sum, cents) => sum + cents, 0) * CENT;
        if (allowanceChanged) expect(captured).toBeLessThanOrEqual(price);
        else expect(captured).toBe(price);
        // Purchased money is never lost nor made: what was put in is what is left plus what calls spent of it.
        expect(balance.purchasedUnits + capturedPurchased).toBe(putIn * CENT);

        // No key spent past its limit, and each gate's count of its key's spend is the ledger's, nothing held.
        for (const [index, workspace] of org.workspaces.entries()) {
          if (limits[index] !== null) expect(capturedByKey[index]).toBeLessThanOrEqual(limits[index]!);
          const [budget] = await gateOf(env, workspace.id).keyBudgets([workspace.keyId]);
          expect(budget!.heldUnits).toBe(0);
          expect(budget!.spentUnits).toBe(capturedByKey[index]! * CENT);
        }
      }),
      { numRuns: 50 },
    );
  });
});
