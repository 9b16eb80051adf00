import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Charge, SyncMessage } from '../../src/core/protocols/lease';
import { nextPeriodEnd, type OrgWallet } from '../../durable-objects/org-wallet';
import { clock } from '../../src/core/clock';
import { unitsFromCents } from '../../src/core/money';
import { bearer, call, companyByDomain, credit, json, ops, provision, wallet } from '../support/api';

function freshWallet() {
  return env.ORG_WALLET.get(env.ORG_WALLET.newUniqueId());
}

/** A gate's message: by default reports nothing, gives nothing back and needs nothing. */
function message(seq: number, parts: Partial<SyncMessage> = {}): SyncMessage {
  return { seq, generation: 0, charges: [], giveBack: { subscriptionUnits: 0, purchasedUnits: 0 }, needUnits: 0, targetUnits: 0, keyUses: [], ...parts };
}

function charge(id: string, subscriptionUnits: number, purchasedUnits: number, generation = 0): Charge {
  const usage = {
    id, requestId: `req_${id}`, organizationId: 'org_test', workspaceId: 'ws_a', keyId: 'key_test', operation: 'test.op',
    status: 200, errorCode: null, costUnits: subscriptionUnits + purchasedUnits, cached: false, latencyMs: 1, createdAt: new Date().toISOString(),
  };
  return { id, subscriptionUnits, purchasedUnits, generation, usage };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('OrgWallet', () => {
  it('spends subscription allowance before purchased balance, and meta shows both after the call', async () => {
    const account = await provision({ plan: 'payg' });
    await credit(account.organizationId, { subscriptionCents: 1, purchasedCents: 5 });
    const first = await json(await companyByDomain(account.key, 'stripe.com'));
    expect(first.meta).toMatchObject({ costCents: 1, subscriptionRemainingCents: 0, purchasedBalanceCents: 5 });
    const second = await json(await companyByDomain(account.key, 'stripe.com'));
    expect(second.meta).toMatchObject({ costCents: 1, subscriptionRemainingCents: 0, purchasedBalanceCents: 4 });
  });

  it('grants a plan its monthly allowance, shown by GET /v1/credits', async () => {
    const account = await provision({ plan: 'team' });
    const response = await fetchCredits(account.key);
    expect(response).toMatchObject({
      organizationId: account.organizationId,
      plan: 'team',
      subscriptionRemainingCents: 5000,
      subscriptionAllowanceCents: 5000,
      purchasedBalanceCents: 0,
      heldCents: 0,
      availableCents: 5000,
      periodEnd: new Date(nextPeriodEnd(Date.now())).toISOString(),
    });
  });

  it('grants a lease subscription first, never more than a share of what no lease holds, and nothing below the need', async () => {
    const stub = freshWallet();
    await stub.credit({ subscriptionUnits: 30, purchasedUnits: 370 });
    // Asks for 10, would like 200: gets a quarter of the 400 free, subscription first.
    const first = await stub.sync('ws_a', message(1, { needUnits: 10, targetUnits: 200 }));
    expect(first).toMatchObject({ grantedUnits: 100, lease: { subscriptionUnits: 30, purchasedUnits: 70 }, unleasedUnits: 300 });
    expect(first.balance).toMatchObject({ subscriptionUnits: 30, purchasedUnits: 370, heldUnits: 100 });
    const sibling = await stub.sync('ws_b', message(1, { needUnits: 290, targetUnits: 290 }));
    expect(sibling).toMatchObject({ grantedUnits: 290, unleasedUnits: 10 });
    // What no lease holds (10) cannot cover 11: nothing is granted, and the balance is untouched.
    const refused = await stub.sync('ws_b', message(2, { needUnits: 11, targetUnits: 11 }));
    expect(refused).toMatchObject({ grantedUnits: 0, unleasedUnits: 10, lease: { purchasedUnits: 290 } });
  });

  it('applies a charge once: spent from the balance and the lease, with a ledger capture and a usage row', async () => {
    const stub = freshWallet();
    await stub.credit({ purchasedUnits: 1_000 });
    const draw = message(1, { needUnits: 100, targetUnits: 100 });
    const drawn = await stub.sync('ws_a', draw);
    // A draw sent again (its reply was lost) is answered with its reply, not granted twice.
    expect(await stub.sync('ws_a', draw)).toEqual(drawn);
    expect(drawn).toMatchObject({ grantedUnits: 100, balance: { heldUnits: 100 } });
    const report = message(2, { charges: [charge('use_1', 0, 40)] });
    const applied = await stub.sync('ws_a', report);
    expect(applied).toMatchObject({ lease: { purchasedUnits: 60 }, balance: { purchasedUnits: 960, heldUnits: 60 } });
    // The same message again (its reply was lost): the stored reply, nothing applied twice.
    expect(await stub.sync('ws_a', report)).toEqual(applied);
    const { ledger } = await stub.statement();
    expect(ledger.filter((entry) => entry.kind === 'capture')).toEqual([expect.objectContaining({ holdId: 'use_1', purchasedDelta: -40, purchasedAfter: 960 })]);
  });

  it('applies a batch in order, spending a charge already captured by an earlier message, or twice in one, only once', async () => {
    const stub = freshWallet();
    await stub.credit({ subscriptionUnits: 30, purchasedUnits: 1_000 });
    await stub.sync('ws_a', message(1, { needUnits: 300, targetUnits: 300 }));
    await stub.sync('ws_a', message(2, { charges: [charge('batch_1', 10, 0)] }));
    // batch_1 again (a retry that took over its call's id), batch_3 twice, one refusal: the new successes are batch_2 and batch_3.
    const refused = { ...charge('batch_4', 0, 0), usage: { ...charge('batch_4', 0, 0).usage, status: 402, errorCode: 'INSUFFICIENT_CREDITS' } };
    const applied = await stub.sync('ws_a', message(3, { charges: [charge('batch_1', 10, 0), charge('batch_2', 20, 5), refused, charge('batch_3', 0, 7), charge('batch_3', 0, 7)] }));
    expect(applied.balance).toMatchObject({ subscriptionUnits: 0, purchasedUnits: 988 });
    expect(applied.lease).toEqual({ subscriptionUnits: 0, purchasedUnits: 258 });
    const { ledger } = await stub.statement();
    const captures = ledger.filter((entry) => entry.kind === 'capture').reverse();
    expect(captures.map(({ holdId, subscriptionDelta, purchasedDelta, subscriptionAfter, purchasedAfter }) => [holdId, subscriptionDelta, purchasedDelta, subscriptionAfter, purchasedAfter])).toEqual([
      ['batch_1', -10, 0, 20, 1_000],
      ['batch_2', -20, -5, 0, 995],
      ['batch_3', 0, -7, 0, 988],
    ]);
    // Every row reaches D1 once, the refusal's too, in the order they came.
    await runInDurableObject(stub, (instance) => (instance as unknown as OrgWallet).alarm());
    const landed = await env.DB.prepare("SELECT id FROM usage WHERE id LIKE 'batch_%' ORDER BY rowid").all<{ id: string }>();
    expect(landed.results.map((row) => row.id)).toEqual(['batch_1', 'batch_2', 'batch_4', 'batch_3']);
  });

  it('stamps the key uses of its messages in D1 at its alarm: the latest use of each key, never one older than the stamp', async () => {
    const [first, second, third] = [await provision(), await provision(), await provision()];
    const stampOf = async (keyId: string) =>
      (await env.DB.prepare('SELECT last_used_at FROM api_keys WHERE id = ?').bind(keyId).first<{ last_used_at: string | null }>())?.last_used_at;
    const at = Date.parse('2026-11-24T09:00:00.000Z');
    // A stamp already later than the use the message carries, as when another wallet's flush came first.
    await env.DB.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?').bind(new Date(at + 60_000).toISOString(), third.keyId).run();
    const stub = freshWallet();
    await stub.sync('ws_a', message(1, { keyUses: [[first.keyId, at], [second.keyId, at + 1_000], [third.keyId, at + 2_000]] }));
    await stub.sync('ws_b', message(1, { keyUses: [[first.keyId, at + 3_000]] }));
    await runInDurableObject(stub, (instance) => (instance as unknown as OrgWallet).alarm());
    expect([await stampOf(first.keyId), await stampOf(second.keyId), await stampOf(third.keyId)]).toEqual([
      '2026-11-24T09:00:03.000Z',
      '2026-11-24T09:00:01.000Z',
      '2026-11-24T09:01:00.000Z',
    ]);
    // Written, so gone from the outbox: a later alarm writes nothing again.
    const queued = await runInDurableObject(stub, (_, state) => state.storage.sql.exec('SELECT key_id FROM key_use_outbox').toArray());
    expect(queued).toEqual([]);
  });

  it('takes back what a lease gives back, and refuses a message that would give back more than the lease', async () => {
    const stub = freshWallet();
    await stub.credit({ purchasedUnits: 1_000 });
    await stub.sync('ws_a', message(1, { needUnits: 100, targetUnits: 100 }));
    // Inside the object, so the refusal is caught where it is thrown rather than crossing RPC as a rejection.
    await runInDurableObject(stub, (instance) => {
      const wallet = instance as unknown as OrgWallet;
      expect(() => wallet.sync('ws_a', message(2, { giveBack: { subscriptionUnits: 0, purchasedUnits: 101 } }))).toThrow(/CHECK constraint/);
    });
    const back = await stub.sync('ws_a', message(2, { giveBack: { subscriptionUnits: 0, purchasedUnits: 100 } }));
    expect(back).toMatchObject({ lease: { subscriptionUnits: 0, purchasedUnits: 0 }, balance: { purchasedUnits: 1_000, heldUnits: 0 } });
  });

  it('resets the allowance at the end of the period; leased allowance expires, purchases do not', async () => {
    const stub = freshWallet();
    await stub.configure({ allowanceUnits: unitsFromCents(10), plan: 'solo', rpmOverride: null });
    await stub.credit({ purchasedUnits: 7 });
    const lease = await stub.sync('ws_a', message(1, { generation: 1, needUnits: unitsFromCents(4), targetUnits: unitsFromCents(4) }));
    expect(lease.lease).toEqual({ subscriptionUnits: unitsFromCents(4), purchasedUnits: 0 });
    await stub.sync('ws_a', message(2, { generation: 1, charges: [charge('use_1', unitsFromCents(4), 0, 1)] }));
    expect(await stub.balance()).toMatchObject({ subscriptionUnits: unitsFromCents(6), purchasedUnits: 7 });

    const { periodEnd } = await stub.balance();
    vi.spyOn(clock, 'now').mockReturnValue(periodEnd! + 1);
    expect(await stub.balance()).toMatchObject({ subscriptionUnits: unitsFromCents(10), purchasedUnits: 7, periodEnd: nextPeriodEnd(periodEnd! + 1) });
  });

  it('voids leased allowance on a plan change: a charge from the old allowance spends only its purchased part', async () => {
    const stub = freshWallet();
    await stub.configure({ allowanceUnits: 100, plan: 'solo', rpmOverride: null });
    await stub.credit({ purchasedUnits: 100 });
    const drawn = await stub.sync('ws_a', message(1, { generation: 1, needUnits: 50, targetUnits: 50 }));
    expect(drawn.lease).toEqual({ subscriptionUnits: 50, purchasedUnits: 0 });
    const changed = await stub.configure({ allowanceUnits: 30, plan: 'payg', rpmOverride: 5 });
    expect(changed).toMatchObject({ generation: 2, workspaces: ['ws_a'], terms: { plan: 'payg', rpmOverride: 5 } });
    const reply = await stub.sync('ws_a', message(2, { generation: 1, charges: [charge('use_1', 50, 0, 1)] }));
    expect(reply).toMatchObject({ generation: 2, lease: { subscriptionUnits: 0, purchasedUnits: 0 }, balance: { subscriptionUnits: 30, purchasedUnits: 100 } });
  });

  it("takes back a refunded payment's credit once per running total, never what a lease holds, never below zero", async () => {
    const stub = freshWallet();
    await stub.credit({ purchasedUnits: 400 });
    // A gate leases a quarter of it: that part is the gate's to spend without asking.
    const leased = (await stub.sync('ws_a', message(1, { needUnits: 10, targetUnits: 1_000 }))).lease.purchasedUnits;
    expect(leased).toBe(100);
    expect(await stub.refunded('pi_1', 400, 350)).toMatchObject({ askedUnits: 350, takenUnits: 300, purchasedUnits: 100 });
    // The same total again, or an older one, asks nothing more; a dispute of what is left of the payment asks 50.
    expect(await stub.refunded('pi_1', 400, 350)).toMatchObject({ askedUnits: 0, takenUnits: 0 });
    expect(await stub.refunded('pi_1', 400, 200)).toMatchObject({ askedUnits: 0, takenUnits: 0 });
    // The gate spends its whole lease: the balance reaches zero, never below.
    await stub.sync('ws_a', message(2, { charges: [charge('call_w', 0, 100)] }));
    expect(await stub.disputed('dp_1', 'pi_1', 400, 400, false)).toMatchObject({ askedUnits: 50, takenUnits: 0, purchasedUnits: 0 });
    expect((await stub.sync('ws_a', message(3))).balance.purchasedUnits).toBe(0);
  });

  it('gives back what a dispute took when its money is reinstated, once; a reinstatement first leaves nothing to take', async () => {
    const stub = freshWallet();
    await stub.credit({ purchasedUnits: 1_000 });
    expect(await stub.disputed('dp_2', 'pi_2', 600, 600, false)).toMatchObject({ takenUnits: 600, purchasedUnits: 400 });
    expect(await stub.disputed('dp_2', 'pi_2', 600, 600, true)).toMatchObject({ givenBackUnits: 600, purchasedUnits: 1_000 });
    expect(await stub.disputed('dp_2', 'pi_2', 600, 600, true)).toMatchObject({ givenBackUnits: 0, purchasedUnits: 1_000 });
    expect(await stub.disputed('dp_3', 'pi_3', 300, 300, true)).toMatchObject({ givenBackUnits: 0, purchasedUnits: 1_000 });
    expect(await stub.disputed('dp_3', 'pi_3', 300, 300, false)).toMatchObject({ takenUnits: 0, purchasedUnits: 1_000 });
  });

  it("carries what the period spent into a plan set with keepUsage, floored at zero; without it the allowance is whole", async () => {
    const stub = freshWallet();
    await stub.configure({ allowanceUnits: 1_000, plan: 'solo', rpmOverride: null });
    const leased = await stub.sync('ws_a', message(1, { needUnits: 10, targetUnits: 1_000 }));
    await stub.sync('ws_a', message(2, { generation: leased.generation, charges: [charge('call_k', 40, 0, leased.generation)] }));
    expect((await stub.configure({ allowanceUnits: 2_500, plan: 'toolkit', rpmOverride: null, keepUsage: true })).balance.subscriptionUnits).toBe(2_460);
    expect((await stub.configure({ allowanceUnits: 30, plan: 'solo', rpmOverride: null, keepUsage: true })).balance.subscriptionUnits).toBe(0);
    expect((await stub.configure({ allowanceUnits: 1_000, plan: 'solo', rpmOverride: null })).balance.subscriptionUnits).toBe(1_000);

    // Spending past a smaller plan's allowance is not forgotten on the way back to a larger one.
    await stub.configure({ allowanceUnits: 20_000, plan: 'business', rpmOverride: null });
    const lease = await stub.sync('ws_b', message(1, { needUnits: 19_990, targetUnits: 19_990 }));
    await stub.sync('ws_b', message(2, { generation: lease.generation, charges: [charge('call_big', 19_990, 0, lease.generation)], giveBack: { subscriptionUnits: 0, purchasedUnits: 0 } }));
    expect((await stub.configure({ allowanceUnits: 1_000, plan: 'solo', rpmOverride: null, keepUsage: true })).balance.subscriptionUnits).toBe(0);
    expect((await stub.configure({ allowanceUnits: 20_000, plan: 'business', rpmOverride: null, keepUsage: true })).balance.subscriptionUnits).toBe(10);
  });

  it('keeps a ledger row for every change, each with the balance after it', async () => {
    const stub = freshWallet();
    await stub.credit({ purchasedUnits: 50 });
    await stub.sync('ws_a', message(1, { needUnits: 20, targetUnits: 20 }));
    await stub.sync('ws_a', message(2, { charges: [charge('use_1', 0, 15)] }));
    const { ledger } = await stub.statement();
    expect(ledger.map(({ kind, purchasedDelta, purchasedAfter }) => ({ kind, purchasedDelta, purchasedAfter }))).toEqual([
      { kind: 'capture', purchasedDelta: -15, purchasedAfter: 35 },
      { kind: 'credit', purchasedDelta: 50, purchasedAfter: 50 },
    ]);
  });
});

describe('operator wallet and plan routes', () => {
  it('credits, shows the wallet with its ledger, and sets a plan with a custom ceiling', async () => {
    const account = await provision({ plan: null });
    const credited = await ops('POST', `/organizations/${account.organizationId}/wallet/credit`, { purchasedCents: 12, subscriptionCents: 3 });
    expect(credited.body.data).toMatchObject({ purchasedBalanceCents: 12, subscriptionRemainingCents: 3 });
    const shown = await wallet(account.organizationId);
    expect(shown.ledger[0]).toMatchObject({ kind: 'credit', purchasedDeltaCents: 12, purchasedAfterCents: 12, subscriptionAfterCents: 3 });

    const planned = await ops('PUT', `/organizations/${account.organizationId}/plan`, { plan: 'business', rpm: 5000 });
    expect(planned.body.data).toMatchObject({ plan: 'business', rpmOverride: 5000 });
    const response = await companyByDomain(account.key, 'stripe.com');
    expect(response.headers.get('ratelimit-limit')).toBe('5000');
  });

  it('refuses a credit with neither amount, or a negative one', async () => {
    const account = await provision();
    expect((await ops('POST', `/organizations/${account.organizationId}/wallet/credit`, {})).status).toBe(400);
    const negative = await ops('POST', `/organizations/${account.organizationId}/wallet/credit`, { purchasedCents: -5 });
    expect(negative.status).toBe(400);
    expect(negative.body.error.details[0].field).toBe('purchasedCents');
  });

  it('answers 404 for the wallet of an organization that does not exist', async () => {
    expect((await ops('GET', `/organizations/org_${'0'.repeat(24)}/wallet`)).status).toBe(404);
  });
});

async function fetchCredits(key: string) {
  return (await json(await call('/v1/credits', bearer(key)))).data;
}
