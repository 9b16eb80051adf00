import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { pruneSnapshots, SNAPSHOTS_KEPT_DAYS } from '../../src/providers/builtin-web/change-tracking';
import { itemPage, JOB_RESULTS_KEPT_DAYS, pruneJobResults } from '../../src/services/jobs/store';
import { json, provision } from '../support/api';
import { jobRequest, storedJob } from './support';

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
      await env.DB.prepare('UPDATE data_jobs SET status = ?, finished_at = ? WHERE id = ?').bind(daysAgo === null ? 'running' : 'succeeded', finishedAt, job.id).run();
      return job.id;
    };
    const old = await ended(JOB_RESULTS_KEPT_DAYS + 1);
    const recent = await ended(JOB_RESULTS_KEPT_DAYS - 1);
    const running = await ended(null);

    const pruned = await pruneJobResults(env.DB, NOW);
    expect(pruned).toEqual({ jobs: 1, items: 3 });
    expect(await itemPage(env.DB, old, -1, 10, null)).toEqual([]);
    expect(await itemPage(env.DB, recent, -1, 10, null)).toHaveLength(3);
    expect(await itemPage(env.DB, running, -1, 10, null)).toHaveLength(3);
    // A second run finds nothing more to do.
    expect(await pruneJobResults(env.DB, NOW)).toEqual({ jobs: 0, items: 0 });

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

describe(`a change-tracking snapshot is kept ${SNAPSHOTS_KEPT_DAYS} days after its URL was last scraped`, () => {
  it('deletes the snapshots not refreshed for longer, and keeps the rest', async () => {
    const organizationId = `org_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`;
    const snapshot = (url: string, daysAgo: number) =>
      env.DB.prepare('INSERT INTO scrape_snapshots (organization_id, url, content_hash, markdown, scraped_at) VALUES (?, ?, ?, ?, ?)')
        .bind(organizationId, url, 'hash', '# Page', new Date(NOW - daysAgo * DAY).toISOString())
        .run();
    await snapshot('https://example.com/stale', SNAPSHOTS_KEPT_DAYS + 1);
    await snapshot('https://example.com/fresh', SNAPSHOTS_KEPT_DAYS - 1);
    expect(await pruneSnapshots(env.DB, NOW)).toBe(1);
    const left = await env.DB.prepare('SELECT url FROM scrape_snapshots WHERE organization_id = ?').bind(organizationId).all<{ url: string }>();
    expect(left.results.map((row) => row.url)).toEqual(['https://example.com/fresh']);
  });
});
