import { vi } from 'vitest';
import { WorkspaceGate } from '../../durable-objects/workspace-gate';

/**
 * The gate's `settle` of each success, its answer lost on the way back the first `times` times it is asked,
 * after the gate settled the call: the error Cloudflare's runtime gives when a connection drops, marked
 * retryable. `handedOn`: before the answer is lost, the gate has handed the call's charge to the wallet and
 * given its lease back. `lost` counts the answers lost; `restore()` ends it.
 */
export function losingSettleAnswers(times: number, options: { handedOn?: boolean } = {}): { lost: number; restore(): void } {
  const settle = WorkspaceGate.prototype.settle;
  const lostOf = new Map<string, number>();
  const spy = vi.spyOn(WorkspaceGate.prototype, 'settle').mockImplementation(async function (this: WorkspaceGate, ...args: Parameters<WorkspaceGate['settle']>) {
    const answer = await settle.apply(this, args);
    const [holdId, actualUnits] = args;
    const lost = lostOf.get(holdId) ?? 0;
    if (actualUnits === 0 || lost >= times) return answer;
    lostOf.set(holdId, lost + 1);
    counted.lost += 1;
    if (options.handedOn) await this.flush();
    throw Object.assign(new Error('Network connection lost.'), { retryable: true });
  });
  const counted = { lost: 0, restore: () => spy.mockRestore() };
  return counted;
}
