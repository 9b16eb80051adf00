import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KeyBudgets } from '../../durable-objects/key-budgets';
import { LeaseBook } from '../../durable-objects/lease-book';
import type { WorkspaceGate } from '../../durable-objects/workspace-gate';
import { HOLD_GRACE_MS } from '../../src/core/protocols/gate';
import { clock } from '../../src/core/clock';
import { gateOf } from '../../src/services/gate';
import type { UsageRow } from '../../src/core/usage';
import { settledStatement } from '../../src/services/wallet';
import { companyByDomain, credit, json, ops, provision, type Provisioned } from '../support/api';
import { dashboard, signUp } from '../support/dashboard';

const CENT = 10_000;

afterEach(() => {
  vi.restoreAllMocks();
});

function setLimit(keyId: string, monthlyLimitCents: number | null) {
  return ops('PUT', `/keys/${keyId}/limit`, { monthlyLimitCents });
}

/** An organization with purchased money to spare (pay as you go: no allowance), and a window that never gets in the way. */
async function fundedKey(): Promise<Provisioned> {
  const account = await provision();
  await ops('PUT', `/organizations/${account.organizationId}/plan`, { plan: 'payg', rpm: 1_000 });
  await credit(account.organizationId, { purchasedCents: 1_000 });
  return account;
}

async function refusal(response: Response) {
  expect(response.status).toBe(402);
  return (await json(response)).error as { code: string; message: string };
}

describe("a key's monthly spend limit", () => {
  it('lets exactly the calls that fit through 50 concurrent calls; the rest are 402 naming the key limit, not the balance', async () => {
    const account = await fundedKey();
    expect((await setLimit(account.keyId, 20)).body.data.monthlyLimitCents).toBe(20);

    const responses = await Promise.all(Array.from({ length: 50 }, () => companyByDomain(account.key, 'stripe.com')));
    const refused = responses.filter((response) => response.status !== 200);
    expect(responses.filter((response) => response.status === 200)).toHaveLength(20);
    expect(refused).toHaveLength(30);
    for (const response of refused) {
      const error = await refusal(response);
      expect(error.code).toBe('INSUFFICIENT_CREDITS');
      expect(error.message).toContain('past its own monthly spend limit of 20 cents');
      expect(error.message).toContain("not the organization's balance");
    }

    // Exactly the 20 that fit were charged; the organization keeps the rest of its money.
    const { balance, ledger } = await settledStatement(env, account.organizationId, 1_000);
    expect(ledger.filter((entry) => entry.kind === 'capture')).toHaveLength(20);
    expect(balance).toMatchObject({ purchasedUnits: 980 * CENT, heldUnits: 0 });

    // Once nothing is in flight the message gives the month's figures and the reset date.
    const next = await refusal(await companyByDomain(account.key, 'stripe.com'));
    expect(next.message).toMatch(/it has spent 20 cents this month\. The limit resets on \d{4}-\d{2}-01 \(UTC\)/);
    // Another key of the same workspace is not held to it.
    const other = await ops('POST', '/keys', { workspaceId: account.workspaceId });
    expect((await companyByDomain(other.body.data.key, 'stripe.com')).status).toBe(200);
  });

  it('counts calls in flight: a call that would pass the limit with them is refused while they run', async () => {
    const account = await fundedKey();
    await setLimit(account.keyId, 2);
    // slow.com answers after 2 s: its calls hold their money that long.
    const slow = Array.from({ length: 2 }, () => companyByDomain(account.key, 'slow.com'));
    await vi.waitFor(async () => expect((await gateOf(env, account.workspaceId).keyBudgets([account.keyId]))[0]!.heldUnits).toBe(2 * CENT));
    const error = await refusal(await companyByDomain(account.key, 'example.com'));
    expect(error.message).toContain('it has spent 0 cents this month and its calls in flight hold 2 cents more');
    expect((await Promise.all(slow)).map((response) => response.status)).toEqual([200, 200]);
    expect((await gateOf(env, account.workspaceId).keyBudgets([account.keyId]))[0]).toMatchObject({ spentUnits: 2 * CENT, heldUnits: 0 });
  });

  it('works again from the first instant of the next calendar month, UTC', async () => {
    const now = vi.spyOn(clock, 'now').mockReturnValue(Date.UTC(2031, 0, 31, 23, 59, 30));
    const account = await fundedKey();
    await setLimit(account.keyId, 2);
    expect((await companyByDomain(account.key, 'one.example.com')).status).toBe(200);
    expect((await companyByDomain(account.key, 'two.example.com')).status).toBe(200);
    const error = await refusal(await companyByDomain(account.key, 'three.example.com'));
    expect(error.message).toContain('The limit resets on 2031-02-01 (UTC)');

    now.mockReturnValue(Date.UTC(2031, 1, 1, 0, 0, 0));
    expect((await companyByDomain(account.key, 'three.example.com')).status).toBe(200);
    expect((await gateOf(env, account.workspaceId).keyBudgets([account.keyId]))[0]).toMatchObject({ spentUnits: CENT, resetsAt: Date.UTC(2031, 2, 1) });
  });

  it('follows a change from the very next request, for a key an isolate already remembers', async () => {
    const account = await fundedKey();
    // The key is now remembered (without a limit) by this isolate, and its gate has seen it.
    expect((await companyByDomain(account.key, 'one.example.com')).status).toBe(200);

    await setLimit(account.keyId, 1);
    expect((await refusal(await companyByDomain(account.key, 'two.example.com'))).message).toContain('monthly spend limit of 1 cent');
    await setLimit(account.keyId, 3);
    expect((await companyByDomain(account.key, 'two.example.com')).status).toBe(200);
    await setLimit(account.keyId, 2);
    expect((await companyByDomain(account.key, 'three.example.com')).status).toBe(402);
    await setLimit(account.keyId, null);
    expect((await companyByDomain(account.key, 'three.example.com')).status).toBe(200);
    // A limit set when the key was made holds from its first call.
    const capped = await ops('POST', '/keys', { workspaceId: account.workspaceId, monthlyLimitCents: 0 });
    expect(capped.body.data.monthlyLimitCents).toBe(0);
    expect((await refusal(await companyByDomain(capped.body.data.key, 'one.example.com'))).message).toContain('monthly spend limit of 0 cents');
  });

  it('refuses, unbilled, a late capture the key no longer has room for', async () => {
    const account = await fundedKey();
    await setLimit(account.keyId, 1);
    const gate = gateOf(env, account.workspaceId);
    const row = (id: string, status: number): UsageRow => ({
      id,
      requestId: `req_${id}`,
      organizationId: account.organizationId,
      workspaceId: account.workspaceId,
      keyId: account.keyId,
      operation: 'test.key-limit',
      status,
      errorCode: null,
      costUnits: status === 200 ? CENT : 0,
      cached: false,
      latencyMs: 1,
      createdAt: new Date().toISOString(),
    });
    const first = row(`use_${'a'.repeat(24)}`, 0);
    expect((await gate.meter({ keyId: account.keyId, amountUnits: CENT, ttlMs: 1_000, usage: first })).kind).toBe('held');
    // The first call outlives its hold; its room goes back and a second call spends it.
    vi.spyOn(clock, 'now').mockReturnValue(Date.now() + 1_000 + HOLD_GRACE_MS + 1);
    await runDurableObjectAlarm(gate);
    const second = row(`use_${'b'.repeat(24)}`, 0);
    expect((await gate.meter({ keyId: account.keyId, amountUnits: CENT, ttlMs: 1_000, usage: second })).kind).toBe('held');
    expect((await gate.settle(second.id, CENT, row(second.id, 200))).kind).toBe('captured');

    expect(await gate.settle(first.id, CENT, row(first.id, 200))).toMatchObject({ kind: 'key_limit', limitUnits: CENT, spentUnits: CENT });
    const { ledger } = await settledStatement(env, account.organizationId);
    expect(ledger.filter((entry) => entry.kind === 'capture').map((entry) => entry.holdId)).toEqual([second.id]);
  });

  it("keeps a key's spend through a restart, from charges sent to the wallet and charges still waiting alike", async () => {
    const account = await fundedKey();
    expect((await companyByDomain(account.key, 'one.example.com')).status).toBe(200);
    expect((await companyByDomain(account.key, 'two.example.com')).status).toBe(200);
    const gate = gateOf(env, account.workspaceId);
    // The clock stands still from here to the third charge, so that charge comes within REPORT_MS of the
    // flush's report and waits for the alarm; on a slow machine a moving clock let it go at once, in the
    // turn that stored it, and the waiting list read back empty.
    vi.spyOn(clock, 'now').mockReturnValue(Date.now());
    // Both charges leave the waiting list: their spend is now in the per-key sums.
    await gate.flush();
    await runInDurableObject(gate, async (object, state) => {
      const instance = object as unknown as WorkspaceGate;
      const usage: UsageRow = {
        id: `use_${'c'.repeat(24)}`,
        requestId: 'req_restart',
        organizationId: account.organizationId,
        workspaceId: account.workspaceId,
        keyId: account.keyId,
        operation: 'test.key-limit',
        status: 0,
        errorCode: null,
        costUnits: 0,
        cached: false,
        latencyMs: 1,
        createdAt: new Date(clock.now()).toISOString(),
      };
      expect((await instance.meter({ keyId: account.keyId, amountUnits: CENT, ttlMs: 1_000, usage })).kind).toBe('held');
      expect((await instance.settle(usage.id, CENT, { ...usage, status: 200, costUnits: CENT })).kind).toBe('captured');
      // What a restarted object reads back: the sums, and this third charge from the waiting list.
      const book = new LeaseBook(state.storage.sql);
      expect(book.waitingChargesOf(account.keyId).map((charge) => charge.id)).toEqual([usage.id]);
      const restarted = new KeyBudgets(state.storage.sql, (keyId) => book.waitingChargesOf(keyId));
      expect(restarted.budgets([account.keyId], clock.now())[0]).toMatchObject({ spentUnits: 3 * CENT, heldUnits: 0 });
    });
    // And after the third charge is sent too.
    await gate.flush();
    await runInDurableObject(gate, (_object, state) => {
      const book = new LeaseBook(state.storage.sql);
      expect(book.waitingChargesOf(account.keyId)).toEqual([]);
      expect(new KeyBudgets(state.storage.sql, (keyId) => book.waitingChargesOf(keyId)).budgets([account.keyId], clock.now())[0]!.spentUnits).toBe(3 * CENT);
    });
  });
});

describe('key limits in the dashboard and the operator API', () => {
  it('sets a limit when a key is made and changes it later, shows each key with its spend this month, and validates the figure', async () => {
    const owner = await signUp();
    await ops('PUT', `/organizations/${owner.organizationId}/plan`, { plan: 'business' });
    await credit(owner.organizationId, { purchasedCents: 100 });
    const base = `/api/workspaces/${owner.workspaceId}/keys`;

    // A form sends its fields as text: "5" is 5 cents, an empty field no limit.
    const limited = await owner.json('POST', base, { name: 'agent', monthlyLimitCents: '5' });
    expect(limited.status).toBe(201);
    expect(limited.body.data.monthlyLimitCents).toBe(5);
    const open = await owner.json('POST', base, { name: 'open', monthlyLimitCents: '' });
    expect(open.body.data.monthlyLimitCents).toBeNull();
    expect((await companyByDomain(limited.body.data.key, 'one.example.com')).status).toBe(200);

    const listed = await owner.json('GET', base);
    const byName = Object.fromEntries(listed.body.data.keys.map((key: { name: string }) => [key.name, key]));
    expect(byName.agent).toMatchObject({ monthlyLimitCents: 5, spentThisMonthCents: 1, inFlightCents: 0, monthEndsAt: expect.stringMatching(/-01T00:00:00\.000Z$/) });
    expect(byName.open).toMatchObject({ monthlyLimitCents: null, spentThisMonthCents: 0 });

    const lowered = await owner.json('PUT', `${base}/${limited.body.data.id}/limit`, { monthlyLimitCents: '1' });
    expect(lowered.body.data.monthlyLimitCents).toBe(1);
    expect((await companyByDomain(limited.body.data.key, 'two.example.com')).status).toBe(402);

    const page = await dashboard(`/w/${owner.workspaceId}/keys`, { headers: { cookie: `sluice_session=${owner.cookie}` } });
    const html = await page.text();
    expect(html).toContain(`data-limit-key-id="${limited.body.data.id}"`);
    expect(html).toMatch(new RegExp(`data-limit-key-id="${limited.body.data.id}"[\\s\\S]*?data-spent-cents="1"[\\s\\S]*?data-limit-cents="1"`));

    for (const bad of [-1, 1.5, 'lots']) {
      const refused = await owner.json('PUT', `${base}/${limited.body.data.id}/limit`, { monthlyLimitCents: bad });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [expect.objectContaining({ field: 'monthlyLimitCents', location: 'body' })] });
    }
    expect((await ops('PUT', `/keys/${limited.body.data.id}/limit`, { monthlyLimitCents: -5 })).status).toBe(400);

    // A stranger's request for the key reads as missing; a revoked key's limit no longer changes.
    const stranger = await signUp();
    expect((await stranger.json('PUT', `${base}/${limited.body.data.id}/limit`, { monthlyLimitCents: 50 })).status).toBe(404);
    await owner.json('POST', `${base}/${limited.body.data.id}/revoke`);
    expect((await owner.json('PUT', `${base}/${limited.body.data.id}/limit`, { monthlyLimitCents: 50 })).status).toBe(409);
  });
});
