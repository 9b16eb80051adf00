import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { USAGE_FLUSH_MS, UsageOutbox } from '../../durable-objects/usage-outbox';
import type { UsageRow } from '../../src/core/usage';

/** `count` usage rows with ids of their own under `prefix`, as a gate's message carries them. */
function rows(prefix: string, count: number, from = 0): UsageRow[] {
  return Array.from({ length: count }, (_, index) => ({
    id: `${prefix}_${String(from + index).padStart(4, '0')}`, requestId: `req_${prefix}_${from + index}`, organizationId: 'org_outbox', workspaceId: 'ws_outbox',
    keyId: 'key_outbox', operation: 'linkedin.get-company-by-domain', status: 200, errorCode: null, costUnits: 100, cached: false, latencyMs: 5,
    createdAt: '2026-11-29T10:00:00.000Z',
  }));
}

/** D1 as the outbox sees it, noting how many rows each write carried; `refuse` makes a write fail before D1 sees it. */
function recordingDb(refuse = false): { db: D1Database; writes: number[] } {
  const writes: number[] = [];
  const db = {
    prepare: (sql: string) => ({
      bind: (json: string) => {
        const statement = env.DB.prepare(sql).bind(json);
        return {
          run: async () => {
            if (refuse) throw new Error('D1_ERROR: the database is not reachable');
            if (sql.includes('INSERT OR IGNORE INTO usage')) writes.push((JSON.parse(json) as unknown[]).length);
            return statement.run();
          },
        };
      },
    }),
  } as unknown as D1Database;
  return { db, writes };
}

async function landed(prefix: string): Promise<string[]> {
  const { results } = await env.DB.prepare('SELECT id FROM usage WHERE id LIKE ? ORDER BY rowid').bind(`${prefix}_%`).all<{ id: string }>();
  return results.map((row) => row.id);
}

/** Runs `work` with a wallet object's own SQLite (a fresh wallet each time). */
function inWallet<T>(work: (sql: SqlStorage) => Promise<T> | T): Promise<T> {
  return runInDurableObject(env.ORG_WALLET.get(env.ORG_WALLET.newUniqueId()), (_, state) => work(state.storage.sql));
}

const lotsIn = (sql: SqlStorage) => sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM usage_lots').one().n;

describe("the wallet's usage outbox", () => {
  it("keeps a message's rows as one lot, and writes a backlog to D1 in order, each row once, in writes of whole lots of about a hundred rows", async () => {
    const prefix = `lots${crypto.randomUUID().slice(0, 8)}`;
    const { writes } = await inWallet(async (sql) => {
      const outbox = new UsageOutbox(sql);
      const sent = rows(prefix, 211);
      outbox.add(sent.slice(0, 70));
      outbox.add(sent.slice(70, 140));
      outbox.add(sent.slice(140, 210));
      outbox.add(sent.slice(210));
      // A row queued twice (a message's rows and a refused call's, say) lands once.
      outbox.add(sent.slice(0, 1));
      expect(lotsIn(sql)).toBe(5);
      const recording = recordingDb();
      await outbox.flush(recording.db);
      expect(lotsIn(sql)).toBe(0);
      expect(outbox.dueAt()).toBeNull();
      return recording;
    });
    expect(writes).toEqual([140, 72]);
    expect(await landed(prefix)).toEqual(rows(prefix, 211).map((row) => row.id));
  });

  it('keeps every lot D1 refused, in its place, and writes them once D1 takes them', async () => {
    const prefix = `kept${crypto.randomUUID().slice(0, 8)}`;
    await inWallet(async (sql) => {
      const outbox = new UsageOutbox(sql);
      outbox.add(rows(prefix, 3));
      outbox.add(rows(prefix, 2, 3));
      await expect(outbox.flush(recordingDb(true).db)).rejects.toThrow('not reachable');
      expect(lotsIn(sql)).toBe(2);
      await outbox.flush(env.DB);
      expect(lotsIn(sql)).toBe(0);
    });
    expect(await landed(prefix)).toEqual(rows(prefix, 5).map((row) => row.id));
  });

  it('says which ledger entries have their rows in D1: those before the oldest lot still waiting was queued, in the ledger\'s order, not by the clock', async () => {
    const prefix = `bound${crypto.randomUUID().slice(0, 8)}`;
    await inWallet(async (sql) => {
      const outbox = new UsageOutbox(sql);
      const entry = () => sql.exec<{ seq: number }>("INSERT INTO ledger (at, kind, hold_id, subscription_delta, purchased_delta, subscription_after, purchased_after) VALUES (0, 'capture', ?, 0, -1, 0, 0) RETURNING seq", crypto.randomUUID()).one().seq;
      expect(outbox.landedThrough()).toBeNull();
      const first = entry();
      outbox.add(rows(prefix, 2));
      entry();
      outbox.add(rows(prefix, 1, 2));
      await expect(outbox.flush(recordingDb(true).db)).rejects.toThrow('not reachable');
      // Both lots wait: the captures written after the first was queued may be theirs.
      expect(outbox.landedThrough()).toBe(first);
      await outbox.flush(env.DB);
      expect(outbox.landedThrough()).toBeNull();
      // A wallet whose lots were queued before the bound was kept: its table gains the column, and such a lot
      // holds every entry back until it lands.
      sql.exec('DROP TABLE usage_lots');
      sql.exec('CREATE TABLE usage_lots (seq INTEGER PRIMARY KEY, rows TEXT NOT NULL, count INTEGER NOT NULL, queued_at INTEGER NOT NULL)');
      sql.exec('INSERT INTO usage_lots (rows, count, queued_at) VALUES (?, 1, 0)', JSON.stringify(rows(prefix, 1, 4)));
      const upgraded = new UsageOutbox(sql);
      expect(upgraded.landedThrough()).toBe(0);
      upgraded.add(rows(prefix, 1, 3));
      await upgraded.flush(env.DB);
      expect(upgraded.landedThrough()).toBeNull();
    });
  });

  it('takes over the rows a wallet from before lots left waiting (a row each): first, in their order, before any new lot', async () => {
    const prefix = `older${crypto.randomUUID().slice(0, 8)}`;
    const [first, second, later] = rows(prefix, 3);
    await inWallet(async (sql) => {
      sql.exec('CREATE TABLE usage_outbox (id TEXT PRIMARY KEY, row TEXT NOT NULL, queued_at INTEGER NOT NULL)');
      // Inserted out of id order: the order kept is the order they were queued in.
      sql.exec('INSERT INTO usage_outbox (id, row, queued_at) VALUES (?, ?, ?), (?, ?, ?)', second!.id, JSON.stringify(second), 1_000, first!.id, JSON.stringify(first), 2_000);
      const outbox = new UsageOutbox(sql);
      expect(sql.exec("SELECT name FROM sqlite_master WHERE name = 'usage_outbox'").toArray()).toEqual([]);
      expect(outbox.dueAt()).toBe(1_000 + USAGE_FLUSH_MS);
      outbox.add([later!]);
      // Started again, it finds nothing more to take over.
      new UsageOutbox(sql);
      expect(lotsIn(sql)).toBe(2);
      await outbox.flush(env.DB);
    });
    expect(await landed(prefix)).toEqual([second!.id, first!.id, later!.id]);
  });
});
