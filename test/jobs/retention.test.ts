import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { clock } from '../../src/core/clock';
import { pruneSnapshots, SNAPSHOTS_KEPT_DAYS, trackChanges } from '../../src/providers/builtin-web/change-tracking';
import { INLINE_DATA_BYTES, itemWrites, JOB_RESULTS_KEPT_DAYS, pruneJobResults, resultsPage } from '../../src/services/jobs/store';
import { insertUsageRows } from '../../src/core/usage';
import { createKey } from '../../src/services/accounts';
import { usageReport } from '../../src/services/usage-report';
import { json, provision } from '../support/api';
import { jobRequest, readJob, storedJob } from './support';
import { SLICE_ITEMS } from '../../src/core/protocols/job';
import { finishJob } from '../../src/services/jobs/run';

const DAY = 86_400_000;
// A moment long before every other file's jobs and snapshots (stamped with the real time): a run at it finds
// only the rows this file dated before it, so what it prunes is exactly theirs.
const NOW = Date.UTC(2001, 5, 15, 0, 5);

describe(`a data job's items are kept ${JOB_RESULTS_KEPT_DAYS} days after it ends`, () => {
  it('deletes the items of a job that ended longer ago than that, keeps the others, and its results then say why they are gone', async () => {
    const account = await provision();
    const ended = async (daysAgo: number | null) => {
      const job = await storedJob(3, { account });
      const finishedAt = daysAgo === null ? null : new Date(NOW - daysAgo * DAY).toISOString();
      // Its first item's answer is large enough to be kept in R2.
      await env.DB.batch(await itemWrites(env, job.id, [{ idx: 0, status: 'succeeded', data: { blob: 'x'.repeat(INLINE_DATA_BYTES) }, costUnits: 1, attempts: 1 }]));
      await env.DB.prepare('UPDATE data_jobs SET status = ?, finished_at = ? WHERE id = ?').bind(daysAgo === null ? 'running' : 'succeeded', finishedAt, job.id).run();
      return job.id;
    };
    const old = await ended(JOB_RESULTS_KEPT_DAYS + 1);
    // A call the old job made, named by the job's own key: its usage row outlives the job's results by a year.
    const key = await createKey(env.DB, env.KEY_ENCRYPTION_KEY, { workspaceId: account.workspaceId, scope: 'data_job', name: `data job ${old}` });
    await env.DB.prepare('UPDATE data_jobs SET key_id = ? WHERE id = ?').bind(key.id, old).run();
    const called = new Date(NOW - (JOB_RESULTS_KEPT_DAYS + 2) * DAY).toISOString();
    await insertUsageRows(env.DB, JSON.stringify([{ id: `use_${old}`, requestId: 'req_job', organizationId: account.organizationId, workspaceId: account.workspaceId, keyId: key.id, operation: 'web.scrape', status: 200, errorCode: null, costUnits: 1, cached: false, latencyMs: 5, createdAt: called }])).run();
    const recent = await ended(JOB_RESULTS_KEPT_DAYS - 1);
    const running = await ended(null);

    const answers = async (jobId: string) => (await env.RESULTS.list({ prefix: `jobs/${jobId}/` })).objects.length;
    expect(await answers(old)).toBe(1);

    const pruned = await pruneJobResults(env, NOW);
    expect(pruned).toEqual({ jobs: 1, items: 3 });
    expect((await resultsPage(env, old, { limit: 10 })).items).toEqual([]);
    expect(await answers(old)).toBe(0);
    for (const kept of [recent, running]) {
      expect((await resultsPage(env, kept, { limit: 10 })).items).toHaveLength(3);
      expect(await answers(kept)).toBe(1);
    }
    // A second run finds nothing more to do.
    expect(await pruneJobResults(env, NOW)).toEqual({ jobs: 0, items: 0 });

    // Its usage row still says which job made the call (derived through the job's key).
    const usage = await usageReport(env.DB, account.workspaceId, { from: called, to: new Date(NOW).toISOString(), limit: 10 });
    expect(usage.rows.map((row) => [row.id, row.jobId])).toEqual([[`use_${old}`, old]]);

    const gone = await jobRequest(account.key, `/${old}/results`);
    expect(gone.status).toBe(404);
    expect((await json(gone)).error.message).toContain(`kept ${JOB_RESULTS_KEPT_DAYS} days after it ended`);
    // The job itself, its counts and spend, stays, and says its results are gone; another says until when it keeps them.
    expect((await json(await jobRequest(account.key, `/${old}`))).data).toMatchObject({ resultsDeleted: true });
    expect((await json(await jobRequest(account.key, `/${recent}`))).data).toMatchObject({
      resultsDeleted: false,
      resultsKeptUntil: new Date(NOW + DAY).toISOString(),
    });
    expect((await jobRequest(account.key, `/${recent}/results`)).status).toBe(200);
  });
});

describe('a cancelled job', () => {
  it(`keeps the items a slice could have started (the first ${SLICE_ITEMS} pending) and deletes the rest at once; its counts keep every item`, async () => {
    const account = await provision();
    const pendingOf = async (jobId: string) =>
      (await env.DB.prepare("SELECT idx FROM data_job_items WHERE job_id = ? AND status = 'pending' ORDER BY idx").bind(jobId).all<{ idx: number }>()).results.map((row) => row.idx);
    const large = await storedJob(SLICE_ITEMS + 150, { account });
    const small = await storedJob(40, { account });
    for (const job of [large, small]) {
      const cancelled = await json(await jobRequest(account.key, `/${job.id}/cancel`, { method: 'POST' }));
      expect(cancelled.data).toMatchObject({ status: 'cancelled', counts: { succeeded: 0, failed: 0, pending: job.items } });
    }
    // No item past the first slice's could be in flight: their inputs go with the cancel, not 30 days after it.
    expect(await pendingOf(large.id)).toEqual(Array.from({ length: SLICE_ITEMS }, (_, idx) => idx));
    expect(await pendingOf(small.id)).toHaveLength(40);
    expect((await readJob(account.key, large.id)).counts).toEqual({ total: SLICE_ITEMS + 150, succeeded: 0, failed: 0, pending: SLICE_ITEMS + 150 });

    // The run's last step: no slice is left in flight, and the items it kept go too; the counts stay.
    for (const job of [large, small]) await finishJob(env, job.id);
    expect(await pendingOf(large.id)).toEqual([]);
    expect(await pendingOf(small.id)).toEqual([]);
    expect((await readJob(account.key, large.id)).counts).toEqual({ total: SLICE_ITEMS + 150, succeeded: 0, failed: 0, pending: SLICE_ITEMS + 150 });
    expect((await readJob(account.key, large.id)).status).toBe('cancelled');
  });
});

describe(`a change-tracking snapshot is kept ${SNAPSHOTS_KEPT_DAYS} days after its URL was last scraped`, () => {
  it('deletes the snapshots not refreshed for longer, their texts in R2 with them, and keeps the rest', async () => {
    const organizationId = `org_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`;
    const snapshot = async (url: string, daysAgo: number) => {
      clock.now = () => NOW - daysAgo * DAY;
      await trackChanges(env, { organizationId, url, markdown: `# ${url}`, statusCode: 200 }, []);
    };
    const realNow = clock.now;
    try {
      await snapshot('https://example.com/stale', SNAPSHOTS_KEPT_DAYS + 1);
      await snapshot('https://example.com/fresh', SNAPSHOTS_KEPT_DAYS - 1);
    } finally {
      clock.now = realNow;
    }
    const texts = async () => (await env.RESULTS.list({ prefix: `snapshots/${organizationId}/` })).objects.length;
    expect(await texts()).toBe(2);
    expect(await pruneSnapshots(env, NOW)).toBe(1);
    const left = await env.DB.prepare('SELECT url FROM scrape_snapshots WHERE organization_id = ?').bind(organizationId).all<{ url: string }>();
    expect(left.results.map((row) => row.url)).toEqual(['https://example.com/fresh']);
    expect(await texts()).toBe(1);
  });
});
