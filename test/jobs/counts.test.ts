import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { unitsFromCents } from '../../src/core/money';
import { type ItemWrite, sliceWrites } from '../../src/services/jobs/store';
import { storedJob } from './support';

const CENT = unitsFromCents(1);

/** Items `from` to `to` (excluded) written succeeded at a cent each, as a slice writes them. */
const successes = (from: number, to: number): ItemWrite[] =>
  Array.from({ length: to - from }, (_, n) => ({ idx: from + n, status: 'succeeded', data: { n: from + n }, costUnits: CENT, attempts: 1 }));

/** Ends a slice with these outcomes, in the batch the runner writes, and answers the rows D1 read for it. */
async function writeSlice(jobId: string, writes: ItemWrite[]): Promise<number> {
  const end = { window: { resetAt: 0, limit: 60, remaining: 60 }, resumeAt: 0, status: 'running' as const, reason: null, waitingOn: null };
  const results = await env.DB.batch(await sliceWrites(env, jobId, writes, end));
  return results.reduce((sum, result) => sum + result.meta.rows_read, 0);
}

const counts = (jobId: string) =>
  env.DB.prepare('SELECT succeeded, failed, spent_units AS spentUnits FROM data_jobs WHERE id = ?').bind(jobId).first<{ succeeded: number; failed: number; spentUnits: number }>();

describe("a job's counts", () => {
  it('follow its items as they are decided: a retry to come counts nothing, and a slice written again counts nothing twice', async () => {
    const job = await storedJob(6);
    const slice: ItemWrite[] = [
      ...successes(0, 3),
      { idx: 3, status: 'failed', code: 'NOT_FOUND', message: 'No company at that domain.', attempts: 1 },
      { idx: 4, status: 'pending', attempts: 1, retryAt: Date.now() + 1_000 },
    ];
    await writeSlice(job.id, slice);
    expect(await counts(job.id)).toEqual({ succeeded: 3, failed: 1, spentUnits: 3 * CENT });
    // The slice run again after a crash: its items are decided already, so nothing moves.
    await writeSlice(job.id, slice);
    expect(await counts(job.id)).toEqual({ succeeded: 3, failed: 1, spentUnits: 3 * CENT });
    // The retried item and the last one decided later, at another price.
    await writeSlice(job.id, [
      { idx: 4, status: 'succeeded', data: null, costUnits: 2 * CENT, attempts: 2 },
      { idx: 5, status: 'failed', code: 'PROVIDER_ERROR', message: 'The vendor failed.', attempts: 4 },
    ]);
    expect(await counts(job.id)).toEqual({ succeeded: 4, failed: 2, spentUnits: 5 * CENT });
  });

  it("cost a slice the same rows whatever the job has decided before it: no count over the job's items", async () => {
    const small = await storedJob(200);
    const large = await storedJob(5_100);
    await writeSlice(small.id, successes(0, 100));
    // 5,000 items decided, written in one statement per thousand (the runner writes a hundred a slice).
    for (let from = 0; from < 5_000; from += 1_000) await writeSlice(large.id, successes(from, from + 1_000));
    expect(await counts(large.id)).toEqual({ succeeded: 5_000, failed: 0, spentUnits: 5_000 * CENT });

    const afterHundred = await writeSlice(small.id, successes(100, 200));
    const afterFiveThousand = await writeSlice(large.id, successes(5_000, 5_100));
    // A few rows an item (its own, its index, its job's): a count over the decided items would read thousands more.
    expect(afterFiveThousand).toBe(afterHundred);
    expect(afterHundred).toBeLessThan(100 * 4);
    expect(await counts(large.id)).toEqual({ succeeded: 5_100, failed: 0, spentUnits: 5_100 * CENT });
  });
});
