/** What the bench (`run.ts`) and its A/B (`ab.ts`) read of the machine: workerd's processes and their CPU, and the middle of a list. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Process ids of the workerd processes this process started (Miniflare spawns them as children). */
export function workerdChildren(): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(process.pid), 'workerd'], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

const CLOCK_TICKS_PER_S = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** User plus system CPU time of `pids`, in ms, from /proc (fields 14 and 15 of stat). */
export function cpuMs(pids: number[]): number {
  return pids.reduce((sum, pid) => {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return sum + ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
    } catch {
      return sum;
    }
  }, 0);
}

/** The middle value (the mean of the two middle ones for an even count): one disturbed turn does not move it. */
export function median(values: number[]): number {
  const sorted = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
