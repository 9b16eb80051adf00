import { env } from 'cloudflare:workers';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { eventually, funded, ops } from '../support/api';
import { driveJob, jobKeyId, jobTime, type JobTime, submit, usageOfKey } from './support';

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
