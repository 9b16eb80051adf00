import { describe, expect, it } from 'vitest';
import { lookAgainAfter } from '../../durable-objects/job-workflow';
import { LOOK_AGAIN_EVENT } from '../../src/services/jobs/wake';

/** A step whose event wait ends as `outcome` does, recording what it was asked. */
function stepThat(outcome: () => Promise<unknown>) {
  const asked: unknown[] = [];
  return {
    asked,
    step: {
      waitForEvent: (name: string, options: unknown) => {
        asked.push([name, options]);
        return outcome();
      },
    } as Parameters<typeof lookAgainAfter>[0],
  };
}

describe("a data job's wait for money", () => {
  it('waits for the look-again event with its recheck as the timeout', async () => {
    const { step, asked } = stepThat(async () => ({ type: LOOK_AGAIN_EVENT, payload: null, timestamp: new Date() }));
    await lookAgainAfter(step, 'wait 3', 30_000);
    expect(asked).toEqual([['wait 3', { type: LOOK_AGAIN_EVENT, timeout: 30_000 }]]);
  });

  it('ends at its timeout whatever shape the timeout error has after its RPC crossing, so the job looks again instead of erroring', async () => {
    const named = Object.assign(new Error('Execution timed out after 30000ms'), { name: 'WorkflowTimeoutError' });
    for (const error of [named, new Error('WorkflowTimeoutError: Execution timed out after 30000ms'), new Error('Execution timed out after 30000ms'), 'timed out']) {
      await expect(lookAgainAfter(stepThat(() => Promise.reject(error)).step, 'wait 0', 30_000)).resolves.toBeUndefined();
    }
  });

  it("lets the engine's own aborts through: a paused, restarted or terminated run stops there", async () => {
    for (const reason of ['User called pause', 'User called restart', 'User called terminate']) {
      const abort = new Error(`Aborting engine: ${reason}`);
      await expect(lookAgainAfter(stepThat(() => Promise.reject(abort)).step, 'wait 0', 30_000)).rejects.toBe(abort);
    }
  });
});
