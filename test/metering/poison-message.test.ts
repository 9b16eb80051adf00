import { runDurableObjectAlarm } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FIRST_RETRY_MS, PARKED_RETRY_MS, SEND_ATTEMPTS } from '../../durable-objects/lease-book';
import type { SyncMessage } from '../../src/core/protocols/lease';
import { OrgWallet } from '../../durable-objects/org-wallet';
import { clock } from '../../src/core/clock';
import { gateOf } from '../../src/services/gate';
import { settledStatement } from '../../src/services/wallet';
import { bearer, call, companyByDomain, credit, eventually, json, provision, wallet } from '../support/api';

afterEach(() => {
  vi.restoreAllMocks();
});

/**
 * The wallet's `sync`, refusing one message of one workspace as a CHECK constraint would (before anything
 * is applied: a refusal rolls the wallet's transaction back) until `cure()`: the first message of that
 * workspace that carries a charge. Every message that workspace sends is written into `sent`.
 */
function poisonedWallet(workspaceId: string) {
  const original = OrgWallet.prototype.sync;
  const sent: SyncMessage[] = [];
  const state = { refusing: true, seq: null as number | null };
  vi.spyOn(OrgWallet.prototype, 'sync').mockImplementation(function (this: OrgWallet, workspace: string, message: SyncMessage) {
    if (workspace !== workspaceId) return original.call(this, workspace, message);
    sent.push(structuredClone(message));
    if (state.seq === null && message.charges.length > 0) state.seq = message.seq;
    if (state.refusing && message.seq === state.seq) throw new Error('CHECK constraint failed: purchased_units >= 0');
    return original.call(this, workspace, message);
  });
  return {
    sent,
    cure: () => (state.refusing = false),
    get seq() {
      return state.seq;
    },
    attemptsOfPoisoned: () => sent.filter((message) => message.seq === state.seq).length,
  };
}

describe('a message the wallet refuses every time', () => {
  it('is retried a bounded number of times, parked and alerted with its ids; the lease keeps serving, a draw is told when to retry, and once the wallet takes it it is applied once', async () => {
    // Mid-month, on the injectable clock: the test, not the machine, says when each attempt is due.
    let now = Date.UTC(2030, 4, 15, 12, 0, 0);
    vi.spyOn(clock, 'now').mockImplementation(() => now);
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const notes = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 8 });
    const gate = gateOf(env, account.workspaceId);
    const wire = poisonedWallet(account.workspaceId);
    /** Runs the gate's alarm (the one it set may run first, on its own) and waits for the attempts to reach `count`. */
    const attempted = async (count: number) => {
      await runDurableObjectAlarm(gate);
      expect(await eventually(async () => wire.attemptsOfPoisoned(), (attempts) => attempts >= count)).toBe(count);
    };

    // The first call draws a lease of 2 cents (a quarter of what no lease holds) and spends one.
    expect((await companyByDomain(account.key, 'first.example.com')).status).toBe(200);
    // The report carrying that call's charge is refused (by this alarm, or the one the call set, whichever
    // runs first); each attempt waits longer than the one before.
    await attempted(1);
    const poisoned = wire.sent.find((message) => message.seq === wire.seq)!;
    expect(poisoned.charges).toHaveLength(1);
    for (let attempt = 2; attempt <= SEND_ATTEMPTS; attempt++) {
      // Not yet due: an alarm and a call in between do not send it.
      now += FIRST_RETRY_MS * 2 ** (attempt - 2) - 1;
      await runDurableObjectAlarm(gate);
      expect(wire.attemptsOfPoisoned()).toBe(attempt - 1);
      now += 1;
      await attempted(attempt);
    }

    // (2) Parked, and said so at level error with the organization, workspace, message and charge ids.
    const alerts = errors.mock.calls.map(([line]) => JSON.parse(String(line)) as Record<string, unknown>).filter((line) => String(line.note).startsWith('gate message parked'));
    expect(alerts).toEqual([
      expect.objectContaining({
        level: 'error',
        organizationId: account.organizationId,
        workspaceId: account.workspaceId,
        seq: wire.seq,
        chargeIds: poisoned.charges.map((charge) => charge.id),
        attempts: SEND_ATTEMPTS,
        error: expect.stringMatching(/CHECK constraint failed/),
      }),
    ]);

    // (3) The lease still serves a call that fits in it; a call that needs a draw is told when to come
    // back (not 500, not 402: the money is there); /v1/credits and the statement still answer. (1) None
    // of them, nor the alarm, sends the parked message again before its slow schedule.
    now += PARKED_RETRY_MS / 2;
    expect((await companyByDomain(account.key, 'fits.example.com')).status).toBe(200);
    const needsDraw = await companyByDomain(account.key, 'needs-a-draw.example.com');
    expect(needsDraw.status).toBe(409);
    expect((await json(needsDraw)).error).toMatchObject({ code: 'CONFLICT', retryAfter: PARKED_RETRY_MS / 2 / 1_000 });
    expect(needsDraw.headers.get('retry-after')).toBe(String(PARKED_RETRY_MS / 2 / 1_000));
    // What this workspace spent and the wallet has not heard of is taken off the wallet's figures.
    expect((await json(await call('/v1/credits', bearer(account.key)))).data).toMatchObject({ purchasedBalanceCents: 6 });
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(8);
    await runDurableObjectAlarm(gate);
    expect(wire.attemptsOfPoisoned()).toBe(SEND_ATTEMPTS);
    expect(wire.sent.filter((message) => message.seq > wire.seq!)).toEqual([]);

    // (4) The wallet takes it again: the parked message goes on its slow schedule, once, and the charges
    // that waited behind it follow; draws work again and the balance is exact to the unit.
    wire.cure();
    now += PARKED_RETRY_MS / 2;
    await attempted(SEND_ATTEMPTS + 1);
    expect(notes.mock.calls.map(([line]) => String(line))).toContainEqual(expect.stringContaining(`"note":"parked gate message delivered","organizationId":"${account.organizationId}"`));
    expect((await companyByDomain(account.key, 'after.example.com')).status).toBe(200);
    const { balance, ledger } = await settledStatement(env, account.organizationId);
    expect(wire.attemptsOfPoisoned()).toBe(SEND_ATTEMPTS + 1);
    const captures = ledger.filter((entry) => entry.kind === 'capture');
    expect(captures).toHaveLength(3);
    expect(new Set(captures.map((entry) => entry.holdId)).size).toBe(3);
    expect(captures.map((entry) => entry.holdId)).toContain(poisoned.charges[0]!.id);
    expect(balance).toMatchObject({ purchasedUnits: 50_000, heldUnits: 0 });
    const rows = await eventually(
      () => env.DB.prepare('SELECT id, status, cost_units AS cost FROM usage WHERE workspace_id = ? ORDER BY status').bind(account.workspaceId).all(),
      (result) => result.results.length === 4,
    );
    expect(rows.results.map(({ status, cost }) => ({ status, cost }))).toEqual([
      { status: 200, cost: 10_000 },
      { status: 200, cost: 10_000 },
      { status: 200, cost: 10_000 },
      { status: 409, cost: 0 },
    ]);
  });
});
