import { createExecutionContext, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import worker from '../../src/api';
import { clock } from '../../src/core/clock';
import { WINDOW_MS } from '../../durable-objects/rate-window';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { bearer, call, companyByDomain, credit, eventually, funded, json, ops, provision, wallet } from '../support/api';
import type { JobView } from '../../src/services/jobs/store';
import { unitsFromCents } from '../../src/core/money';
import { CREDIT_RECHECK_MS } from '../../src/services/jobs/run';
import { JobSubmission, submitJob, submitJobOnce } from '../../src/services/jobs/submit';
import type { Env } from '../../src/core/config';
import { configureWallet } from '../../src/services/wallet';
import { FAKE_RECEIVER, type ReceivedRequest } from '../fakes/webhook-receiver';
import { interceptedDb, meetingOf } from '../support/intercepted-db';
import { driveJob, JOBS, jobKey, jobKeyId, jobRequest, jobTime, type JobTime, landedUsageOfJob, lookAgain, ndjsonResults, readJob, submit } from './support';

// A job runs on the Workflow engine's own schedule: on a loaded machine a job of a few items may need more than
// the workers project's 20 s (driveJob waits up to 60 s for the state it is told to wait for).
vi.setConfig({ testTimeout: 120_000 });

const COMPANY = 'linkedin/get-company-by-domain';
const ended = (job: JobView) => job.finishedAt !== null;

let time: JobTime;
beforeEach(async () => {
  time = await jobTime();
});
afterEach(async () => {
  await time.dispose();
});

/** A job of the workspace with 99,999 items still to run, written as a submission would leave it: one place left under the bound. */
async function jobOf99999Waiting(account: { organizationId: string; workspaceId: string }): Promise<string> {
  const id = `job_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`;
  await env.DB.prepare(
    `INSERT INTO data_jobs (id, organization_id, workspace_id, operation, name, status, items, quoted_units, max_cost_units, key_id, connection_id, into_database_id, into_table, created_at)
     VALUES (?, ?, ?, ?, NULL, 'running', 99999, 0, NULL, NULL, NULL, NULL, NULL, ?)`,
  )
    .bind(id, account.organizationId, account.workspaceId, COMPANY, new Date().toISOString())
    .run();
  return id;
}

async function rpm(organizationId: string, plan: string, value: number) {
  expect((await ops('PUT', `/organizations/${organizationId}/plan`, { plan, rpm: value })).status).toBe(200);
}

describe('submitting a data job', () => {
  it('refuses before queueing anything: invalid items named, too many inputs, an unknown operation, no plan, a quote above maxCostCents, a balance short of one item', async () => {
    const account = await funded(100);
    const invalid = await submit(account.key, { operation: COMPANY, inputs: [{ domain: 'a.com' }, { domain: '' }, { domain: 'b.com', extra: 1 }] });
    expect([invalid.status, invalid.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect(invalid.body.error.details.map((detail: { field: string }) => detail.field)).toEqual(['inputs[1].domain', 'inputs[2].extra']);

    // One input larger than a synchronous call's body (its schema sets no length on includeTags): named, not a 500 from D1's bound on a value.
    const jobs = async () => (await env.DB.prepare('SELECT COUNT(*) AS n FROM data_jobs WHERE workspace_id = ?').bind(account.workspaceId).first<{ n: number }>())!.n;
    const huge = await submit(account.key, { operation: 'web/scrape', inputs: [{ url: 'https://example.com/' }, { url: 'https://example.com/', includeTags: ['a'.repeat(3_000_000)] }] });
    expect([huge.status, huge.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect(huge.body.error.details).toEqual([{ field: 'inputs[1]', location: 'body', message: expect.stringMatching(/2\.9 MB as JSON; an item's input is at most 1 MB/) }]);
    expect(await jobs()).toBe(0);

    const tooMany = await submit(account.key, { operation: COMPANY, inputs: Array.from({ length: 10_001 }, (_, index) => ({ domain: `d${index}.com` })) });
    expect([tooMany.status, tooMany.body.error.details[0].field]).toEqual([400, 'inputs']);

    const unknown = await submit(account.key, { operation: 'linkedin/no-such-thing', inputs: [{ domain: 'a.com' }] });
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'ENDPOINT_NOT_FOUND']);

    const capped = await submit(account.key, { operation: COMPANY, inputs: [{ domain: 'a.com' }, { domain: 'b.com' }, { domain: 'c.com' }], maxCostCents: 2 });
    expect([capped.status, capped.body.error.code]).toEqual([402, 'INSUFFICIENT_CREDITS']);
    expect(capped.body.error.message).toContain('quote is 3 cents');
    expect(capped.body.error.message).toContain('maxCostCents of 2 cents');

    const planless = await provision({ plan: null });
    const noPlan = await submit(planless.key, { operation: COMPANY, inputs: [{ domain: 'a.com' }] });
    expect([noPlan.status, noPlan.body.error.code]).toEqual([402, 'SUBSCRIPTION_REQUIRED']);

    const broke = await provision();
    const short = await submit(broke.key, { operation: COMPANY, inputs: [{ domain: 'a.com' }] });
    expect([short.status, short.body.error.code]).toEqual([402, 'INSUFFICIENT_CREDITS']);
    expect(short.body.error.message).toContain('costs up to 1 cent but the organization has 0 cents available');

    const rows = await env.DB.prepare('SELECT COUNT(*) AS n FROM data_jobs WHERE workspace_id IN (?, ?, ?)').bind(account.workspaceId, planless.workspaceId, broke.workspaceId).first<{ n: number }>();
    expect(rows!.n).toBe(0);
  });

  it('refuses an operation this installation has no settings for with 503 PROVIDER_UNAVAILABLE naming them, nothing queued (every item would fail)', async () => {
    const account = await funded(100);
    const unconfigured = { ...env, LINKEDIN_API_KEY: undefined, LINKEDIN_API_HOST: undefined } as Env;
    const response = await worker.fetch(
      new Request(`http://sluice.test${JOBS}`, { method: 'POST', headers: { ...bearer(account.key).headers, 'content-type': 'application/json' }, body: JSON.stringify({ operation: COMPANY, inputs: [{ domain: 'a.com' }] }) }),
      unconfigured,
      createExecutionContext(),
    );
    expect(response.status).toBe(503);
    const { error } = await json(response);
    expect(error).toMatchObject({ code: 'PROVIDER_UNAVAILABLE', message: expect.stringContaining('LINKEDIN_API_KEY and LINKEDIN_API_HOST') });
    const rows = await env.DB.prepare('SELECT COUNT(*) AS n FROM data_jobs WHERE workspace_id = ?').bind(account.workspaceId).first<{ n: number }>();
    expect(rows!.n).toBe(0);
    // Configured, the same submission is queued.
    expect((await submit(account.key, { operation: COMPANY, inputs: [{ domain: 'a.com' }] })).status).toBe(202);

    // Without DataForSEO, SERP jobs are refused; the on-page audit, which the built-in provider serves then, is not.
    const noSeo = { ...env, DATAFORSEO_LOGIN: undefined, DATAFORSEO_PASSWORD: undefined } as Env;
    const submitted = (body: unknown) =>
      worker.fetch(new Request(`http://sluice.test${JOBS}`, { method: 'POST', headers: { ...bearer(account.key).headers, 'content-type': 'application/json' }, body: JSON.stringify(body) }), noSeo, createExecutionContext());
    expect((await submitted({ operation: 'seo/serp', inputs: [{ keyword: 'anvils' }] })).status).toBe(503);
    expect((await submitted({ operation: 'seo/onpage-audit', inputs: [{ url: 'https://acme.example/anvils' }] })).status).toBe(202);
  });

  it('refuses a job that would take the items waiting in the workspace past 100,000 with 409, nothing queued; once one ends, it submits', async () => {
    const account = await funded(1_000, 'payg');
    const waiting = await jobOf99999Waiting(account);
    const refused = await submit(account.key, { operation: COMPANY, inputs: [{ domain: 'a.com' }, { domain: 'b.com' }] });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('99999 items still to run') });
    expect((await json(await jobRequest(account.key, ''))).data.jobs.map((job: { id: string }) => job.id)).toEqual([waiting]);
    expect((await submit(account.key, { operation: COMPANY, inputs: [{ domain: 'a.com' }] })).status).toBe(202);
    await env.DB.prepare("UPDATE data_jobs SET status = 'cancelled' WHERE id = ?").bind(waiting).run();
    expect((await submit(account.key, { operation: COMPANY, inputs: [{ domain: 'b.com' }, { domain: 'c.com' }] })).status).toBe(202);
  });

  it('gives the last place among the waiting items to one of two submissions sent at once: the other is 409, its key revoked', async () => {
    const account = await funded(1_000, 'payg');
    await jobOf99999Waiting(account);
    // Each submission's check of the room waits until both have reached it: both read 99,999 waiting.
    const meeting = meetingOf(2);
    const db = interceptedDb(
      (query) => query.startsWith('SELECT COALESCE(SUM(items - succeeded - failed), 0) AS n FROM data_jobs'),
      (bound) => ({ first: async () => (await meeting.arrive(), bound.first()) }),
    );
    const both = await Promise.all(
      ['a.com', 'b.com'].map(async (domain) => {
        const request = new Request(`http://sluice.test${JOBS}`, { method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ operation: COMPANY, inputs: [{ domain }] }) });
        const response = await worker.fetch(request, { ...env, DB: db } as typeof env, createExecutionContext());
        return { status: response.status, body: await json(response) };
      }),
    );
    expect(both.map((answer) => answer.status).sort()).toEqual([202, 409]);
    expect(both.find((answer) => answer.status === 409)!.body.error.message).toContain('items still to run');
    const jobs = await env.DB.prepare('SELECT COUNT(*) AS n, SUM(items) AS items FROM data_jobs WHERE workspace_id = ?').bind(account.workspaceId).first<{ n: number; items: number }>();
    expect(jobs).toEqual({ n: 2, items: 100_000 });
    // The refused one's key and items are not left behind.
    const stray = await env.DB.prepare(
      "SELECT (SELECT COUNT(*) FROM api_keys WHERE workspace_id = ?1 AND scope = 'data_job' AND revoked_at IS NULL) AS keys, (SELECT COUNT(*) FROM data_job_items WHERE job_id NOT IN (SELECT id FROM data_jobs)) AS orphans",
    )
      .bind(account.workspaceId)
      .first<{ keys: number; orphans: number }>();
    expect(stray).toEqual({ keys: 1, orphans: 0 });
  });

  it('reads bodies past 1 MB on this route only; lists jobs with a cursor; another workspace\'s job is 404; agnt is a source of the catalog', async () => {
    const account = await funded(100);
    const big = await submit(account.key, { operation: COMPANY, inputs: [{ domain: 'a.com' }], name: 'x'.repeat(150), pad: 'y'.repeat(1_200_000) });
    // Read whole (past 1 MB) and then refused for its unknown field, not for its size.
    expect([big.status, big.body.error.details[0].field]).toEqual([400, 'pad']);
    const elsewhere = await call('/v1/credits', { method: 'GET', headers: { authorization: `Bearer ${account.key}` }, body: null });
    expect(elsewhere.status).toBe(200);

    const first = await submit(account.key, { operation: COMPANY, inputs: [{ domain: 'a.com' }], name: 'one' });
    const second = await submit(account.key, { operation: COMPANY, inputs: [{ domain: 'b.com' }], name: 'two' });
    expect(second.headers.get('RateLimit-Limit')).toBeTruthy();
    const page = await json(await jobRequest(account.key, '?limit=1'));
    expect(page.data.jobs.map((job: { id: string }) => job.id)).toEqual([second.body.data.id]);
    const next = await json(await jobRequest(account.key, `?limit=1&cursor=${page.data.nextCursor}`));
    expect(next.data.jobs.map((job: { id: string }) => job.id)).toEqual([first.body.data.id]);

    const stranger = await funded(10);
    expect((await jobRequest(stranger.key, `/${first.body.data.id}`)).status).toBe(404);
    expect((await jobRequest(stranger.key, `/${first.body.data.id}/cancel`, { method: 'POST' })).status).toBe(404);
    expect((await jobRequest(stranger.key, `/${first.body.data.id}/results`)).status).toBe(404);

    const platforms = await json(await call('/v1/platforms'));
    expect(platforms.data.platforms.find((platform: { slug: string }) => platform.slug === 'agnt')).toBeTruthy();
    await driveJob(second.body.data.id, time, ended);
    await driveJob(first.body.data.id, time, ended);
  });

  it("ends a job at once, failed and its key revoked, when the platform did not create its run: the submitter is answered the error, and the job never runs behind its back", async () => {
    const account = await funded(100);
    const submitter = { organizationId: account.organizationId, workspaceId: account.workspaceId, keyId: account.keyId };
    const submission = (domain: string) => JobSubmission.parse({ operation: COMPANY, inputs: [{ domain }] });
    const jobOf = async (domain: string) =>
      (await env.DB.prepare("SELECT j.id, j.status, j.reason, j.key_id AS keyId FROM data_jobs j JOIN data_job_items i ON i.job_id = j.id WHERE j.workspace_id = ? AND i.input LIKE ?")
        .bind(account.workspaceId, `%${domain}%`)
        .first<{ id: string; status: string; reason: string | null; keyId: string }>())!;
    const revokedAt = async (keyId: string) => (await env.DB.prepare('SELECT revoked_at AS revokedAt FROM api_keys WHERE id = ?').bind(keyId).first<{ revokedAt: string | null }>())!.revokedAt;
    const withWorkflows = (DATA_JOBS: Pick<Env['DATA_JOBS'], 'create' | 'get'>) => ({ ...env, DATA_JOBS }) as unknown as Env;
    const real = env.DATA_JOBS;

    // Not created, and the platform says it has no such run: ended, failed, its key revoked.
    const refusing = withWorkflows({ create: () => Promise.reject(new Error('Workflows unavailable')), get: (id) => real.get(id) });
    await expect(submitJob(refusing, submitter, submission('f0.com'))).rejects.toMatchObject({ code: 'INTERNAL_ERROR', message: expect.stringContaining('none of its items ran and nothing was charged') });
    const notStarted = await jobOf('f0.com');
    expect(notStarted).toMatchObject({ status: 'failed', reason: expect.stringContaining('none of its items ran') });
    expect(await revokedAt(notStarted.keyId)).not.toBeNull();

    // The platform could not say whether it has the run: the job is left as it is, for the nightly check to end once it knows.
    const unsure = withWorkflows({ create: () => Promise.reject(new Error('Workflows unavailable')), get: () => Promise.reject(new Error('network lost')) });
    // The answer names the job, which may be running: sending the items again could pay for them twice.
    const unsureAnswer = await submitJob(unsure, submitter, submission('f1.com')).catch((error: unknown) => error);
    const unsureJob = await jobOf('f1.com');
    expect(unsureJob).toMatchObject({ status: 'queued', reason: null });
    expect(unsureAnswer).toMatchObject({ code: 'INTERNAL_ERROR', message: expect.stringContaining(`it may be running. Do not submit its items again as they are: cancel it first (POST /v1/data/agnt/jobs/${unsureJob.id}/cancel`) });

    // Created after all, its answer lost: the job is accepted and runs as any other.
    const lostAnswer = withWorkflows({ create: async (options) => real.create(options).then(() => Promise.reject(new Error('answer lost'))), get: (id) => real.get(id) });
    const accepted = await submitJob(lostAnswer, submitter, submission('f2.com'));
    expect(await driveJob(accepted.id, time, ended)).toMatchObject({ status: 'succeeded', counts: { succeeded: 1 }, spentCents: 1 });
  });

  it('makes one job of the submissions sent with one Idempotency-Key: a retry is answered that job, another body is refused, a job that never started lets its key go', async () => {
    const account = await funded(100);
    const body = { operation: COMPANY, inputs: [{ domain: 'i0.com' }, { domain: 'i1.com' }], name: 'once' };
    const send = (payload: unknown, key: string) =>
      call(JOBS, { method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify(payload) });
    const jobs = async () => (await env.DB.prepare('SELECT COUNT(*) AS n FROM data_jobs WHERE workspace_id = ?').bind(account.workspaceId).first<{ n: number }>())!.n;

    const first = await send(body, 'submit-1');
    expect([first.status, first.headers.get('idempotent-replayed')]).toEqual([202, null]);
    const id = (await json(first)).data.id;
    // The same submission with its fields in another order: answered the job it made, nothing new queued.
    const again = await send({ name: 'once', inputs: body.inputs, operation: COMPANY }, 'submit-1');
    expect([again.status, again.headers.get('idempotent-replayed'), (await json(again)).data.id]).toEqual([202, 'true', id]);
    const other = await send({ ...body, name: 'other' }, 'submit-1');
    expect(other.status).toBe(409);
    expect((await json(other)).error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining(`which made job ${id}`) });
    // Two at once with a new key: one job, both answered it (the insert that lost answers as a retry).
    const [a, b] = await Promise.all([send(body, 'submit-2'), send(body, 'submit-2')]);
    const [fromA, fromB] = [await json(a), await json(b)];
    expect([a.status, b.status, fromA.data.id]).toEqual([202, 202, fromB.data.id]);
    const bad = await send(body, 'k'.repeat(256));
    expect([bad.status, (await json(bad)).error.details]).toEqual([400, [{ field: 'Idempotency-Key', location: 'query', message: 'Must be 1 to 255 printable ASCII characters.' }]]);
    expect(await jobs()).toBe(2);

    // A job whose run the platform did not create ends at once: the one retry its answer asks for, with the same key, makes a new job.
    const submitter = { organizationId: account.organizationId, workspaceId: account.workspaceId, keyId: account.keyId };
    const refusing = { ...env, DATA_JOBS: { create: () => Promise.reject(new Error('Workflows unavailable')), get: (runId: string) => env.DATA_JOBS.get(runId) } } as unknown as Env;
    const retried = JobSubmission.parse({ operation: COMPANY, inputs: [{ domain: 'i2.com' }] });
    await expect(submitJobOnce(refusing, submitter, retried, 'submit-3')).rejects.toMatchObject({ code: 'INTERNAL_ERROR' });
    const rerun = await submitJobOnce(env, submitter, retried, 'submit-3');
    expect(rerun.replayed).toBe(false);
    expect(await jobs()).toBe(4);
    for (const job of [id, fromA.data.id, rerun.view.id]) await driveJob(job, time, ended);
  });
});

describe('running a data job', () => {
  it('runs 1,000 items with 10 % failing: one result per item, counts add up, the successes billed exactly, ledger = usage rows = successes', async () => {
    const account = await funded(2_000, 'payg');
    await rpm(account.organizationId, 'payg', 100_000);
    // Every tenth fails for good (the vendor's 404); a few fail once (a 500) and succeed on their retry.
    const inputs = Array.from({ length: 1_000 }, (_, index) => ({ domain: index % 10 === 3 ? `status404.n${index}.com` : index % 50 === 7 ? `flaky.n${index}.com` : `ok${index}.com` }));
    const submitted = await submit(account.key, { operation: COMPANY, inputs });
    expect(submitted.status).toBe(202);
    expect(submitted.body.data).toMatchObject({ quotedCents: 1_000, counts: { total: 1_000, pending: 1_000 } });

    // A thousand calls in this file's one workerd: about 50 s of a core to itself, three times that beside the
    // suite's other files on 2 cores.
    const job = await driveJob(submitted.body.data.id, time, ended, { seconds: 240 });
    expect(job).toMatchObject({ status: 'succeeded', counts: { total: 1_000, succeeded: 900, failed: 100, pending: 0 }, spentCents: 900 });

    const results = await ndjsonResults(account.key, job.id);
    expect(results.map((item) => item.index)).toEqual(Array.from({ length: 1_000 }, (_, index) => index));
    for (const item of results) {
      if (item.index % 10 === 3) expect(item).toMatchObject({ status: 'failed', error: { code: 'PROVIDER_ERROR' }, costCents: 0 });
      // The fake answers a flaky domain's retry with its stock company, every other domain with its own website.
      else expect(item).toMatchObject({ status: 'succeeded', costCents: 1, data: { website: item.index % 50 === 7 ? 'https://stripe.com' : `https://${inputs[item.index]!.domain}` } });
    }

    const rows = await landedUsageOfJob(account, job.id);
    expect(rows.filter((row) => row.cost_units > 0)).toHaveLength(900);
    expect(rows.reduce((sum, row) => sum + row.cost_units, 0)).toBe(900 * 10_000);
    expect(rows.filter((row) => row.status === 429)).toEqual([]);
    const after = await wallet(account.organizationId);
    expect(after).toMatchObject({ purchasedBalanceCents: 1_100, heldCents: 0 });
  }, 300_000);

  it('cancel mid-run: no item starts after it, nothing is charged for the rest, and the key is refused from then on', async () => {
    const account = await funded(100, 'payg');
    // 10 requests a minute: the job takes 8 of them, then waits for the window; it is cancelled while it waits.
    await rpm(account.organizationId, 'payg', 10);
    // The clock moves with real time here: start at the top of a window, so the job's share falls in one window
    // however slow the machine (straddling two, it would take a share in each before it waits).
    time.advance(WINDOW_MS - (clock.now() % WINDOW_MS) + 200);
    const submitted = await submit(account.key, { operation: COMPANY, inputs: Array.from({ length: 30 }, (_, index) => ({ domain: `c${index}.com` })) });
    const waiting = await driveJob(submitted.body.data.id, time, (job) => job.resumesAt !== null, { follow: false });
    expect(waiting.reason).toMatch(/^Pacing: the job has used its share/);
    // 10 a minute less the 2 left to others, less the submission itself, counted in the same window.
    const done = waiting.counts.succeeded;
    expect(done).toBe(7);
    const cancelled = await json(await jobRequest(account.key, `/${submitted.body.data.id}/cancel`, { method: 'POST' }));
    expect(cancelled.data).toMatchObject({ status: 'cancelled', reason: 'Cancelled by request.' });
    expect(cancelled.data.finishedAt).not.toBeNull();
    // The key is refused from the moment the cancel is answered, before the Workflow even wakes.
    const key = await jobKey(submitted.body.data.id);
    expect((await call('/runtime/data/linkedin/get-company-by-domain?domain=late.com', bearer(key))).status).toBe(401);

    // Windows go by; the job's Workflow wakes, finds its key refused and stops.
    time.advance(120_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    time.advance(120_000);
    const job = await readJob(account.key, submitted.body.data.id);
    expect(job).toMatchObject({ status: 'cancelled', counts: { succeeded: done, failed: 0, pending: 30 - done }, spentCents: done });
    const rows = await landedUsageOfJob(account, job.id);
    expect(rows).toHaveLength(done);
    expect(await wallet(account.organizationId)).toMatchObject({ purchasedBalanceCents: 100 - done, heldCents: 0 });
  });

  it('cancel while items are in flight: they finish and are billed, no further item of the running slice starts', async () => {
    const account = await funded(100, 'payg');
    // Each call takes the fake vendor 2 s: the job's first call runs alone, then 8 at a time.
    const submitted = await submit(account.key, { operation: COMPANY, inputs: Array.from({ length: 20 }, (_, index) => ({ domain: `slow.f${index}.com` })) });
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect((await jobRequest(account.key, `/${submitted.body.data.id}/cancel`, { method: 'POST' })).status).toBe(200);
    const job = await driveJob(submitted.body.data.id, time, (found) => found.counts.succeeded + found.counts.failed > 0 && found.status === 'cancelled', { seconds: 10 });
    // Let the slice that was running write what finished.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const after = await readJob(account.key, job.id);
    expect(after.status).toBe('cancelled');
    expect(after.counts.succeeded).toBeLessThan(20);
    expect(after.counts.pending).toBeGreaterThan(0);
    const rows = await landedUsageOfJob(account, job.id);
    expect(rows.filter((row) => row.status === 200)).toHaveLength(after.counts.succeeded);
    expect(after.spentCents).toBe(after.counts.succeeded);
    expect(await wallet(account.organizationId)).toMatchObject({ purchasedBalanceCents: 100 - after.counts.succeeded, heldCents: 0 });
  });

  it('waits for credits when money runs out and finishes by itself after a top-up, never below zero', async () => {
    const account = await funded(5, 'payg');
    const submitted = await submit(account.key, { operation: COMPANY, inputs: Array.from({ length: 12 }, (_, index) => ({ domain: `m${index}.com` })) });
    const waiting = await driveJob(submitted.body.data.id, time, (job) => job.status === 'waiting_for_credits', { follow: false });
    expect(waiting).toMatchObject({ status: 'waiting_for_credits', waitingOn: 'money', counts: { succeeded: 5, failed: 0, pending: 7 }, spentCents: 5 });
    expect(waiting.reason).toMatch(/needs 1 cent but the organization has 0 cents available/);
    expect(await wallet(account.organizationId)).toMatchObject({ purchasedBalanceCents: 0 });

    // Its rechecks over the next hours are refused by the wallet before the runtime hour is counted: the plan's
    // hours count the hour it worked, not the hours it waited.
    const hours = async () => (await env.DB.prepare('SELECT COUNT(*) AS n FROM job_hours WHERE job_id = ?').bind(submitted.body.data.id).first<{ n: number }>())!.n;
    expect(await hours()).toBe(1);
    // It looks again every 30 s at first, and less often the longer it has waited (at most every 15 minutes),
    // so a wait of days stays within its Workflow's steps.
    const lookAgainIn = (job: JobView) => Date.parse(job.resumesAt!) - clock.now();
    expect(lookAgainIn(waiting)).toBeLessThanOrEqual(CREDIT_RECHECK_MS.first);
    // Its looks ask the gate for the figures instead of calling: no refused call, no usage row, each time.
    const refusedRows = async () => (await landedUsageOfJob(account, submitted.body.data.id)).filter((row) => row.status === 402).length;
    const refusedBefore = await refusedRows();
    let later = waiting;
    for (let hour = 0; hour < 2; hour++) {
      const before = (await driveJob(submitted.body.data.id, time, () => true)).resumesAt;
      time.advance(61 * 60_000);
      await lookAgain(submitted.body.data.id);
      later = await driveJob(submitted.body.data.id, time, (job) => job.resumesAt !== before, { follow: false });
    }
    expect(await hours()).toBe(1);
    expect(await refusedRows()).toBe(refusedBefore);
    expect(later.reason).toMatch(/needs 1 cent but the organization has 0 cents available/);
    expect(lookAgainIn(later)).toBeGreaterThan(CREDIT_RECHECK_MS.most - 60_000);
    expect(lookAgainIn(later)).toBeLessThanOrEqual(CREDIT_RECHECK_MS.most);

    await credit(account.organizationId, { purchasedCents: 10 });
    const job = await driveJob(submitted.body.data.id, time, ended);
    expect(job).toMatchObject({ status: 'succeeded', reason: null, waitingOn: null, counts: { succeeded: 12, failed: 0, pending: 0 }, spentCents: 12 });
    expect(await wallet(account.organizationId)).toMatchObject({ purchasedBalanceCents: 3, heldCents: 0 });
  });

  it('looks again the moment money comes, not at its next recheck: a top-up wakes it, and so do a raised key limit and a plan with an allowance', async () => {
    // Every wait as long as it is: without the wake, this job's next look would be 30 s away.
    await time.dispose();
    time = await jobTime({ sleeps: 'real' });
    const account = await funded(2, 'payg');
    const submitted = await submit(account.key, { operation: COMPANY, inputs: Array.from({ length: 4 }, (_, index) => ({ domain: `w${index}.com` })) });
    const waiting = await driveJob(submitted.body.data.id, time, (job) => job.status === 'waiting_for_credits', { follow: false });
    expect(waiting.counts).toMatchObject({ succeeded: 2, pending: 2 });
    expect(Date.parse(waiting.resumesAt!) - clock.now()).toBeGreaterThan(CREDIT_RECHECK_MS.first - 5_000);
    await credit(account.organizationId, { purchasedCents: 1 });
    const topped = await driveJob(submitted.body.data.id, time, (job) => job.counts.succeeded === 3, { follow: false, seconds: 15 });
    expect(topped.counts).toMatchObject({ succeeded: 3, pending: 1 });

    // The next wait is the key's limit: raising it wakes the job too.
    expect((await ops('PUT', `/keys/${account.keyId}/limit`, { monthlyLimitCents: 3 })).status).toBe(200);
    await credit(account.organizationId, { purchasedCents: 10 });
    const limited = await driveJob(submitted.body.data.id, time, (job) => job.reason?.includes('monthly spend limit of 3 cents') ?? false, { follow: false, seconds: 15 });
    expect(limited).toMatchObject({ status: 'waiting_for_credits', counts: { succeeded: 3, pending: 1 } });
    // Two wakes came close together (the limit, then the money): the second may still be on its way, and would
    // make a look that finds the raise below by itself. A second of real time lets it land first.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await ops('PUT', `/keys/${account.keyId}/limit`, { monthlyLimitCents: 10 })).status).toBe(200);
    const job = await driveJob(submitted.body.data.id, time, ended, { follow: false, seconds: 15 });
    expect(job).toMatchObject({ status: 'succeeded', counts: { succeeded: 4, pending: 0 }, spentCents: 4 });

    // A plan with an allowance is money too.
    const broke = await funded(1, 'payg');
    const second = await submit(broke.key, { operation: COMPANY, inputs: [{ domain: 'v0.com' }, { domain: 'v1.com' }] });
    await driveJob(second.body.data.id, time, (waits) => waits.status === 'waiting_for_credits', { follow: false });
    expect((await ops('PUT', `/organizations/${broke.organizationId}/plan`, { plan: 'solo' })).status).toBe(200);
    expect(await driveJob(second.body.data.id, time, ended, { follow: false, seconds: 15 })).toMatchObject({ status: 'succeeded', counts: { succeeded: 2 } });
  });

  it('goes on by itself when a wait for money reaches its recheck with nothing having woken it', async () => {
    // The first wait (after slice 0, the key's limit refused the second item) times out at once; nothing sends the event.
    await time.dispose();
    time = await jobTime({ sleeps: 'real', modify: (modifier) => modifier.forceEventTimeout({ name: 'wait 0' }) });
    const account = await funded(100, 'payg');
    expect((await ops('PUT', `/keys/${account.keyId}/limit`, { monthlyLimitCents: 1 })).status).toBe(200);
    const submitted = await submit(account.key, { operation: COMPANY, inputs: [{ domain: 't0.com' }, { domain: 't1.com' }] });
    // The look after the timeout asks the gate before calling, and says so in its own words.
    const looked = await driveJob(submitted.body.data.id, time, (job) => job.reason?.startsWith('The API key that submitted this job') ?? false, { follow: false, seconds: 15 });
    expect(looked.reason).toContain(`API key that submitted this job (${account.keyId}) has spent 1 cent of its monthly spend limit of 1 cent`);
    expect(looked).toMatchObject({ status: 'waiting_for_credits', counts: { succeeded: 1, pending: 1 } });
  });

  it("spends the submitting key's monthly limit: it waits when the key's room is spent, says so, and goes on when the limit is raised", async () => {
    const account = await funded(100, 'payg');
    expect((await ops('PUT', `/keys/${account.keyId}/limit`, { monthlyLimitCents: 3 })).status).toBe(200);
    const submitted = await submit(account.key, { operation: COMPANY, inputs: Array.from({ length: 6 }, (_, index) => ({ domain: `k${index}.com` })) });
    expect(submitted.status).toBe(202);
    const waiting = await driveJob(submitted.body.data.id, time, (job) => job.status === 'waiting_for_credits', { follow: false });
    expect(waiting).toMatchObject({ status: 'waiting_for_credits', waitingOn: 'key_limit', counts: { succeeded: 3, failed: 0, pending: 3 }, spentCents: 3 });
    // Refused by the gate mid-slice, or seen before the next slice starts: either way the key and its limit are named.
    expect(waiting.reason).toContain(`API key that submitted this job (${account.keyId})`);
    expect(waiting.reason).toContain('monthly spend limit of 3 cents');
    // The items ran as the job's key, and their spend is the submitting key's: what its budget shows, and what the limit counts.
    const gate = env.WORKSPACE_GATE.get(env.WORKSPACE_GATE.idFromName(account.workspaceId));
    const [budget] = await gate.keyBudgets([account.keyId]);
    expect(budget).toMatchObject({ keyId: account.keyId, limitUnits: unitsFromCents(3), spentUnits: unitsFromCents(3), heldUnits: 0 });
    expect((await companyByDomain(account.key, 'interactive.com')).status).toBe(402);
    // Reported to the wallet, the charges' spend is stored as the submitting key's sum, not the job key's.
    await gate.flush();
    const sums = await runInDurableObject(gate, (_, state) => state.storage.sql.exec<{ key_id: string; spent_units: number }>('SELECT key_id, spent_units FROM key_spend').toArray());
    expect(sums).toEqual([{ key_id: account.keyId, spent_units: unitsFromCents(3) }]);

    // Waiting on the key's limit, the job asks the gate, not the pipeline: its rechecks leave no refused call
    // (no runtime hour, request or usage row), however long the limit stays as it is.
    /** The job key's refused calls in D1, once every row of the workspace has landed. */
    const jobKeyRows = async () => (await landedUsageOfJob(account, submitted.body.data.id)).filter((row) => row.status === 402).length;
    const asked = await driveJob(submitted.body.data.id, time, (job) => job.reason?.startsWith('The API key that submitted this job') ?? false);
    expect(asked.reason).toContain(`has spent 3 cents of its monthly spend limit of 3 cents; the next item needs 1 cent`);
    const refusedCalls = await jobKeyRows();
    const resumesAt = asked.resumesAt;
    const again = await driveJob(submitted.body.data.id, time, (job) => job.resumesAt !== resumesAt);
    expect(again).toMatchObject({ status: 'waiting_for_credits', counts: { succeeded: 3, pending: 3 } });
    expect(await jobKeyRows()).toBe(refusedCalls);

    expect((await ops('PUT', `/keys/${account.keyId}/limit`, { monthlyLimitCents: 10 })).status).toBe(200);
    const job = await driveJob(submitted.body.data.id, time, ended);
    expect(job).toMatchObject({ status: 'succeeded', counts: { succeeded: 6, failed: 0, pending: 0 }, spentCents: 6 });
    expect((await gate.keyBudgets([account.keyId]))[0]!.spentUnits).toBe(unitsFromCents(6));
  });

  it("says at each look what it now waits for, and waits for a plan as for money: asking the gate, with no refused call", async () => {
    // One cent of credit and a key limit of one cent: the first item spends both.
    const account = await funded(1, 'payg');
    expect((await ops('PUT', `/keys/${account.keyId}/limit`, { monthlyLimitCents: 1 })).status).toBe(200);
    const submitted = await submit(account.key, { operation: COMPANY, inputs: Array.from({ length: 3 }, (_, index) => ({ domain: `q${index}.com` })) });
    const id = submitted.body.data.id;
    await driveJob(id, time, (job) => job.status === 'waiting_for_credits' && job.counts.succeeded === 1, { follow: false });
    /** The job key's refused calls in D1, once every row of the workspace has landed. */
    const refusedRows = async () => (await landedUsageOfJob(account, id)).filter((row) => row.status >= 400).length;
    const refusedBefore = await refusedRows();
    /** The job once a look (woken by the change or sent here) has written what `done` waits for. */
    const lookUntil = async (done: (job: JobView) => boolean) => {
      time.advance(1_000);
      await lookAgain(id);
      return driveJob(id, time, done, { follow: false });
    };
    /** The job after its next look, whatever woke it. */
    const nextLook = async (before: JobView) => {
      time.advance(1_000);
      await lookAgain(id);
      return driveJob(id, time, (job) => job.resumesAt !== before.resumesAt || job.reason !== before.reason, { follow: false });
    };

    // The key's limit raised, the money is what is short now: the reason says so, not the limit any more.
    let job = await driveJob(id, time, () => true);
    expect((await ops('PUT', `/keys/${account.keyId}/limit`, { monthlyLimitCents: 10 })).status).toBe(200);
    job = await driveJob(id, time, (view) => view.reason?.includes('organization has 0 cents available') ?? false, { follow: false });
    expect(job.reason).toMatch(/^The next item needs 1 cent but the organization has 0 cents available\. The job goes on/);
    expect(job).toMatchObject({ status: 'waiting_for_credits', waitingOn: 'money', counts: { succeeded: 1, pending: 2 } });

    // No plan in force (a plan given for a time that lapsed, then none at all): the look asks the gate and
    // waits, saying what is missing, instead of a refused call a look.
    await configureWallet(env, { id: account.organizationId, plan: 'payg', rpmOverride: null }, clock.now() + 1_000);
    time.advance(2_000);
    job = await lookUntil((view) => view.reason?.includes("The organization's Pay as you go plan ended on") ?? false);
    expect(job.reason).toContain(`a data job's calls need one: choose a plan at ${env.APP_URL.replace(/\/+$/, '')}/w/${account.workspaceId}/plans. The job goes on as soon as a plan starts.`);
    expect((await ops('PUT', `/organizations/${account.organizationId}/plan`, { plan: null })).status).toBe(200);
    job = await lookUntil((view) => view.reason?.startsWith('This organization has no plan,') ?? false);
    job = await nextLook(job);
    expect(job).toMatchObject({ status: 'waiting_for_credits', waitingOn: 'plan', counts: { succeeded: 1, pending: 2 } });
    expect(await refusedRows()).toBe(refusedBefore);

    // A plan and money: it goes on and ends.
    expect((await ops('PUT', `/organizations/${account.organizationId}/plan`, { plan: 'payg' })).status).toBe(200);
    await credit(account.organizationId, { purchasedCents: 5 });
    expect(await driveJob(id, time, ended)).toMatchObject({ status: 'succeeded', counts: { succeeded: 3, pending: 0 } });
  });

  it('stops when the key that submitted it is revoked, the items not run left pending', async () => {
    const account = await funded(100, 'payg');
    // Held by its key's limit after one item, so the revocation finds it running.
    expect((await ops('PUT', `/keys/${account.keyId}/limit`, { monthlyLimitCents: 1 })).status).toBe(200);
    const submitted = await submit(account.key, { operation: COMPANY, inputs: Array.from({ length: 3 }, (_, index) => ({ domain: `r${index}.com` })) });
    await driveJob(submitted.body.data.id, time, (job) => job.status === 'waiting_for_credits', { follow: false });
    expect((await ops('POST', `/keys/${account.keyId}/revoke`)).status).toBe(200);
    const job = await driveJob(submitted.body.data.id, time, ended);
    expect(job.status).toBe('failed');
    expect(job.reason).toContain(`The API key that submitted this job (${account.keyId}) was revoked`);
    expect(job.counts).toMatchObject({ succeeded: 1, pending: 2 });
  });

  it('stops when the key that submitted it expires, as when it is revoked', async () => {
    const account = await funded(100, 'payg');
    expect((await ops('PUT', `/keys/${account.keyId}/limit`, { monthlyLimitCents: 1 })).status).toBe(200);
    const submitted = await submit(account.key, { operation: COMPANY, inputs: Array.from({ length: 3 }, (_, index) => ({ domain: `x${index}.com` })) });
    await driveJob(submitted.body.data.id, time, (job) => job.status === 'waiting_for_credits', { follow: false });
    // The key was made to expire, and its day has come (the job's clock).
    await env.DB.prepare('UPDATE api_keys SET expires_at = ? WHERE id = ?').bind(new Date(clock.now()).toISOString(), account.keyId).run();
    const job = await driveJob(submitted.body.data.id, time, ended);
    expect(job.status).toBe('failed');
    expect(job.reason).toContain(`The API key that submitted this job (${account.keyId}) expired`);
    expect(job.counts).toMatchObject({ succeeded: 1, pending: 2 });
  });

  it('paces a 120-item job on a 60 rpm plan: none of its calls is refused 429, and an interactive call made meanwhile succeeds', async () => {
    const account = await funded(200);
    await rpm(account.organizationId, 'payg', 60);
    // The clock moves with real time here: start the job at the top of a window, so its first 48 calls fall in
    // one window however slow the machine (straddling two, a loaded run counted 62 before the pause).
    time.advance(WINDOW_MS - (clock.now() % WINDOW_MS) + 200);
    const submitted = await submit(account.key, { operation: COMPANY, inputs: Array.from({ length: 120 }, (_, index) => ({ domain: `p${index}.com` })) });
    // The job has taken its share of this window (48 of 60) and waits: the workspace's own call still gets in.
    const paused = await driveJob(submitted.body.data.id, time, (job) => job.resumesAt !== null, { follow: false });
    expect(paused.reason).toMatch(/^Pacing/);
    // 60 less the 12 left to others, less the submission itself, counted in the same window.
    expect(paused.counts.succeeded).toBe(47);
    const interactive = await companyByDomain(account.key, 'interactive.com');
    expect(interactive.status).toBe(200);

    const job = await driveJob(submitted.body.data.id, time, ended);
    expect(job).toMatchObject({ status: 'succeeded', counts: { succeeded: 120, failed: 0, pending: 0 } });
    const rows = await landedUsageOfJob(account, job.id);
    expect(rows.filter((row) => row.status === 429)).toEqual([]);
    expect(rows).toHaveLength(120);
  });
});

describe("a data job's usage rows", () => {
  it('name the job in /v1/usage (jobId), while an interactive call of the same workspace has none', async () => {
    const account = await funded(100);
    const interactive = await companyByDomain(account.key, 'interactive.com');
    expect(interactive.status).toBe(200);
    const submitted = await submit(account.key, { operation: COMPANY, inputs: [{ domain: 'u1.com' }, { domain: 'u2.com' }, { domain: 'status404.u3.com' }] });
    const job = await driveJob(submitted.body.data.id, time, ended);
    expect(job.counts).toMatchObject({ succeeded: 2, failed: 1 });

    const usage = await eventually(
      async () => (await json(await call('/v1/usage', bearer(account.key)))).data,
      (report) => report.rows.filter((row: { jobId: string | null }) => row.jobId !== null).length >= 3,
    );
    const keyId = await jobKeyId(job.id);
    type Row = { keyId: string; jobId: string | null; status: number };
    expect(usage.rows.filter((row: Row) => row.jobId === job.id).map((row: Row) => [row.keyId, row.status]).sort()).toEqual([[keyId, 200], [keyId, 200], [keyId, 404]].sort());
    const others = usage.rows.filter((row: Row) => row.keyId !== keyId);
    expect(others.length).toBeGreaterThanOrEqual(1);
    expect(others.map((row: Row) => row.jobId)).toEqual(others.map(() => null));
  });
});

describe('job events', () => {
  it('announces job.completed with the counts to the endpoints that subscribe, signed and delivered as every event', async () => {
    const account = await funded(100, 'payg');
    const url = `${FAKE_RECEIVER}/ok/${crypto.randomUUID()}`;
    const endpoint = await call('/v1/webhook-endpoints', { method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ url, events: ['job.completed', 'job.failed'] }) });
    expect(endpoint.status).toBe(201);
    const submitted = await submit(account.key, { operation: COMPANY, inputs: [{ domain: 'e1.com' }, { domain: 'status404.e2.com' }] });
    await driveJob(submitted.body.data.id, time, ended);
    const path = new URL(url).pathname;
    const got = await eventually(
      async () => (await (await fetch(`${FAKE_RECEIVER}/_received?path=${encodeURIComponent(path)}`)).json()) as ReceivedRequest[],
      (requests) => requests.length > 0,
      500,
    );
    expect(got).toHaveLength(1);
    const event = JSON.parse(got[0]!.body);
    expect(event).toMatchObject({ type: 'job.completed', data: { workspaceId: account.workspaceId, job: { id: submitted.body.data.id, status: 'succeeded', counts: { total: 2, succeeded: 1, failed: 1, pending: 0 }, spentCents: 1 } } });
    expect(got[0]!.headers['webhook-id']).toBe(`evt_${submitted.body.data.id.slice(4)}`);
  });
});

describe("a data job's runtime hours", () => {
  it("count against the plan's runtimeHours with agents' hours: past the cap the job waits saying so, and goes on once there is room", async () => {
    // The job's clock starts at the top of an hour: its 10-minute re-check then stays in that hour whatever the time of the run.
    time.advance(3_600_000 - (clock.now() % 3_600_000) + 1_000);
    const account = await funded(100, 'payg');
    expect((await ops('PUT', `/organizations/${account.organizationId}/plan`, { plan: 'payg', caps: { runtimeHours: 0 } })).status).toBe(200);
    const submitted = await submit(account.key, { operation: COMPANY, inputs: [{ domain: 'h1.com' }, { domain: 'h2.com' }] });
    const waiting = await driveJob(submitted.body.data.id, time, (job) => job.resumesAt !== null, { follow: false });
    expect(waiting).toMatchObject({ status: 'running', counts: { succeeded: 0, pending: 2 } });
    expect(waiting.reason).toMatch(/allows 0 agent runtime hours a month/);

    expect((await ops('PUT', `/organizations/${account.organizationId}/plan`, { plan: 'payg', caps: { runtimeHours: 1 } })).status).toBe(200);
    const job = await driveJob(submitted.body.data.id, time, ended);
    expect(job).toMatchObject({ status: 'succeeded', counts: { succeeded: 2 } });
    const hours = await env.DB.prepare('SELECT COUNT(*) AS n FROM job_hours WHERE job_id = ?').bind(job.id).first<{ n: number }>();
    expect(hours!.n).toBe(1);
  });
});

describe("a data job's key", () => {
  it('is refused 403 on /v1, accepted on /runtime while its job runs, and 401 once the job has ended', async () => {
    const account = await funded(100);
    await rpm(account.organizationId, 'payg', 10);
    const submitted = await submit(account.key, { operation: COMPANY, inputs: Array.from({ length: 12 }, (_, index) => ({ domain: `k${index}.com` })) });
    await driveJob(submitted.body.data.id, time, (job) => job.resumesAt !== null, { follow: false });
    const key = await jobKey(submitted.body.data.id);

    const v1 = await companyByDomain(key, 'v1.com');
    expect(v1.status).toBe(403);
    expect((await json(v1)).error.message).toContain("scope is 'data_job'");
    // The window is the job's to share: reset it so the runtime call has room.
    time.advance(60_000);
    const runtime = await call('/runtime/data/linkedin/get-company-by-domain?domain=runtime.com', bearer(key));
    expect(runtime.status).toBe(200);

    const job = await driveJob(submitted.body.data.id, time, ended);
    expect(job.status).toBe('succeeded');
    const after = await call('/runtime/data/linkedin/get-company-by-domain?domain=after.com', bearer(key));
    expect(after.status).toBe(401);
  });
});
