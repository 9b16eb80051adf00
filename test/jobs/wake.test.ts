import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { Env } from '../../src/core/config';
import { clock } from '../../src/core/clock';
import { LOOK_AGAIN_EVENT, WAKE_AT_ONCE, wakeWaitingJobs } from '../../src/services/jobs/wake';
import { provision } from '../support/api';
import { storedJob } from './support';

/** The platform's Workflows as far as a wake uses them: each instance asked for, and the event it was sent. */
function recordingEnv(): { env: Env; woken: string[] } {
  const woken: string[] = [];
  const DATA_JOBS = {
    get: async (id: string) => ({
      sendEvent: async (event: { type: string }) => {
        expect(event.type).toBe(LOOK_AGAIN_EVENT);
        woken.push(id);
      },
    }),
  };
  return { env: { ...env, DATA_JOBS } as unknown as Env, woken };
}

/** A job of `account` waiting since `waitingSince` ms ago, its next look `nextLook` ms from now (negative: past). */
async function waitingJob(account: { organizationId: string; workspaceId: string }, waitingSince: number, nextLook: number, budgetKeyId: string | null = null): Promise<string> {
  const job = await storedJob(1, { operation: 'linkedin/get-company-by-domain', inputs: [{ domain: 'w.com' }], account });
  await env.DB.prepare("UPDATE data_jobs SET status = 'waiting_for_credits', waiting_since = ?, resume_at = ?, budget_key_id = ? WHERE id = ?")
    .bind(new Date(clock.now() - waitingSince).toISOString(), clock.now() + nextLook, budgetKeyId, job.id)
    .run();
  return job.id;
}

describe('waking the jobs that wait for money or a key limit', () => {
  it("wakes the organization's live waiting jobs, those waiting longest first, at most WAKE_AT_ONCE; not a run that died, not another organization's", async () => {
    const account = await provision();
    const other = await provision();
    const HOUR = 60 * 60_000;
    const newest = await waitingJob(account, 1_000, 30_000);
    const oldest = await waitingJob(account, 48 * HOUR, 15 * 60_000);
    const middle = await waitingJob(account, 2 * HOUR, 15 * 60_000);
    // Its run died a day ago: its next look is long past; another's look is a little late, as while it looks.
    const dead = await waitingJob(account, 72 * HOUR, -24 * HOUR);
    const late = await waitingJob(account, 3 * HOUR, -5 * 60_000);
    const overdue = await waitingJob(account, 4 * HOUR, -11 * 60_000);
    const stranger = await waitingJob(other, 10 * HOUR, 60_000);

    const recorded = recordingEnv();
    expect(await wakeWaitingJobs(recorded.env, { organizationId: account.organizationId })).toEqual([oldest, late, middle, newest]);
    expect(recorded.woken.sort()).toEqual([oldest, late, middle, newest].sort());
    expect(recorded.woken).not.toContain(dead);
    expect(recorded.woken).not.toContain(overdue);
    expect(recorded.woken).not.toContain(stranger);

    // Past the bound, the longest waits go first and the newest wait for their recheck.
    const many = await provision();
    const ids: string[] = [];
    for (let index = 0; index <= WAKE_AT_ONCE; index++) ids.push(await waitingJob(many, (WAKE_AT_ONCE + 1 - index) * 60_000, 60_000));
    const woken = await wakeWaitingJobs(recordingEnv().env, { organizationId: many.organizationId });
    expect(woken).toEqual(ids.slice(0, WAKE_AT_ONCE));
  });

  it("wakes one key's jobs when its limit is raised, and no other key's", async () => {
    const account = await provision();
    const mine = await waitingJob(account, 60_000, 60_000, account.keyId);
    await waitingJob(account, 60_000, 60_000, 'key_someoneelse000000000000');
    expect(await wakeWaitingJobs(recordingEnv().env, { budgetKeyId: account.keyId })).toEqual([mine]);
  });

  it('never fails the change that woke them: an instance it cannot reach is skipped', async () => {
    const account = await provision();
    const reachable = await waitingJob(account, 60_000, 60_000);
    const gone = await waitingJob(account, 120_000, 60_000);
    const failing = { ...env, DATA_JOBS: { get: async (id: string) => (id === gone ? Promise.reject(new Error('instance.not_found')) : { sendEvent: async () => {} }) } } as unknown as Env;
    expect(await wakeWaitingJobs(failing, { organizationId: account.organizationId })).toEqual([reachable]);
    expect(await wakeWaitingJobs({ ...env, DB: undefined } as unknown as Env, { organizationId: account.organizationId })).toEqual([]);
  });
});
