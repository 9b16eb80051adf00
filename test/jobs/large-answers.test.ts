import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { timeLimitOf } from '../../src/core/operation';
import { createKey } from '../../src/services/accounts';
import { claimIdempotencyKey } from '../../src/services/idempotency';
import { operationOfJob } from '../../src/services/jobs/operations';
import { runSlice } from '../../src/services/jobs/run';
import { itemPage, itemWrite, MAX_ITEM_DATA_BYTES, recount } from '../../src/services/jobs/store';
import { unitsFromCents } from '../../src/core/money';
import { funded } from '../support/api';
import { storedJob } from './support';

const PAGE = unitsFromCents(0.1);

describe("an item whose answer is larger than a job keeps", () => {
  it('is written as succeeded and charged, with no data and a note saying so, in the same batch as a small one (D1 would refuse the whole batch)', async () => {
    const job = await storedJob(2);
    const large = { result: [{ rawHtml: 'x'.repeat(MAX_ITEM_DATA_BYTES + 1) }] };
    const small = { result: [{ markdown: '# Kept' }] };
    await env.DB.batch([
      itemWrite(env.DB, job.id, { idx: 0, status: 'succeeded', data: large, costUnits: PAGE, attempts: 1 }),
      itemWrite(env.DB, job.id, { idx: 1, status: 'succeeded', data: small, costUnits: PAGE, attempts: 1 }),
      recount(env.DB, job.id),
    ]);
    const [first, second] = await itemPage(env.DB, job.id, -1, 10, null);
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

describe('an item whose first call was charged but whose answer was too large to keep for its retry', () => {
  it('ends failed with the reason when its slice runs again, instead of waiting a second and asking again without end', async () => {
    const account = await funded(100);
    const operationName = 'linkedin/get-company-by-domain';
    const input = { domain: 'lost-slice.example.com' };
    const job = await storedJob(1, { operation: operationName, inputs: [input], account });
    const key = await createKey(env.DB, env.KEY_ENCRYPTION_KEY, { workspaceId: job.workspaceId, scope: 'data_job', name: `data job ${job.id}` });
    await env.DB.prepare('UPDATE data_jobs SET key_id = ? WHERE id = ?').bind(key.id, job.id).run();
    // The slice that ran the item was charged and lost before it wrote: the item's key holds an answer too large to keep.
    const operation = operationOfJob(operationName)!;
    const claim = await claimIdempotencyKey(env, job.workspaceId, `${job.id}:0`, operation, input, timeLimitOf(operation, input), 'call_lost');
    if (claim.kind !== 'claimed') throw new Error(`the item's key was not free: ${claim.kind}`);
    await claim.keep({ data: { blob: 'x'.repeat(MAX_ITEM_DATA_BYTES + 1) }, meta: { costCents: 1, purchasedBalanceCents: 0, subscriptionRemainingCents: 0, cached: false, latencyMs: 1 } });

    await runSlice(env, job.id);
    const [item] = await itemPage(env.DB, job.id, -1, 10, null);
    expect(item).toMatchObject({ index: 0, status: 'failed', error: { code: 'CONFLICT', message: expect.stringContaining('too large to keep') } });
  });
});
