import { createExecutionContext, createScheduledController, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import worker from '../../src/api';
import { clock } from '../../src/core/clock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { eventually, funded, ops, wallet } from '../support/api';
import { createKey } from '../../src/services/accounts';
import { MISSING_RUN, resumeUnfinishedJobs, reviveStrandedJobs } from '../../src/services/jobs/resume';
import { findJob } from '../../src/services/jobs/store';
import { finishJob } from '../../src/services/jobs/run';
import type { Env } from '../../src/core/config';
import { driveJob, jobKeyId, jobTime, type JobTime, landedUsageOfJob, storedJob, submit, usageOfKey } from './support';
import { keptNightly } from '../support/nightly';

vi.setConfig({ testTimeout: 120_000 });

let time: JobTime;
beforeEach(async () => {
  time = await jobTime();
});
afterEach(async () => {
  await time.dispose();
});

describe('resuming unfinished data jobs (npm start, after workerd stopped)', () => {
  // The route restarts every job not ended in the database, and the files run before this one in the same workerd
  // leave some not ended: with them it took from 0.7 s to 16.7 s in four runs of
  // the workers project, near the 20 s every test gets, so it has more.
  it("POST /ops/v1/jobs/resume restarts every job not ended; a job restarted before it ended finishes with each item billed once, an ended job is left alone", { timeout: 90_000 }, async () => {
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
    const charged = await landedUsageOfJob(account, id);
    expect(charged.filter((row) => row.cost_units > 0)).toHaveLength(30);
    const rows = await env.DB.prepare("SELECT COUNT(*) AS n FROM data_job_items WHERE job_id = ? AND status = 'succeeded'").bind(id).first<{ n: number }>();
    expect(rows!.n).toBe(30);
  });

  it('ends a job whose run the platform does not have, as the nightly check does, and leaves one it cannot say about', async () => {
    const account = await funded(100);
    const missing = await storedJob(1, { operation: 'linkedin/get-company-by-domain', inputs: [{ domain: 'm0.com' }], account });
    const unsure = { ...env, DATA_JOBS: { get: () => Promise.reject(new Error('network lost')) } } as unknown as Env;
    expect((await resumeUnfinishedJobs(unsure)).resumed).not.toContain(missing.id);
    expect((await findJob(env.DB, missing.id))!).toMatchObject({ status: 'running', reason: null });

    expect((await resumeUnfinishedJobs(env)).resumed).not.toContain(missing.id);
    expect((await findJob(env.DB, missing.id))!).toMatchObject({ status: 'failed', reason: MISSING_RUN });
    await expect(env.DATA_JOBS.get(missing.id)).rejects.toThrow(/not_found/);
  });
});

describe("the nightly check for jobs the platform will not move on (the api's cron)", () => {
  const COMPANY = 'linkedin/get-company-by-domain';
  const HOURS = 2 * 60 * 60_000;

  it('ends a job whose run cannot be found, failed with nothing run and its key revoked, instead of starting it; a job younger than an hour is left to its own start', async () => {
    const account = await funded(100);
    // What a submission stores before it creates the instance, and a failure in between: a job with its key, and no run.
    const job = await storedJob(3, { operation: COMPANY, inputs: [{ domain: 's0.com' }, { domain: 's1.com' }, { domain: 's2.com' }], account });
    const key = await createKey(env.DB, env.KEY_ENCRYPTION_KEY, { workspaceId: account.workspaceId, scope: 'data_job', name: `data job ${job.id}` });
    await env.DB.prepare("UPDATE data_jobs SET key_id = ?, status = 'queued' WHERE id = ?").bind(key.id, job.id).run();
    expect((await reviveStrandedJobs(env)).ended).not.toContain(job.id);

    time.advance(HOURS);
    // Through the api's cron handler, as Cloudflare runs it each night.
    const context = createExecutionContext();
    await worker.scheduled(createScheduledController({ scheduledTime: clock.now(), cron: '5 0 * * *' }), keptNightly().bindings, context);
    await waitOnExecutionContext(context);
    const ended = (await findJob(env.DB, job.id))!;
    expect(ended).toMatchObject({ status: 'failed', succeeded: 0, reason: MISSING_RUN });
    // No run was started for it: its items were never called, and nothing was charged.
    await expect(env.DATA_JOBS.get(job.id)).rejects.toThrow(/not_found/);
    expect(await usageOfKey(key.id)).toEqual([]);
    expect(await wallet(account.organizationId)).toMatchObject({ purchasedBalanceCents: 100 });
    const revoked = await env.DB.prepare('SELECT revoked_at AS revokedAt FROM api_keys WHERE id = ?').bind(key.id).first<{ revokedAt: string | null }>();
    expect(revoked!.revokedAt).not.toBeNull();
  });

  it('leaves a job for another night when the platform cannot say whether it has its run', async () => {
    const account = await funded(100);
    const job = await storedJob(1, { operation: COMPANY, inputs: [{ domain: 'u0.com' }], account });
    time.advance(HOURS);
    const unsure = { ...env, DATA_JOBS: { get: () => Promise.reject(new Error('network lost')) } } as unknown as Env;
    expect((await reviveStrandedJobs(unsure)).ended).not.toContain(job.id);
    expect((await findJob(env.DB, job.id))!).toMatchObject({ status: 'running', reason: null });
  });

  it("leaves a job whose key could not be revoked not ended, so that the next try (the step's retry, the next night) revokes it and ends it", async () => {
    const account = await funded(100);
    const job = await storedJob(1, { operation: COMPANY, inputs: [{ domain: 'k0.com' }], account });
    const key = await createKey(env.DB, env.KEY_ENCRYPTION_KEY, { workspaceId: account.workspaceId, scope: 'data_job', name: `data job ${job.id}` });
    await env.DB.prepare('UPDATE data_jobs SET key_id = ? WHERE id = ?').bind(key.id, job.id).run();
    const gates = env.WORKSPACE_GATE;
    const unreachable = { ...env, WORKSPACE_GATE: { idFromName: (name: string) => gates.idFromName(name), get: () => ({ revoke: () => Promise.reject(new Error('gate unreachable')) }) } } as unknown as Env;
    await expect(finishJob(unreachable, job.id)).rejects.toThrow('gate unreachable');
    expect((await findJob(env.DB, job.id))!.status).toBe('running');

    await finishJob(env, job.id);
    expect((await findJob(env.DB, job.id))!.status).toBe('failed');
    const revoked = await env.DB.prepare('SELECT revoked_at AS revokedAt FROM api_keys WHERE id = ?').bind(key.id).first<{ revokedAt: string | null }>();
    expect(revoked!.revokedAt).not.toBeNull();
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
  it("ends a job whose run was terminated on the platform, failed with the run's end as its reason, its key revoked", async () => {
    // Two cents for three items: the job runs two and waits for money, its run alive until someone ends it.
    const account = await funded(2, 'payg');
    const submitted = await submit(account.key, { operation: COMPANY, inputs: [{ domain: 't0.com' }, { domain: 't1.com' }, { domain: 't2.com' }] });
    const id = submitted.body.data.id;
    await driveJob(id, time, (job) => job.status === 'waiting_for_credits', { follow: false });
    const instance = await env.DATA_JOBS.get(id);
    await instance.terminate();
    await eventually(async () => (await instance.status()).status, (status) => status === 'terminated');

    time.advance(HOURS);
    expect((await reviveStrandedJobs(env)).ended).toContain(id);
    const job = (await findJob(env.DB, id))!;
    expect(job).toMatchObject({ status: 'failed', succeeded: 2 });
    expect(job.reason).toContain('stopped on the platform (terminated)');
    const revoked = await env.DB.prepare('SELECT revoked_at AS revokedAt FROM api_keys WHERE id = ?').bind(await jobKeyId(id)).first<{ revokedAt: string | null }>();
    expect(revoked!.revokedAt).not.toBeNull();
  });

  it('finishes a job whose run completed while the job was not marked ended, as its own last step would have', async () => {
    const account = await funded(100);
    const submitted = await submit(account.key, { operation: COMPANY, inputs: [{ domain: 'c0.com' }, { domain: 'c1.com' }] });
    const id = submitted.body.data.id;
    await driveJob(id, time, (job) => job.finishedAt !== null);
    await eventually(async () => (await (await env.DATA_JOBS.get(id)).status()).status, (status) => status === 'complete');
    // The run's last write lost: the job still says running.
    await env.DB.prepare("UPDATE data_jobs SET status = 'running', finished_at = NULL WHERE id = ?").bind(id).run();

    time.advance(HOURS);
    expect((await reviveStrandedJobs(env)).ended).toContain(id);
    expect((await findJob(env.DB, id))!).toMatchObject({ status: 'succeeded', succeeded: 2, reason: null });
  });

  it('looks at a bounded number of jobs a night, those looked at least recently first, so each one is looked at within its turn', async () => {
    const account = await funded(100);
    const [first, second, stranded] = await Promise.all([0, 1, 2].map((n) => storedJob(1, { operation: COMPANY, inputs: [{ domain: `b${n}.com` }], account })));
    // Made old by their own date, not by moving the clock: jobs other files left in the shared D1 (some with
    // live runs, which a night looks at without ending) stay younger than an hour, outside the night's choice.
    // The stranded job, whose run is missing, is the youngest of the three.
    const age = async (job: { id: string }, hours: number) =>
      env.DB.prepare('UPDATE data_jobs SET created_at = ? WHERE id = ?').bind(new Date(clock.now() - hours * HOURS).toISOString(), job.id).run();
    await Promise.all([age(first!, 3), age(second!, 3), age(stranded!, 2)]);
    // The platform cannot say about the other two: a night looks at them and leaves them as they are.
    const looked: string[] = [];
    const night = { ...env, DATA_JOBS: { get: (id: string) => (looked.push(id), id === stranded!.id ? env.DATA_JOBS.get(id) : Promise.reject(new Error('network lost'))) } } as unknown as Env;

    // Two a night: the first night the two older ones, never looked at; the second the stranded one, never
    // looked at either, before the two just looked at (at random it would wait on 2 nights in 3, unbounded).
    expect((await reviveStrandedJobs(night, 2)).ended).toEqual([]);
    expect(looked.sort()).toEqual([first!.id, second!.id].sort());
    expect((await reviveStrandedJobs(night, 2)).ended).toEqual([stranded!.id]);
    expect((await findJob(env.DB, stranded!.id))!).toMatchObject({ status: 'failed', reason: MISSING_RUN });
    // The third night looks at the two again, in the order they were last looked at.
    looked.length = 0;
    await reviveStrandedJobs(night, 2);
    expect(looked.sort()).toEqual([first!.id, second!.id].sort());
  });
});
