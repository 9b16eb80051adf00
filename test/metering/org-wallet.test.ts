import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HOLD_GRACE_MS, nextPeriodEnd } from '../../durable-objects/org-wallet';
import { clock } from '../../src/core/clock';
import { unitsFromCents } from '../../src/core/money';
import { bearer, call, companyByDomain, credit, json, ops, provision, wallet } from '../support/api';

function freshWallet() {
  return env.ORG_WALLET.get(env.ORG_WALLET.newUniqueId());
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

  it('refuses a hold the balances cannot cover, stating required and available units', async () => {
    const stub = freshWallet();
    await stub.credit({ purchasedUnits: 5 });
    const refused = await stub.hold(6, 1_000);
    expect(refused).toMatchObject({ ok: false, requiredUnits: 6, availableUnits: 5 });
    expect(await stub.hold(5, 1_000)).toMatchObject({ ok: true, balance: { purchasedUnits: 0, heldUnits: 5 } });
  });

  it('captures idempotently and gives back what was held but not spent', async () => {
    const stub = freshWallet();
    await stub.credit({ subscriptionUnits: 30, purchasedUnits: 100 });
    const hold = await stub.hold(80, 1_000);
    if (!hold.ok) throw new Error('hold refused');
    expect(hold.balance).toMatchObject({ subscriptionUnits: 0, purchasedUnits: 50, heldUnits: 80 });
    const first = await stub.capture(hold.holdId, 40);
    // 40 spent subscription-first: all 30 of the allowance and 10 purchased.
    expect(first).toMatchObject({ capturedUnits: 40, balance: { subscriptionUnits: 0, purchasedUnits: 90, heldUnits: 0 } });
    const second = await stub.capture(hold.holdId, 80);
    expect(second).toEqual(first);
    expect(await stub.release(hold.holdId)).toMatchObject({ purchasedUnits: 90 });
  });

  it('never captures more than was held', async () => {
    const stub = freshWallet();
    await stub.credit({ purchasedUnits: 100 });
    const hold = await stub.hold(10, 1_000);
    if (!hold.ok) throw new Error('hold refused');
    expect(await stub.capture(hold.holdId, 50)).toMatchObject({ capturedUnits: 10, balance: { purchasedUnits: 90 } });
  });

  it('releases an abandoned hold with its alarm', async () => {
    const stub = freshWallet();
    await stub.credit({ purchasedUnits: 100 });
    const hold = await stub.hold(60, 1_000);
    if (!hold.ok) throw new Error('hold refused');
    // Not yet expired: the alarm leaves it alone.
    await runDurableObjectAlarm(stub);
    expect(await stub.balance()).toMatchObject({ purchasedUnits: 40, heldUnits: 60 });

    vi.spyOn(clock, 'now').mockReturnValue(Date.now() + 1_000 + HOLD_GRACE_MS + 1);
    await runInDurableObject(stub, async (_instance, state) => {
      expect(await state.storage.getAlarm()).not.toBeNull();
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await stub.balance()).toMatchObject({ purchasedUnits: 100, heldUnits: 0 });
    const { ledger } = await stub.statement(1);
    expect(ledger[0]).toMatchObject({ kind: 'expire', holdId: hold.holdId, purchasedDelta: 60, purchasedAfter: 100 });
    // A late capture of an expired hold charges nothing.
    expect(await stub.capture(hold.holdId, 60)).toMatchObject({ capturedUnits: 0, balance: { purchasedUnits: 100 } });
  });

  it('resets the allowance at the end of the period; unused allowance expires, purchases do not', async () => {
    const stub = freshWallet();
    await stub.configure(unitsFromCents(10));
    await stub.credit({ purchasedUnits: 7 });
    const hold = await stub.hold(unitsFromCents(4), 1_000);
    if (!hold.ok) throw new Error('hold refused');
    await stub.capture(hold.holdId, unitsFromCents(4));
    expect(await stub.balance()).toMatchObject({ subscriptionUnits: unitsFromCents(6), purchasedUnits: 7 });

    const { periodEnd } = await stub.balance();
    vi.spyOn(clock, 'now').mockReturnValue(periodEnd! + 1);
    expect(await stub.balance()).toMatchObject({ subscriptionUnits: unitsFromCents(10), purchasedUnits: 7, periodEnd: nextPeriodEnd(periodEnd! + 1) });
  });

  it('keeps a ledger row for every change, each with the balance after it', async () => {
    const stub = freshWallet();
    await stub.credit({ purchasedUnits: 50 });
    const hold = await stub.hold(20, 1_000);
    if (!hold.ok) throw new Error('hold refused');
    await stub.capture(hold.holdId, 15);
    const { ledger } = await stub.statement();
    expect(ledger.map(({ kind, purchasedDelta, purchasedAfter }) => ({ kind, purchasedDelta, purchasedAfter }))).toEqual([
      { kind: 'capture', purchasedDelta: 5, purchasedAfter: 35 },
      { kind: 'hold', purchasedDelta: -20, purchasedAfter: 30 },
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
