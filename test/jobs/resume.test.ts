import { env } from 'cloudflare:workers';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { eventually, funded, ops } from '../support/api';
import { createKey } from '../../src/services/accounts';
import { reviveStrandedJobs } from '../../src/services/jobs/resume';
import { findJob } from '../../src/services/jobs/store';
import { driveJob, jobKeyId, jobTime, type JobTime, storedJob, submit, usageOfKey } from './support';

vi.setConfig({ testTimeout: 120_000 });

let time: JobTime;
beforeEach(async () => {
  time = await jobTime();
});
afterEach(async () => {
  await time.dispose();
});

describe('resuming unfinished data jobs (npm start, after workerd stopped)', () => {
  it("POST /ops/v1/jobs/resume restarts every job not ended; a job restarted before it ended finishes with each item billed once, an ended job is left alone", async () => {
    const account = await funded(100);
    const done = await submit(account.key, { operation: 'linkedin/get-company-by-domain', inputs: [{ domain: 'done.com' }] });
    await driveJob(done.body.data.id, time, (job) => job.finishedAt !== null);

    const inputs = Array.from({ length: 30 }, (_, index) => ({ domain: `r${index}.com` }));
    const running = await submit(account.key, { operation: 'linkedin/get-company-by-domain', inputs });
    const id = running.body.data.id;
    const resumed = await ops('POST', '/jobs/resume');
    expect(resumed.status).toBe(200);
    expect(resumed.body.data.resumed).toContain(id);
    expect(resumed.body.data.resumed).not.toContain(done.body.data.id);

    const job = await driveJob(id, time, (view) => view.finishedAt !== null);
    expect(job).toMatchObject({ status: 'succeeded', counts: { total: 30, succeeded: 30, failed: 0, pending: 0 }, spentCents: 30 });
    const keyId = await jobKeyId(id);
    const charged = await eventually(() => usageOfKey(keyId), (rows) => rows.filter((row) => row.cost_units > 0).length >= 30);
    expect(charged.filter((row) => row.cost_units > 0)).toHaveLength(30);
    const rows = await env.DB.prepare("SELECT COUNT(*) AS n FROM data_job_items WHERE job_id = ? AND status = 'succeeded'").bind(id).first<{ n: number }>();
    expect(rows!.n).toBe(30);
  });
});

describe("the nightly check for jobs the platform will not move on (the api's cron)", () => {
  const COMPANY = 'linkedin/get-company-by-domain';
  const HOURS = 2 * 60 * 60_000;

  it('gives a job whose instance was never created one, and it runs; a job younger than an hour is left to its own start', async () => {
    const account = await funded(100);
    // What a submission stores before it creates the instance, and a failure in between: a job with its key, and no run.
    const job = await storedJob(3, { operation: COMPANY, inputs: [{ domain: 's0.com' }, { domain: 's1.com' }, { domain: 's2.com' }], account });
    const key = await createKey(env.DB, env.KEY_ENCRYPTION_KEY, { workspaceId: account.workspaceId, scope: 'data_job', name: `data job ${job.id}` });
    await env.DB.prepare("UPDATE data_jobs SET key_id = ?, status = 'queued' WHERE id = ?").bind(key.id, job.id).run();
    expect((await reviveStrandedJobs(env)).started).not.toContain(job.id);

    time.advance(HOURS);
    expect((await reviveStrandedJobs(env)).started).toContain(job.id);
    const ran = await driveJob(job.id, time, (view) => view.finishedAt !== null);
    expect(ran).toMatchObject({ status: 'succeeded', counts: { succeeded: 3, pending: 0 } });
  });

  it('ends a job whose run errored: failed with the run\'s error, the items not run pending, its key revoked', async () => {
    await time.dispose();
    // Every attempt of the first slice fails, as through a long outage: the run errors after its retries.
    time = await jobTime({
      modify: async (modifier) => {
        await modifier.disableRetryDelays();
        await modifier.mockStepError({ name: 'slice 0' }, new Error('D1 went away'), 20);
      },
    });
    const account = await funded(100);
    const submitted = await submit(account.key, { operation: COMPANY, inputs: [{ domain: 'e0.com' }, { domain: 'e1.com' }] });
    const id = submitted.body.data.id;
    await eventually(async () => (await (await env.DATA_JOBS.get(id)).status()).status, (status) => status === 'errored');
    expect((await findJob(env.DB, id))!.status).not.toBe('failed');

    time.advance(HOURS);
    expect((await reviveStrandedJobs(env)).ended).toContain(id);
    const job = (await findJob(env.DB, id))!;
    expect(job).toMatchObject({ status: 'failed', succeeded: 0 });
    expect(job.reason).toContain('D1 went away');
    const keyId = await jobKeyId(id);
    const revoked = await env.DB.prepare('SELECT revoked_at AS revokedAt FROM api_keys WHERE id = ?').bind(keyId).first<{ revokedAt: string | null }>();
    expect(revoked!.revokedAt).not.toBeNull();
    // Checked again, an ended job is not looked at.
    expect((await reviveStrandedJobs(env)).ended).not.toContain(id);
  });
});
