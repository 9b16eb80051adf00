import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runJob } from '../../durable-objects/job-workflow';
import type { Env } from '../../src/core/config';
import { JOB_WORKFLOW_SUBREQUESTS, MAX_JOB_ITEMS, type SliceRun } from '../../src/core/protocols/job';
import { CALL_OVERHEAD_SUBREQUESTS, CALL_SUBREQUESTS, SubrequestBudget } from '../../src/core/subrequests';
import { createKey } from '../../src/services/accounts';
import { runSlice, SLICE_STARTS_ITEMS_MS } from '../../src/services/jobs/run';
import { clock } from '../../src/core/clock';
import { findJob, resultsPage } from '../../src/services/jobs/store';
import { MOST_SLICE_SUBREQUESTS, RUN_END_SUBREQUESTS, SLICE_OVERHEAD_SUBREQUESTS, SLICE_RETRIES, sliceSubrequests } from '../../src/services/jobs/subrequests';
import { MAZE, mazeSite } from '../fakes/maze-site';
import { funded } from '../support/api';
import { storedJob } from './support';

/**
 * A job's items all run in its one Workflow instance, over which Cloudflare counts subrequests
 * (JOB_WORKFLOW_SUBREQUESTS); Miniflare counts none, so these are the checks that it fits (docs/decisions.md,
 * "A job's Workflow instance may make ten million subrequests").
 */

/** Cloudflare's steps per Workflow instance unless raised: no run has more slices than this. */
const WORKFLOW_STEPS = 10_000;

const realNow = clock.now;
afterEach(() => {
  vi.restoreAllMocks();
  clock.now = realNow;
});

describe("a job's subrequests", () => {
  it('fit every item of the largest job called once at its most, a slice for every step, one more slice tried as often as the step allows and the run’s end', () => {
    const onePass = MAX_JOB_ITEMS * (CALL_SUBREQUESTS + CALL_OVERHEAD_SUBREQUESTS) + WORKFLOW_STEPS * SLICE_OVERHEAD_SUBREQUESTS;
    expect(onePass + (SLICE_RETRIES + 1) * MOST_SLICE_SUBREQUESTS + RUN_END_SUBREQUESTS).toBeLessThanOrEqual(JOB_WORKFLOW_SUBREQUESTS);
  });

  it('count a slice the platform runs again with every try before it at its most', () => {
    const call = new SubrequestBudget();
    call.take(120);
    expect(sliceSubrequests([call], 1)).toBe(SLICE_OVERHEAD_SUBREQUESTS + CALL_OVERHEAD_SUBREQUESTS + 120);
    expect(sliceSubrequests([call], 3)).toBe(SLICE_OVERHEAD_SUBREQUESTS + CALL_OVERHEAD_SUBREQUESTS + 120 + 2 * MOST_SLICE_SUBREQUESTS);
  });

  it("of a slice of map items on a site without end are each item's requests, every one the site received, and the calls' and slice's own", async () => {
    const account = await funded(100);
    const input = { url: MAZE, sitemap: 'skip', timeout: 8_000, limit: 100_000 };
    const job = await storedJob(2, { operation: 'web/map', inputs: [input, { ...input, search: 'maze' }], account });
    const key = await createKey(env.DB, env.KEY_ENCRYPTION_KEY, { workspaceId: job.workspaceId, scope: 'data_job', name: `data job ${job.id}` });
    await env.DB.prepare('UPDATE data_jobs SET key_id = ? WHERE id = ?').bind(key.id, job.id).run();
    const maze = mazeSite();
    vi.spyOn(globalThis, 'fetch').mockImplementation(maze.fetch);

    const outcome = await runSlice({ ...env, WEB_PROVIDER: 'builtin' } as Env, job.id);

    expect(maze.requests.length).toBeGreaterThan(2 * (CALL_SUBREQUESTS - 10));
    expect(maze.requests.length).toBeLessThanOrEqual(2 * CALL_SUBREQUESTS);
    expect(outcome.subrequests).toBe(SLICE_OVERHEAD_SUBREQUESTS + 2 * CALL_OVERHEAD_SUBREQUESTS + maze.requests.length);
    const { items } = await resultsPage(env, job.id, { limit: 10 });
    // Each a map of tens of thousands of the maze's links, past what a job keeps of an answer: succeeded, charged.
    for (const item of items) expect(item).toMatchObject({ status: 'succeeded' });
  });
});

describe('a slice of slow items', () => {
  it('starts items only in its first minutes, so none runs past its step: the rest go to the next slice', async () => {
    const account = await funded(100);
    const inputs = Array.from({ length: 24 }, (_, index) => ({ domain: `slow${index}.example.com` }));
    const job = await storedJob(inputs.length, { operation: 'linkedin/get-company-by-domain', inputs, account });
    const key = await createKey(env.DB, env.KEY_ENCRYPTION_KEY, { workspaceId: job.workspaceId, scope: 'data_job', name: `data job ${job.id}` });
    await env.DB.prepare('UPDATE data_jobs SET key_id = ? WHERE id = ?').bind(key.id, job.id).run();
    // Each call to the vendor takes a third of the slice's starting time.
    let elapsed = 0;
    clock.now = () => realNow() + elapsed;
    const vendor = globalThis.fetch;
    vi.spyOn(globalThis, 'fetch').mockImplementation((...request: Parameters<typeof fetch>) => {
      elapsed += SLICE_STARTS_ITEMS_MS / 3;
      return vendor(...request);
    });

    const outcome = await runSlice(env, job.id);

    expect(outcome.kind).toBe('more');
    const { pending } = (await env.DB.prepare("SELECT COUNT(*) AS pending FROM data_job_items WHERE job_id = ? AND status = 'pending'").bind(job.id).first<{ pending: number }>())!;
    expect(pending).toBeGreaterThan(0);
    expect(pending).toBeLessThan(inputs.length);
  });
});

describe("a job's run", () => {
  /** The platform's step, answering every slice with `slice` (the 400th with done), and recording the steps run. */
  function engineStep(slice: SliceRun) {
    const steps: string[] = [];
    const step = {
      do: async (name: string) => {
        steps.push(name);
        if (!name.startsWith('slice ')) return undefined;
        return name === 'slice 399' ? { ...slice, kind: 'done' } : { ...slice };
      },
      sleep: async () => {},
      waitForEvent: async () => ({}),
    } as unknown as Parameters<typeof runJob>[2];
    return { step, steps };
  }

  it('starts a slice only while one tried as often as the step allows, each try at its most, still fits in the instance, then stops and finishes the job', async () => {
    const { step, steps } = engineStep({ kind: 'more', subrequests: MOST_SLICE_SUBREQUESTS });
    await runJob({} as Env, 'job_subrequests', step);
    const slices = steps.filter((name) => name.startsWith('slice ')).length;
    expect(steps.slice(-2)).toEqual(['stop', 'finish']);
    // Every slice before the last at its most, the last tried SLICE_RETRIES times more (each retry counting the
    // tries before it at their most), and the end, are within the instance's subrequests; one slice more is not.
    const lastTriedToTheEnd = (SLICE_RETRIES + 1) * MOST_SLICE_SUBREQUESTS;
    expect((slices - 1) * MOST_SLICE_SUBREQUESTS + lastTriedToTheEnd + RUN_END_SUBREQUESTS).toBeLessThanOrEqual(JOB_WORKFLOW_SUBREQUESTS);
    expect(slices * MOST_SLICE_SUBREQUESTS + lastTriedToTheEnd + RUN_END_SUBREQUESTS).toBeGreaterThan(JOB_WORKFLOW_SUBREQUESTS);
  });

  it('stopped so, ends the job failed with its items not run pending, saying why', async () => {
    const job = await storedJob(3);
    // The platform's step: every slice answers at its most; the stop and the finish run for real.
    const step = {
      do: async (name: string, _config: unknown, run: () => Promise<unknown>) => (name.startsWith('slice ') ? { kind: 'more', subrequests: MOST_SLICE_SUBREQUESTS } : run()),
      sleep: async () => {},
      waitForEvent: async () => ({}),
    } as unknown as Parameters<typeof runJob>[2];
    await runJob(env, job.id, step);
    const ended = (await findJob(env.DB, job.id))!;
    expect(ended).toMatchObject({ status: 'failed', succeeded: 0, failed: 0 });
    expect(ended.reason).toMatch(
      /^The job stopped before its run could pass the 10,000,000 subrequests Cloudflare allows one run \(requests to sites, vendors and storage\): it had made about [\d,]+, its items' retries included\. The items not run stay pending; submit them again as a new job\.$/,
    );
  });

  it('passes the step’s attempt to the slice, which counts the tries before it at their most', async () => {
    const answers: SliceRun[] = [];
    const step = {
      do: async (name: string, _config: unknown, run: (context: { attempt: number }) => Promise<unknown>) => {
        const answer = await run({ attempt: 3 });
        if (name.startsWith('slice ')) answers.push(answer as SliceRun);
        return answer;
      },
      sleep: async () => {},
      waitForEvent: async () => ({}),
    } as unknown as Parameters<typeof runJob>[2];
    // No such job: the slice is done at once, having made its own and nothing else.
    await runJob(env, 'job_not_there', step);
    expect(answers).toEqual([{ kind: 'done', subrequests: SLICE_OVERHEAD_SUBREQUESTS + 2 * MOST_SLICE_SUBREQUESTS }]);
  });

  it('counts a slice answer kept from before slices counted theirs as a slice at its most, and goes on', async () => {
    let left = 3;
    const steps: string[] = [];
    const step = {
      do: async (name: string) => {
        steps.push(name);
        return name.startsWith('slice ') ? { kind: --left === 0 ? 'done' : 'more' } : undefined;
      },
      sleep: async () => {},
      waitForEvent: async () => ({}),
    } as unknown as Parameters<typeof runJob>[2];
    await runJob({} as Env, 'job_from_before', step);
    expect(steps).toEqual(['slice 0', 'slice 1', 'slice 2', 'finish']);
  });

  it('never stops a job whose slices made few', async () => {
    let left = 3;
    const steps: string[] = [];
    const step = {
      do: async (name: string) => {
        steps.push(name);
        return name.startsWith('slice ') ? { kind: --left === 0 ? 'done' : 'more', subrequests: SLICE_OVERHEAD_SUBREQUESTS } : undefined;
      },
      sleep: async () => {},
      waitForEvent: async () => ({}),
    } as unknown as Parameters<typeof runJob>[2];
    await runJob({} as Env, 'job_few', step);
    expect(steps).toEqual(['slice 0', 'slice 1', 'slice 2', 'finish']);
  });
});

describe("a job's item the vendor throttles", () => {
  it("is tried again no sooner than the vendor's Retry-After, when it is longer than the backoff", async () => {
    const account = await funded(100);
    // Firecrawl's 429 for this page says retry-after 7 (test/fakes/firecrawl.ts); the first backoff is 1 s.
    const job = await storedJob(1, { operation: 'web/scrape', inputs: [{ url: `https://fail-429.example/${crypto.randomUUID()}` }], account });
    const key = await createKey(env.DB, env.KEY_ENCRYPTION_KEY, { workspaceId: job.workspaceId, scope: 'data_job', name: `data job ${job.id}` });
    await env.DB.prepare('UPDATE data_jobs SET key_id = ? WHERE id = ?').bind(key.id, job.id).run();
    const started = Date.now();
    await runSlice(env, job.id);
    const item = await env.DB.prepare('SELECT status, attempts, retry_at AS retryAt FROM data_job_items WHERE job_id = ?').bind(job.id).first<{ status: string; attempts: number; retryAt: number }>();
    expect(item).toMatchObject({ status: 'pending', attempts: 1 });
    expect(item!.retryAt - started).toBeGreaterThanOrEqual(7_000);
    expect(item!.retryAt - Date.now()).toBeLessThanOrEqual(7_000);
  });
});
