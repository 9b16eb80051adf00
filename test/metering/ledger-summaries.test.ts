import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LEDGER_DETAIL_MS, LedgerSummaries, ROWS_PER_PASS } from '../../durable-objects/ledger-summaries';
import type { OrgWallet } from '../../durable-objects/org-wallet';
import { clock } from '../../src/core/clock';
import type { LedgerEntry } from '../../src/core/protocols/wallet';
import { settledStatement } from '../../src/services/wallet';
import { objectRowsReadWhile } from '../support/rows-read';
import { companyByDomain, credit, provision } from '../support/api';

afterEach(() => {
  vi.restoreAllMocks();
});

const MINUTE = 60_000;
/** Mid-morning UTC, so the captures of this file stay on one day. */
const T0 = Date.UTC(2026, 10, 20, 9, 0);

const walletOf = (organizationId: string) => env.ORG_WALLET.get(env.ORG_WALLET.idFromName(organizationId));

/** Runs the wallet's alarm now (flush, fold, announce), whether or not one is set. */
function runWalletAlarm(organizationId: string) {
  return runInDurableObject(walletOf(organizationId), (instance) => (instance as unknown as OrgWallet).alarm());
}

/** Every entry's deltas add up to where its balances end, entry after entry, from zero. */
function expectBalancesFollow(ledger: LedgerEntry[]) {
  let subscription = 0;
  let purchased = 0;
  for (const entry of [...ledger].sort((a, b) => a.seq - b.seq)) {
    subscription += entry.subscriptionDelta;
    purchased += entry.purchasedDelta;
    expect({ seq: entry.seq, subscription, purchased }).toEqual({ seq: entry.seq, subscription: entry.subscriptionAfter, purchased: entry.purchasedAfter });
  }
}

describe("the wallet's ledger", () => {
  it('folds a day of captures older than the detail window into one entry, keeping the balance and every running balance', async () => {
    const now = vi.spyOn(clock, 'now').mockReturnValue(T0);
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 100 });
    for (let index = 0; index < 6; index++) expect((await companyByDomain(account.key, `early-${index}.example.com`)).status).toBe(200);
    // Captured at T0: the wallet dates a capture when the gate's report reaches it.
    await settledStatement(env, account.organizationId);
    now.mockReturnValue(T0 + 30 * MINUTE);
    for (let index = 0; index < 4; index++) expect((await companyByDomain(account.key, `later-${index}.example.com`)).status).toBe(200);
    const before = await settledStatement(env, account.organizationId, 1_000);
    expect(before.ledger.filter((entry) => entry.kind === 'capture')).toHaveLength(10);

    // An hour after the first six: they fold; the four of half an hour later are still detail.
    now.mockReturnValue(T0 + LEDGER_DETAIL_MS + MINUTE);
    await runWalletAlarm(account.organizationId);
    const folded = await settledStatement(env, account.organizationId, 1_000);
    expect(folded.balance).toEqual(before.balance);
    expect(folded.ledger.filter((entry) => entry.kind === 'capture')).toHaveLength(4);
    const [day] = folded.ledger.filter((entry) => entry.kind === 'captures');
    const early = before.ledger.filter((entry) => entry.kind === 'capture').sort((a, b) => a.seq - b.seq).slice(0, 6);
    expect(day).toMatchObject({
      holdId: 'day:2026-11-20',
      seq: early.at(-1)!.seq,
      purchasedDelta: early.reduce((sum, entry) => sum + entry.purchasedDelta, 0),
      purchasedAfter: early.at(-1)!.purchasedAfter,
    });
    expectBalancesFollow(folded.ledger);

    // Later the other four join the same day's entry: one entry a day, whatever the calls.
    now.mockReturnValue(T0 + 30 * MINUTE + LEDGER_DETAIL_MS + 10 * MINUTE);
    await runWalletAlarm(account.organizationId);
    const after = await settledStatement(env, account.organizationId, 1_000);
    expect(after.ledger.filter((entry) => entry.kind === 'capture')).toEqual([]);
    const days = after.ledger.filter((entry) => entry.kind === 'captures');
    expect(days).toHaveLength(1);
    const captures = before.ledger.filter((entry) => entry.kind === 'capture');
    expect(days[0]!.purchasedDelta).toBe(captures.reduce((sum, entry) => sum + entry.purchasedDelta, 0));
    expect(after.balance).toEqual(before.balance);
    expectBalancesFollow(after.ledger);
  });

  it('keeps captures whose usage rows still wait for D1, however old by the clock, and folds them once the rows have landed', async () => {
    const now = vi.spyOn(clock, 'now').mockReturnValue(T0);
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 10 });
    // First in the outbox, queued just now, a lot D1 refuses (not even JSON): as when D1 refuses every write;
    // the call's own usage row queues behind it.
    const queue = (sql: string, ...bindings: unknown[]) => runInDurableObject(walletOf(account.organizationId), (_, state) => void state.storage.sql.exec(sql, ...bindings));
    await queue("INSERT INTO usage_lots (seq, rows, count, queued_at, ledger_seq) VALUES (0, '[{]', 1, ?, (SELECT MAX(seq) FROM ledger))", Date.now());
    expect((await companyByDomain(account.key, 'waiting.example.com')).status).toBe(200);
    const captures = async () => (await settledStatement(env, account.organizationId, 1_000)).ledger.filter((entry) => entry.kind === 'capture');
    expect(await captures()).toHaveLength(1);

    // An hour later by the clock, though only a moment of real time: the row has not landed, the capture stays.
    now.mockReturnValue(T0 + LEDGER_DETAIL_MS + MINUTE);
    await runWalletAlarm(account.organizationId);
    expect(await captures()).toHaveLength(1);

    await queue('DELETE FROM usage_lots WHERE seq = 0');
    await runWalletAlarm(account.organizationId);
    expect(await captures()).toEqual([]);
    const landed = await env.DB.prepare('SELECT COUNT(*) AS n FROM usage WHERE workspace_id = ? AND status = 200').bind(account.workspaceId).first<{ n: number }>();
    expect(landed!.n).toBe(1);
  });
  it("reads about the captures a pass folds, not the hour of detail behind them, and none past the landed bound", async () => {
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 1 });
    await runInDurableObject(walletOf(account.organizationId), (_, state) => {
      const { sql } = state.storage;
      // An hour of detail at a million calls a day, less a few: 40,000 captures, the first 20 older than the hour.
      sql.exec(
        `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 39999)
         INSERT INTO ledger (at, kind, hold_id, subscription_delta, purchased_delta, subscription_after, purchased_after)
         SELECT CASE WHEN i < 20 THEN ?1 + i ELSE ?1 + ?2 + i END, 'capture', 'use_' || i, 0, -1, 0, 1000000 - i FROM n`,
        T0, LEDGER_DETAIL_MS,
      );
      const captures = () => sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM ledger WHERE kind = 'capture'").one().n;
      const firstSeq = sql.exec<{ seq: number }>("SELECT MIN(seq) AS seq FROM ledger WHERE kind = 'capture'").one().seq;

      // Only the first ten have landed: the pass folds those and reads nothing past them.
      const landedFirst = objectRowsReadWhile(sql, () => new LedgerSummaries(sql).fold(T0 + LEDGER_DETAIL_MS + 100, firstSeq + 9));
      expect(captures()).toBe(39_990);
      // Tens of rows (48 here): by the (kind, hold_id) index, a pass read every capture four times (160,016).
      expect(landedFirst).toBeLessThan(100);
      // All landed: the next ten fold, and the young ones behind them are left unread.
      const landedAll = objectRowsReadWhile(sql, () => new LedgerSummaries(sql).fold(T0 + LEDGER_DETAIL_MS + 100, null));
      expect(captures()).toBe(39_980);
      expect(landedAll).toBeLessThan(100);
    });
  });
  it('folds every due capture over many looks, and a pass that meets its bound leaves the rest to the next, none skipped', async () => {
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 1 });
    await runInDurableObject(walletOf(account.organizationId), (_, state) => {
      const { sql } = state.storage;
      /** `due` captures at `at`, then 10 an hour later, each spending one unit. */
      const capture = (due: number, at: number) =>
        sql.exec(
          `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?3 + 9)
           INSERT INTO ledger (at, kind, hold_id, subscription_delta, purchased_delta, subscription_after, purchased_after)
           SELECT CASE WHEN i < ?3 THEN ?1 ELSE ?1 + ?2 END, 'capture', 'use_' || ?3 || '_' || i, 0, -1, 0, 0 FROM n`,
          at, LEDGER_DETAIL_MS, due,
        );
      const captures = () => sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM ledger WHERE kind = 'capture'").one().n;
      const folded = () => -sql.exec<{ units: number }>("SELECT COALESCE(SUM(purchased_delta), 0) AS units FROM ledger WHERE kind = 'captures'").one().units;
      const now = T0 + LEDGER_DETAIL_MS + 100;

      // 150 due: looks of 32, 64 and 128 take them all, and stop at the first young one.
      capture(150, T0);
      expect(new LedgerSummaries(sql).fold(now, null)).toBe(false);
      expect([captures(), folded()]).toEqual([10, 150]);
      // A wallet started afresh finds where the folds ended, and nothing left to fold.
      expect(new LedgerSummaries(sql).fold(now, null)).toBe(false);
      expect([captures(), folded()]).toEqual([10, 150]);

      // An hour on, the ten young ones and ROWS_PER_PASS + 1 more are due: more than a pass takes. The pass says
      // more remain, and the next takes the eleven left.
      capture(ROWS_PER_PASS + 1, T0 + LEDGER_DETAIL_MS);
      const later = now + LEDGER_DETAIL_MS;
      const summaries = new LedgerSummaries(sql);
      expect(summaries.fold(later, null)).toBe(true);
      expect(folded()).toBe(150 + ROWS_PER_PASS);
      expect(summaries.fold(later, null)).toBe(false);
      expect([captures(), folded()]).toEqual([10, 150 + 10 + ROWS_PER_PASS + 1]);
    });
  });
});
