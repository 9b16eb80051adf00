/** What the bench (`run.ts`) and its A/B (`ab.ts`) share: workerd's processes and their CPU, a block of load, a list's middle and quantiles. */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { Pool } from 'undici';

/** Process ids of the workerd processes this process started (Miniflare spawns them as children). */
export function workerdChildren(): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(process.pid), 'workerd'], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * Of `pids`, those that listen on `port`: the workerd that serves that worker. A stack is two workerds, its
 * workers' and the workspace databases' own (scripts/stack.ts), whose watch asks it for /health four times a
 * second whatever the load: about 9 ms of CPU a second on this machine, which a row's CPU must not count
 * (on a metered turn of 500 calls, 0.03 ms a call that no call did). Read from /proc/net/tcp (the listening
 * socket's inode) and each process's open files; every pid when none matches, so a row is never left unmeasured.
 */
export function servingWorkerd(pids: number[], port: number): number[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let lines: string[] = [];
    try {
      lines = readFileSync(table, 'utf8').split('\n').slice(1);
    } catch {
      continue;
    }
    for (const line of lines) {
      const fields = line.trim().split(/\s+/);
      // local_address is ADDRESS:PORT in hex; state 0A is LISTEN; field 9 the socket's inode.
      if (fields[1]?.endsWith(`:${hexPort}`) && fields[3] === '0A') inodes.add(`socket:[${fields[9]}]`);
    }
  }
  const serving = pids.filter((pid) => {
    try {
      return readdirSync(`/proc/${pid}/fd`).some((fd) => {
        try {
          return inodes.has(readlinkSync(`/proc/${pid}/fd/${fd}`));
        } catch {
          return false;
        }
      });
    } catch {
      return false;
    }
  });
  return serving.length > 0 ? serving : pids;
}

const CLOCK_TICKS_PER_S = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** A process's user and system CPU time so far, in ms, from /proc (fields 14 and 15 of stat); null once it has ended. */
function cpuTimesOf(pid: number): { user: number; system: number } | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return { user: (Number(fields[11]) * 1000) / CLOCK_TICKS_PER_S, system: (Number(fields[12]) * 1000) / CLOCK_TICKS_PER_S };
  } catch {
    return null;
  }
}

/** User plus system CPU time of `pids`, in ms. */
export function cpuMs(pids: number[]): number {
  return pids.reduce((sum, pid) => {
    const times = cpuTimesOf(pid);
    return times ? sum + times.user + times.system : sum;
  }, 0);
}

/**
 * CPU time of `pids` in ms, to the nanosecond: each thread's time on a CPU as the scheduler counts it (the first
 * field of /proc/PID/task/TID/schedstat), summed. `/proc/PID/stat` counts in clock ticks of 10 ms, too coarse
 * for a block of a hundred calls; this reading is what those ticks are scaled to.
 */
export function preciseCpuMs(pids: number[]): number {
  let ns = 0;
  for (const pid of pids) {
    let threads: string[] = [];
    try {
      threads = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const thread of threads) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${thread}/schedstat`, 'utf8').split(' ')[0]);
      } catch {
        // The thread has ended; a process's own threads outlive its requests.
      }
    }
  }
  return ns / 1e6;
}

/** What the kernel did for a process: its CPU time in ms, and the write system calls and bytes it wrote. */
export interface KernelWork {
  ms: number;
  writes: number;
  bytes: number;
}

/**
 * What the kernel did for `pids` so far: its CPU time (the system part of `cpuMs`), and the write system
 * calls and bytes written (`syscw` and `wchar` of /proc/PID/io: sockets, pipes and files alike, SQLite's WAL
 * pages among them). Instructions counted under callgrind do not see this work; CPU time does.
 */
export function kernelWork(pids: number[]): KernelWork {
  const work = { ms: 0, writes: 0, bytes: 0 };
  for (const pid of pids) {
    try {
      const times = cpuTimesOf(pid);
      if (!times) continue;
      const io = readFileSync(`/proc/${pid}/io`, 'utf8');
      const counter = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(io)?.[1] ?? 0);
      work.ms += times.system;
      work.writes += counter('syscw');
      work.bytes += counter('wchar');
    } catch {
      // The process has ended: it adds nothing.
    }
  }
  return work;
}

/** The kernel's work between two readings of `kernelWork`. */
export function kernelBetween(before: KernelWork, after: KernelWork): KernelWork {
  return { ms: after.ms - before.ms, writes: after.writes - before.writes, bytes: after.bytes - before.bytes };
}

/** The value below which `share` of `values` lie. */
export function quantile(values: number[], share: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))]!;
}

/** The middle value (the mean of the two middle ones for an even count): one disturbed turn does not move it. */
export function median(values: number[]): number {
  const sorted = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * Waits until `pids` have gone quiet after a load: at least `minMs`, then until a window of `windowMs` in which
 * they used no more than one clock tick of CPU (`/proc` counts in ticks of 10 ms), at most `maxMs` in all. What a
 * turn's calls leave to do (reports, the wallet's writes to D1, alarms) then counts for that turn, however long
 * it takes on a slow machine, instead of landing in whatever turn comes next. Answers the time waited, in ms.
 */
export async function quietAfter(pids: number[], options: { minMs: number; windowMs: number; maxMs: number }): Promise<number> {
  const started = performance.now();
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  await sleep(options.minMs);
  const tick = 1_000 / CLOCK_TICKS_PER_S;
  while (performance.now() - started < options.maxMs) {
    const before = cpuMs(pids);
    await sleep(options.windowMs);
    if (cpuMs(pids) - before <= tick) break;
  }
  return performance.now() - started;
}

/**
 * One block of a load: `calls` GET requests through `pool` (its connections kept open from block to block, so
 * no block pays for opening them), `connections` at a time, the nth (from 0) asking the path and headers
 * `request(n)` gives. Answers the block's wall time in ms, the CPU a call of `pids` over the block
 * (`preciseCpuMs`), and how many calls did not answer 2xx.
 */
export async function loadBlock(
  pool: Pool,
  pids: number[],
  calls: number,
  connections: number,
  request: (n: number) => { path: string; headers: Record<string, string> },
): Promise<{ ms: number; cpuMsPerCall: number; failures: number }> {
  const cpuBefore = preciseCpuMs(pids);
  const started = performance.now();
  let [next, failures] = [0, 0];
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < calls) {
        const { path, headers } = request(next++);
        const answer = await pool.request({ path, method: 'GET', headers });
        await answer.body.dump();
        if (answer.statusCode >= 300) failures += 1;
      }
    }),
  );
  const ms = performance.now() - started;
  return { ms, cpuMsPerCall: (preciseCpuMs(pids) - cpuBefore) / calls, failures };
}

/**
 * The kernel's TCP counters that say who broke connections (`/proc/net/netstat`, this network namespace: the bench,
 * workerd and the fakes alike). TCPAbortOnData counts data that arrived on a socket its program had closed (a
 * server closing a kept-alive connection as the client sends on it), TCPAbortOnClose a socket closed with data
 * unread (the load tool ends every run so), ListenOverflows and ListenDrops connections a full accept queue
 * turned away.
 */
const TCP_RESET_COUNTERS = ['TCPAbortOnData', 'TCPAbortOnClose', 'TCPAbortOnMemory', 'TCPAbortOnTimeout', 'ListenOverflows', 'ListenDrops'];

/** The counters of TCP_RESET_COUNTERS now. */
export function tcpResets(): Map<string, number> {
  const [names, values] = readFileSync('/proc/net/netstat', 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('TcpExt:'))
    .map((line) => line.split(/\s+/));
  return new Map((names ?? []).map((name, index) => [name, Number(values?.[index])] as const).filter(([name]) => TCP_RESET_COUNTERS.includes(name)));
}

/** How each counter of TCP_RESET_COUNTERS moved since `before`, as text. */
export function tcpResetsSince(before: Map<string, number>): string {
  return [...tcpResets()].map(([name, value]) => `${name} +${value - (before.get(name) ?? 0)}`).join(', ');
}
