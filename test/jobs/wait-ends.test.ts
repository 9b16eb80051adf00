import { describe, expect, it } from 'vitest';
import { lookAgainAfter } from '../../durable-objects/job-workflow';
import { LOOK_AGAIN_EVENT } from '../../src/services/jobs/wake';

/** A step whose event wait ends as `outcome` does, recording what it was asked (its sleeps too). */
function stepThat(outcome: () => Promise<unknown>) {
  const asked: unknown[] = [];
  return {
    asked,
    step: {
      waitForEvent: (name: string, options: unknown) => {
        asked.push([name, options]);
        return outcome();
      },
      sleep: async (name: string, duration: unknown) => {
        asked.push(['sleep', name, duration]);
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
      const { step, asked } = stepThat(() => Promise.reject(error));
      await expect(lookAgainAfter(step, 'wait 0', 30_000)).resolves.toBeUndefined();
      // A timeout is the wait's end: no sleep after it.
      expect(asked).toHaveLength(1);
    }
  });

  it('sleeps its time instead when the wait ends by an error that is no timeout, so an error that comes at once cannot run look after look', async () => {
    const { step, asked } = stepThat(() => Promise.reject(new Error('event store unavailable')));
    await expect(lookAgainAfter(step, 'wait 7', 900_000)).resolves.toBeUndefined();
    expect(asked).toEqual([
      ['wait 7', { type: LOOK_AGAIN_EVENT, timeout: 900_000 }],
      ['sleep', 'wait 7 after error', 900_000],
    ]);
  });

  it("lets the engine's own aborts through: a paused, restarted or terminated run stops there", async () => {
    for (const reason of ['User called pause', 'User called restart', 'User called terminate']) {
      const abort = new Error(`Aborting engine: ${reason}`);
      await expect(lookAgainAfter(stepThat(() => Promise.reject(abort)).step, 'wait 0', 30_000)).rejects.toBe(abort);
    }
  });
});
