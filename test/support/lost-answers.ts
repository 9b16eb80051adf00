import { vi } from 'vitest';
import { WorkspaceGate } from '../../durable-objects/workspace-gate';

/**
 * The gate's `settle` of a success, its answer lost on the way back `times` times after the gate settled the
 * call: the error Cloudflare's runtime gives when a connection drops, marked retryable. `handedOn`: before the
 * answer is lost, the gate has handed the call's charge to the wallet and given its lease back.
 */
export function losingSettleAnswers(times: number, options: { handedOn?: boolean } = {}): { lost: number } {
  const settle = WorkspaceGate.prototype.settle;
  const counted = { lost: 0 };
  vi.spyOn(WorkspaceGate.prototype, 'settle').mockImplementation(async function (this: WorkspaceGate, ...args: Parameters<WorkspaceGate['settle']>) {
    const answer = await settle.apply(this, args);
    if (args[1] === 0 || counted.lost >= times) return answer;
    counted.lost += 1;
    if (options.handedOn) await this.flush();
    throw Object.assign(new Error('Network connection lost.'), { retryable: true });
  });
  return counted;
}
