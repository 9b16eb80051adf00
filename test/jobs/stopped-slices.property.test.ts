import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { IdempotencyStore } from '../../durable-objects/idempotency-store';
import { clock } from '../../src/core/clock';
import { unitsFromCents } from '../../src/core/money';
import type { Env } from '../../src/core/config';
import { createKey } from '../../src/services/accounts';
import { runSlice } from '../../src/services/jobs/run';
import { findJob } from '../../src/services/jobs/store';
import { gateOf } from '../../src/services/gate';
import { settledStatement } from '../../src/services/wallet';
import { credit, ops, provision } from '../support/api';
import { losingSettleAnswers } from '../support/lost-answers';
import { landedUsageOfJob, storedJob } from './support';

/**
 * A data job's slices stopped and run again: whatever mix of slices that stop after their calls and before
 * writing them, answers that are not kept, settles whose answers are lost, runs that come back hours later,
 * gates that restart and waits for credits, once the job has ended every item has ended, each success was
 * charged once (one charged usage row, one capture) and each failure not at all, and the job's spend, its
 * items' costs, the usage charged and the wallet's captures are the same sum.
 */

afterEach(() => {
  vi.restoreAllMocks();
});

const HOUR = 60 * 60 * 1000;

/** What goes wrong on one run of the job's slice. */
interface Fault {
  /** The slice stops after its calls and before it writes their outcomes (the step's process died). */
  stops: boolean;
  /** No answer is kept for a retry (the process died between the charge and the kept answer). */
  keepsNothing: boolean;
  /** The run comes back this long after the one before (a run revived by the nightly check). */
  laterBy: number;
  /** The workspace's gate restarts after the run (evicted): its holds and the rows `meter` brought are gone. */
  restartsGate: boolean;
  /** Each success's settle in the run loses its first answers on the way back: once (asked again), or twice (a 500, charged). */
  losesAnswers: 0 | 1 | 2;
}

const fault: fc.Arbitrary<Fault> = fc.record({
  stops: fc.boolean(),
  keepsNothing: fc.boolean(),
  laterBy: fc.constantFrom(0, 0, 2 * HOUR),
  restartsGate: fc.boolean(),
  losesAnswers: fc.constantFrom(0 as const, 0 as const, 1 as const, 2 as const),
});

/** The job's bindings, with a D1 whose slice-ending write (its outcomes, counts and status in one batch) fails. */
function stoppingBeforeItsWrite(bindings: Env): Env {
  const db = bindings.DB;
  const stopping = new Proxy(db, {
    get(target, property) {
      if (property === 'batch') {
        return async (statements: D1PreparedStatement[]) => {
          // The slice's last batch carries its outcomes and four statements more; a job hour's admission has two.
          if (statements.length >= 4) throw new Error('the slice stopped before writing');
          return target.batch(statements);
        };
      }
      const value = Reflect.get(target, property) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { ...bindings, DB: stopping };
}

describe('a data job whose slices stop and run again', () => {
  it('charges each success once and each failure never, and its spend is the items\', the usage\'s and the wallet\'s', { timeout: 240_000 }, async () => {
    let offset = 0;
    vi.spyOn(clock, 'now').mockImplementation(() => Date.now() + offset);
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.boolean(), { minLength: 1, maxLength: 10 }), fc.array(fault, { maxLength: 4 }), fc.integer({ min: 0, max: 6 }), async (fails, faults, startCents) => {
        run += 1;
        // Often too little for the whole job: it waits for credits, and is topped up, as many times as it takes. A
        // takeover refused for money then keeps a charged dead call's id (decisions.md, "A takeover that fails keeps
        // a charged dead call's id").
        const account = await provision({ plan: 'payg' });
        if (startCents > 0) await credit(account.organizationId, { purchasedCents: startCents });
        let putIn = startCents;
        await ops('PUT', `/organizations/${account.organizationId}/plan`, { plan: 'payg', rpm: 1_000_000 });
        const inputs = fails.map((failing, index) => ({ domain: failing ? 'status500.com' : `stopped-${run}-${index}.example.com` }));
        const job = await storedJob(inputs.length, { operation: 'linkedin/get-company-by-domain', inputs, account });
        const key = await createKey(env.DB, env.KEY_ENCRYPTION_KEY, { workspaceId: job.workspaceId, scope: 'data_job', name: `data job ${job.id}` });
        await env.DB.prepare('UPDATE data_jobs SET key_id = ? WHERE id = ?').bind(key.id, job.id).run();

        // A claim left running is asked after every second of its call's time limit, then when it lapses.
        for (let step = 0; step < 400; step += 1) {
          const { stops, keepsNothing, laterBy, restartsGate, losesAnswers } = faults[step] ?? { stops: false, keepsNothing: false, laterBy: 0, restartsGate: false, losesAnswers: 0 };
          offset += laterBy;
          // As if `complete` never ran: the claim stays running, with the call's id, until it lapses.
          const keeping = keepsNothing ? vi.spyOn(IdempotencyStore.prototype, 'complete').mockReturnValue(false) : null;
          const losing = losesAnswers > 0 ? losingSettleAnswers(losesAnswers) : null;
          const outcome = await runSlice(stops ? stoppingBeforeItsWrite(env) : env, job.id).catch((error: unknown) => {
            if (String(error).includes('the slice stopped before writing')) return null;
            throw error;
          });
          keeping?.mockRestore();
          losing?.restore();
          if (restartsGate) await runInDurableObject(gateOf(env, job.workspaceId), (_, state) => state.abort('restart')).catch(() => undefined);
          if (outcome?.kind === 'done') break;
          // A wait (a retry's backoff, a first call still claimed) is over when the clock says so.
          if (outcome?.kind === 'wait') offset += outcome.ms + 1;
          if (outcome?.kind === 'wait' && outcome.wakeable) {
            putIn += 3;
            await credit(account.organizationId, { purchasedCents: 3 });
          }
        }

        const ended = (await findJob(env.DB, job.id))!;
        const items = (await env.DB.prepare('SELECT idx, status, cost_units AS cost FROM data_job_items WHERE job_id = ? ORDER BY idx').bind(job.id).all<{ idx: number; status: string; cost: number }>()).results;
        // Nothing lost: every item ended, a success where the upstream answers and a failure where it never does.
        expect(items.map((item) => item.status)).toEqual(fails.map((failing) => (failing ? 'failed' : 'succeeded')));
        expect(items.filter((item) => item.status === 'failed').every((item) => item.cost === 0)).toBe(true);
        const spent = items.reduce((sum, item) => sum + item.cost, 0);
        expect(ended.spentUnits).toBe(spent);

        // Charged once: one charged usage row per success, their sum the job's spend, and the wallet's captures the same.
        const usage = await landedUsageOfJob(account, job.id);
        const charged = usage.filter((row) => row.status === 200 && row.cost_units > 0);
        expect(charged).toHaveLength(fails.filter((failing) => !failing).length);
        expect(charged.reduce((sum, row) => sum + row.cost_units, 0)).toBe(spent);
        const { balance, ledger } = await settledStatement(env, account.organizationId, 100_000);
        // Captures older than the wallet's detail hour are folded into a row a day (`captures`).
        const captured = 0 - ledger.filter((entry) => entry.kind === 'capture' || entry.kind === 'captures').reduce((sum, entry) => sum + entry.purchasedDelta + entry.subscriptionDelta, 0);
        expect(captured).toBe(spent);
        expect(balance.heldUnits).toBe(0);
        expect(balance.purchasedUnits + captured).toBe(unitsFromCents(putIn));
      }),
      { numRuns: 25 },
    );
  });
});
