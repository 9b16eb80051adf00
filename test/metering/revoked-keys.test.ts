import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RevokedKeys } from '../../durable-objects/revoked-keys';
import { WorkspaceGate } from '../../durable-objects/workspace-gate';
import { clock, utcMonthOf } from '../../src/core/clock';
import { gateOf } from '../../src/services/gate';
import { companyByDomain, credit, json, ops, provision } from '../support/api';
import { objectRowsReadWhile } from '../support/rows-read';

afterEach(() => {
  vi.restoreAllMocks();
});

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

/** The gate's stored revocations, by key. */
function storedRevocations(state: DurableObjectState): string[] {
  return state.storage.sql
    .exec<{ key_id: string }>('SELECT key_id FROM revoked_keys ORDER BY key_id')
    .toArray()
    .map((row) => row.key_id);
}

describe("a workspace gate's revoked keys", () => {
  it('refuses a revoked key an isolate still remembers, from a gate started again nine minutes later', async () => {
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 10 });
    // Served once, so this isolate remembers the key's principal.
    expect((await companyByDomain(account.key, 'a.example.com')).status).toBe(200);
    expect((await ops('POST', `/keys/${account.keyId}/revoke`)).status).toBe(200);
    vi.spyOn(clock, 'now').mockReturnValue(Date.now() + 9 * MINUTE);
    await runInDurableObject(gateOf(env, account.workspaceId), (_, state) => {
      const restarted = new WorkspaceGate(state, env as never);
      expect(restarted.verify(account.keyId)).toBe(false);
    });
    const refused = await companyByDomain(account.key, 'b.example.com');
    expect(refused.status).toBe(401);
    expect((await json(refused)).error.message).toMatch(/revoked/);
  });

  it('lets go of a revocation after a day, and the key stays refused: no isolate serves it from memory past ten minutes', async () => {
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 10 });
    const other = (await ops('POST', '/keys', { workspaceId: account.workspaceId, name: 'other' })).body.data as { id: string };
    expect((await companyByDomain(account.key, 'a.example.com')).status).toBe(200);
    expect((await ops('POST', `/keys/${account.keyId}/revoke`)).status).toBe(200);

    // A day and a minute on, another revocation takes the first out of the gate's storage and memory.
    vi.spyOn(clock, 'now').mockReturnValue(Date.now() + DAY + MINUTE);
    expect((await ops('POST', `/keys/${other.id}/revoke`)).status).toBe(200);
    const gate = gateOf(env, account.workspaceId);
    await runInDurableObject(gate, (instance, state) => {
      expect(storedRevocations(state)).toEqual([other.id]);
      expect((instance as WorkspaceGate).verify(account.keyId, false)).toBe(true);
      expect(new WorkspaceGate(state, env as never).verify(other.id, false)).toBe(false);
    });
    // The isolate's memory of the key is past its ten minutes: D1 is read, and says revoked.
    const refused = await companyByDomain(account.key, 'b.example.com');
    expect(refused.status).toBe(401);
    expect((await json(refused)).error.message).toMatch(/revoked/);
  });

  it('starts reading the revocations of the last day, not the thousands of job keys revoked before', async () => {
    const account = await provision();
    const gate = gateOf(env, account.workspaceId);
    await gate.revoke(account.keyId);
    await runInDurableObject(gate, (_, state) => {
      const sql = state.storage.sql;
      // A year of data jobs, each of whose key was revoked as it ended, none revoked since to prune them.
      sql.exec(
        `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 4999)
         INSERT INTO revoked_keys (key_id, revoked_at) SELECT 'key_job_' || i, ? - (i + 2) * 3600000 FROM n`,
        Date.now(),
      );
      let revoked!: RevokedKeys;
      const rows = objectRowsReadWhile(sql, () => (revoked = new RevokedKeys(sql)));
      expect(revoked.has(account.keyId)).toBe(true);
      expect(revoked.has('key_job_0')).toBe(true);
      expect(revoked.has('key_job_30')).toBe(false);
      // The day's 22 job keys and the account's (by the whole table, all 5,001).
      expect(rows).toBeLessThan(50);
    });
  });

  it("lets go of the spend of past months as keys are revoked, and keeps this month's", async () => {
    const account = await provision();
    const gate = gateOf(env, account.workspaceId);
    const thisMonth = utcMonthOf(Date.now()).start;
    const lastMonth = utcMonthOf(thisMonth - 1).start;
    await runInDurableObject(gate, (_, state) => {
      // A job key that spent last month and was never used again, and a key spending this month.
      state.storage.sql.exec('INSERT INTO key_spend (key_id, month_start, spent_units) VALUES (?, ?, 500), (?, ?, 700)', 'key_last_month', lastMonth, 'key_this_month', thisMonth);
    });
    await gate.revoke('key_job_ended');
    await runInDurableObject(gate, (_, state) => {
      const rows = state.storage.sql.exec<{ key_id: string }>('SELECT key_id FROM key_spend ORDER BY key_id').toArray();
      expect(rows.map((row) => row.key_id)).toEqual(['key_this_month']);
    });
    const [budget] = await gate.keyBudgets(['key_this_month']);
    expect(budget!.spentUnits).toBe(700);
  });

  it("adopts the list a gate from before kept as one stored value, and keeps it a day from then", async () => {
    const account = await provision();
    const gate = gateOf(env, account.workspaceId);
    await runInDurableObject(gate, async (_, state) => {
      await state.storage.put('revoked', ['key_old_a', 'key_old_b']);
      const restarted = new WorkspaceGate(state, env as never);
      await state.blockConcurrencyWhile(async () => {});
      expect(restarted.verify('key_old_a', false)).toBe(false);
      expect(storedRevocations(state)).toEqual(['key_old_a', 'key_old_b']);
      expect(await state.storage.get('revoked')).toBeUndefined();
    });
  });
});
