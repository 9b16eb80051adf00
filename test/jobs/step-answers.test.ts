import { describe, expect, it } from 'vitest';
import { runJob } from '../../durable-objects/job-workflow';
import type { Env } from '../../src/core/config';
import type { SliceRun } from '../../src/core/protocols/job';
import { LOOK_AGAIN_EVENT } from '../../src/services/jobs/wake';

/**
 * A Workflow engine's step as the run meets it: what it answers arrives by RPC, disposable (workerd warns of an
 * answer the collector reaches first). This one answers the slices it is given in turn, and records what was
 * disposed and what it was asked to sleep.
 */
function engineStep(slices: SliceRun[]) {
  const disposed: string[] = [];
  const slept: Array<[string, unknown]> = [];
  const answer = <T extends object>(name: string, value: T) => Object.assign(value, { [Symbol.dispose]: () => disposed.push(name) });
  const step = {
    do: async (name: string) => (name === 'finish' ? undefined : answer(name, { ...slices.shift()! })),
    sleep: async (name: string, duration: unknown) => {
      slept.push([name, duration]);
    },
    waitForEvent: async (name: string) => answer(name, { type: LOOK_AGAIN_EVENT, payload: null, timestamp: new Date() }),
  } as unknown as Parameters<typeof runJob>[2];
  return { step, disposed, slept };
}

describe("a data job's run", () => {
  it('lets go of every answer a step gives once read, and still follows what it said', async () => {
    const { step, disposed, slept } = engineStep([
      { kind: 'wait', ms: 4.2, why: 'the rate window', subrequests: 30 },
      { kind: 'wait', ms: 30_000, why: 'money', wakeable: true, subrequests: 30 },
      { kind: 'more', subrequests: 5_000 },
      { kind: 'done', subrequests: 30 },
    ]);
    await runJob({} as Env, 'job_disposal', step);
    expect(disposed).toEqual(['slice 0', 'slice 1', 'wait 1', 'slice 2', 'slice 3']);
    // Each answer was read after it was let go of: the sleep's time, the wait, the end.
    expect(slept).toEqual([['wait 0', 5]]);
  });
});
