import { env } from 'cloudflare:workers';
import Papa from 'papaparse';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clock } from '../../src/core/clock';
import { insertUsageRows } from '../../src/core/usage';
import { timeLimitOf } from '../../src/core/operation';
import { createKey } from '../../src/services/accounts';
import { claimIdempotencyKey } from '../../src/services/idempotency';
import { operationOfJob } from '../../src/services/jobs/operations';
import { runSlice } from '../../src/services/jobs/run';
import { INLINE_DATA_BYTES, itemWrites, MAX_ITEM_DATA_BYTES, PAGE_ANSWER_BYTES, resultsPage } from '../../src/services/jobs/store';
import { unitsFromCents } from '../../src/core/money';
import { funded, json, provision, wallet } from '../support/api';
import { jobRequest, storedJob } from './support';

const PAGE = unitsFromCents(0.1);

afterEach(() => {
  vi.restoreAllMocks();
});

describe("an item whose answer is larger than a job keeps", () => {
  it('is written as succeeded and charged, with no data and a note saying so, in the same batch as a small one (D1 would refuse the whole batch)', async () => {
    const job = await storedJob(2);
    const large = { result: [{ rawHtml: 'x'.repeat(MAX_ITEM_DATA_BYTES + 1) }] };
    const small = { result: [{ markdown: '# Kept' }] };
    await env.DB.batch(
      await itemWrites(env, job.id, [
        { idx: 0, status: 'succeeded', data: large, costUnits: PAGE, attempts: 1 },
        { idx: 1, status: 'succeeded', data: small, costUnits: PAGE, attempts: 1 },
      ]),
    );
    const [first, second] = (await resultsPage(env, job.id, { limit: 10 })).items;
    expect(first).toEqual({
      index: 0,
      input: { url: 'https://example.com/0' },
      status: 'succeeded',
      data: null,
      error: { code: 'ANSWER_TOO_LARGE', message: expect.stringContaining('the call succeeded and was charged') },
      costCents: 0.1,
    });
    expect(second).toEqual({ index: 1, input: { url: 'https://example.com/1' }, status: 'succeeded', data: small, costCents: 0.1 });
    const counted = await env.DB.prepare('SELECT succeeded, spent_units AS spent FROM data_jobs WHERE id = ?').bind(job.id).first();
    expect(counted).toEqual({ succeeded: 2, spent: 2 * PAGE });
  });
});

describe("an item whose first call was charged on a run of its slice that stopped before writing it, its answer gone", () => {
  /** A job of one lookup with its key, and the item's idempotency key claimed by that first call (`call`). */
  async function stoppedSlice(domain: string, call: string) {
    const account = await funded(100);
    const operationName = 'linkedin/get-company-by-domain';
    const input = { domain };
    const job = await storedJob(1, { operation: operationName, inputs: [input], account });
    const key = await createKey(env.DB, env.KEY_ENCRYPTION_KEY, { workspaceId: job.workspaceId, scope: 'data_job', name: `data job ${job.id}` });
    await env.DB.prepare('UPDATE data_jobs SET key_id = ? WHERE id = ?').bind(key.id, job.id).run();
    const operation = operationOfJob(operationName)!;
    const claim = await claimIdempotencyKey(env, job, `${job.id}:0`, operation, input, timeLimitOf(operation, input), call);
    if (claim.kind !== 'claimed') throw new Error(`the item's key was not free: ${claim.kind}`);
    return { job, claim };
  }

  /** The item as its slice, run again, writes it, and the job's spend. */
  async function runAgain(jobId: string) {
    await runSlice(env, jobId);
    const [item] = (await resultsPage(env, jobId, { limit: 10 })).items;
    const counted = await env.DB.prepare('SELECT succeeded, failed, spent_units AS spent FROM data_jobs WHERE id = ?').bind(jobId).first();
    return { item, counted };
  }

  it('too large to keep: succeeded and charged with no data, as the first run would have written it, instead of asking again without end', async () => {
    const { job, claim } = await stoppedSlice('lost-slice.example.com', 'call_large');
    await claim.keep({ data: { blob: 'x'.repeat(MAX_ITEM_DATA_BYTES + 1) }, meta: { costCents: 1, purchasedBalanceCents: 0, subscriptionRemainingCents: 0, cached: false, latencyMs: 1 } });

    const { item, counted } = await runAgain(job.id);
    expect(item).toMatchObject({ index: 0, status: 'succeeded', data: null, error: { code: 'ANSWER_TOO_LARGE', message: expect.stringContaining('succeeded and was charged') }, costCents: 1 });
    expect(counted).toEqual({ succeeded: 1, failed: 0, spent: unitsFromCents(1) });
  });

  it("lost with that run, found charged when the slice runs again hours later: succeeded and charged with no data, and the job's spend counts it", async () => {
    const { job } = await stoppedSlice('lost-answer.example.com', 'use_lostjobitem000000000000');
    // The call's charged row reached D1; its process died before the answer was kept, and the slice runs two hours on.
    const row = { id: 'use_lostjobitem000000000000', requestId: 'req_lost', organizationId: job.organizationId, workspaceId: job.workspaceId, keyId: 'key_lost', operation: 'linkedin.get-company-by-domain', status: 200, errorCode: null, costUnits: unitsFromCents(1), cached: false, latencyMs: 1, createdAt: new Date().toISOString() };
    await insertUsageRows(env.DB, JSON.stringify([row])).run();
    const twoHours = 2 * 60 * 60 * 1000;
    vi.spyOn(clock, 'now').mockReturnValue(Date.now() + twoHours);

    const { item, counted } = await runAgain(job.id);
    expect(item).toMatchObject({ index: 0, status: 'succeeded', data: null, error: { code: 'ANSWER_LOST', message: expect.stringContaining('succeeded and was charged') }, costCents: 1 });
    expect(counted).toEqual({ succeeded: 1, failed: 0, spent: unitsFromCents(1) });
    // Not run again: nothing more was charged.
    expect((await wallet(job.organizationId)).purchasedBalanceCents).toBe(100);
  });
});

describe(`an answer over ${INLINE_DATA_BYTES} bytes`, () => {
  /** Writes each answer as item `idx` of the job, succeeded, as a slice does. */
  const written = async (jobId: string, answers: unknown[]) =>
    env.DB.batch(await itemWrites(env, jobId, answers.map((data, idx) => ({ idx, status: 'succeeded' as const, data, costUnits: PAGE, attempts: 1 }))));

  it('is kept in R2 and only its key in D1, and comes back whole in the JSON page, the NDJSON and the CSV', async () => {
    const account = await provision();
    const job = await storedJob(2, { account });
    const large = { result: [{ markdown: `# Large\n${'word '.repeat(INLINE_DATA_BYTES)}` }] };
    const small = { result: [{ markdown: '# Small' }] };
    await written(job.id, [large, small]);

    const rows = await env.DB.prepare('SELECT idx, data, data_key FROM data_job_items WHERE job_id = ? ORDER BY idx').bind(job.id).all<{ idx: number; data: string | null; data_key: string | null }>();
    expect(rows.results[0]).toMatchObject({ data: null, data_key: expect.stringMatching(new RegExp(`^jobs/${job.id}/0-`)) });
    expect(rows.results[1]).toMatchObject({ data: JSON.stringify(small), data_key: null });
    expect(JSON.parse(await (await env.RESULTS.get(rows.results[0]!.data_key!))!.text())).toEqual(large);

    const page = await json(await jobRequest(account.key, `/${job.id}/results`));
    expect(page.data.items.map((item: { data: unknown }) => item.data)).toEqual([large, small]);
    const ndjson = await (await jobRequest(account.key, `/${job.id}/results`, { headers: { accept: 'application/x-ndjson' } })).text();
    expect(ndjson.trim().split('\n').map((line) => JSON.parse(line).data)).toEqual([large, small]);
    const csv = await (await jobRequest(account.key, `/${job.id}/results`, { headers: { accept: 'text/csv' } })).text();
    const [, ...lines] = Papa.parse<string[]>(csv.trim()).data;
    expect(lines.map((line) => JSON.parse(line.at(-1)!))).toEqual([large, small]);
  });

  it('reads a page of answers from R2 a few at a time: an invocation has six connections, and an unread body holds one', async () => {
    const job = await storedJob(12);
    await written(job.id, Array.from({ length: 12 }, (_, idx) => ({ idx, blob: 'y'.repeat(INLINE_DATA_BYTES + 1) })));
    let open = 0;
    let most = 0;
    const counted = {
      async get(key: string) {
        open += 1;
        most = Math.max(most, open);
        const object = (await env.RESULTS.get(key))!;
        return Object.assign(Object.create(object), { text: async () => (await object.text().finally(() => (open -= 1))) });
      },
    } as unknown as R2Bucket;
    const page = await resultsPage({ DB: env.DB, RESULTS: counted }, job.id, { limit: 100 });
    expect(page.items.map((item) => (item.data as { idx: number }).idx)).toEqual([...Array(12).keys()]);
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(4);
  });

  it(`fills a JSON page with at most ${PAGE_ANSWER_BYTES} bytes of answers, and the next page goes on from there`, async () => {
    const job = await storedJob(10);
    // Ten answers of about a megabyte: a page of 1,000 items could otherwise hold a gigabyte.
    const answers = Array.from({ length: 10 }, (_, idx) => ({ idx, blob: 'x'.repeat(MAX_ITEM_DATA_BYTES - 100) }));
    await written(job.id, answers);
    const first = await resultsPage(env, job.id, { limit: 1000 });
    const fit = Math.floor(PAGE_ANSWER_BYTES / JSON.stringify(answers[0]).length);
    expect(first.items.map((item) => item.index)).toEqual([...Array(fit).keys()]);
    expect(first.nextCursor).toBe(String(fit - 1));
    const second = await resultsPage(env, job.id, { limit: 1000, cursor: first.nextCursor! });
    expect(second.items.map((item) => (item.data as { idx: number }).idx)).toEqual([...Array(10).keys()].slice(fit));
    expect(second.nextCursor).toBeNull();
  });
});
