/**
 * Helpers for the node tests: run `npm start` (scripts/start.ts) as a real child process in a throwaway
 * SLUICE_HOME, wait for what it prints, and always take it down again.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadSettingNames } from '../../../scripts/lib/settings';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `sluice-${prefix}-`));
}

/**
 * A port nobody listens on now, and that nobody else will be handed before the stack binds it, seconds later
 * (after its bundling and migrations). The OS's own pick (a listen on port 0) comes from the ephemeral range,
 * the same range every outgoing connection's local port comes from: on a busy run another process's
 * connection took such a port in that gap, and `npm start` failed on "Address already in use". So the ports
 * come from below that range (32768 and up on Linux), each vitest worker from its own block of them (vitest's
 * own process, where the shared stack starts, from the first), and each is checked by binding it first.
 */
const BLOCK = 1_500;
const FIRST_PORT = 20_000;
const handedOut = new Set<number>();
export async function freePort(): Promise<number> {
  const worker = Number(process.env.VITEST_POOL_ID ?? 0);
  const start = FIRST_PORT + (worker % 8) * BLOCK;
  const offset = Math.floor(Math.random() * BLOCK);
  for (let i = 0; i < BLOCK; i++) {
    const port = start + ((offset + i) % BLOCK);
    if (handedOut.has(port) || !(await bindable(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`No free port in ${start}-${start + BLOCK - 1}.`);
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolveBindable) => {
    const server = createServer();
    server.once('error', () => resolveBindable(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolveBindable(true)));
  });
}

/** Environment of a stack of its own: its own home (secrets, seed, build, state) and its own ports. */
export async function isolatedEnv(home: string): Promise<NodeJS.ProcessEnv> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // Settings the developer may have exported must not leak into what the tests check: every setting an
  // installation has (SETTINGS, so a vendor added later is covered too) and the CLI's own address.
  for (const name of [...(await loadSettingNames()), 'SLUICE_OPS_URL']) delete env[name];
  return {
    ...env,
    SLUICE_HOME: home,
    SLUICE_STATE_DIR: join(home, 'state'),
    SLUICE_DEV_VARS: join(home, '.dev.vars'),
    SLUICE_API_PORT: String(await freePort()),
    SLUICE_MCP_PORT: String(await freePort()),
    SLUICE_APP_PORT: String(await freePort()),
    WRANGLER_SEND_METRICS: 'false',
    NO_COLOR: '1',
  };
}

export interface Started {
  child: ChildProcess;
  output: () => string;
  key: string;
  curl: string;
  apiUrl: string;
  opsToken: string;
  mcpUrl?: string;
  mcpToken?: string;
  appUrl?: string;
}

const running = new Set<ChildProcess>();

/**
 * `npm start`'s program (`tsx scripts/start.ts`) with tsx loaded into Node directly, as `ops` runs the CLI
 * (without the npx and tsx launchers), resolved once the banner (key, token, curl line) has been printed.
 * The bound is the node project's hook timeout: with a file per core and one more, a start that shares the
 * machine with two other files took over 90 s on a clean clone's CI run (the migrations applied, workerd slow).
 */
export function startStack(env: NodeJS.ProcessEnv, timeoutMs = 170_000): Promise<Started> {
  // Its own process group, so the whole tree (node, workerd) can be signalled at once.
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));

  return new Promise((resolveStarted, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      clearInterval(poll);
      reject(new Error(`${why}\n--- output of npm start ---\n${output}`));
    };
    const timer = setTimeout(() => fail(`npm start printed no banner within ${timeoutMs / 1000} s.`), timeoutMs);
    child.once('exit', (code, signal) => fail(`npm start exited early (${signal ?? code}).`));
    const poll = setInterval(() => {
      if (!/Ctrl-C stops/.test(output)) return;
      const key = /API key\s+(sluice_live_[0-9a-f]{32})/.exec(output)?.[1];
      const curl = /^\s*(curl .*)$/m.exec(output)?.[1];
      const apiUrl = /REST API\s+(http\S+)/.exec(output)?.[1];
      const opsToken = /Operator token\s+(\S+)/.exec(output)?.[1];
      const mcpUrl = /MCP endpoint\s+(http\S+)/.exec(output)?.[1];
      const mcpToken = /MCP token\s+(sluice_live_[0-9a-f]{32})/.exec(output)?.[1];
      const appUrl = /Dashboard\s+(http\S+)/.exec(output)?.[1];
      if (!key || !curl || !apiUrl || !opsToken) return fail('The banner lacks the key, the curl line, the REST URL or the operator token.');
      clearTimeout(timer);
      clearInterval(poll);
      child.removeAllListeners('exit');
      resolveStarted({ child, output: () => output, key, curl, apiUrl, opsToken, ...(mcpUrl ? { mcpUrl } : {}), ...(mcpToken ? { mcpToken } : {}), ...(appUrl ? { appUrl } : {}) });
    }, 100);
  });
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM to the child's process group; SIGKILL if it is still there after `graceMs`. */
export async function stopStack(child: ChildProcess | undefined, graceMs = 15_000): Promise<void> {
  if (!child?.pid) return;
  running.delete(child);
  const pid = child.pid;
  if (!groupAlive(pid)) return;
  try {
    process.kill(-pid, 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (groupAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (groupAlive(pid)) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone in between
    }
  }
}

/** Stops every stack this file started that a test did not stop itself (for afterAll). */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((child) => stopStack(child)));
}

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion (never rejects; the exit code is in the answer). */
export function runCommand(file: string, args: string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<Ran> {
  return new Promise((resolveRun) => {
    execFile(file, args, { cwd: ROOT, env: options.env ?? process.env, timeout: options.timeoutMs ?? 60_000, maxBuffer: 32 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof (error as { code?: unknown }).code === 'number' ? ((error as { code: number }).code) : 1) : 0;
      resolveRun({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/**
 * The operator CLI as a process, as `npm run -s ops --` runs it (`tsx scripts/ops.ts`), with tsx loaded into
 * Node directly: the same program and arguments, without the npx and tsx launchers. Still 0.4 s a call or
 * more: the tests run most command lines through opsInProcess, and this for what only a process shows.
 */
export function ops(env: NodeJS.ProcessEnv, ...args: string[]): Promise<Ran> {
  return runCommand(process.execPath, ['--import', 'tsx', 'scripts/ops.ts', ...args], { env });
}

/**
 * The operator CLI's main function run in this process with `env`, its exit code and what it wrote: the
 * program `ops` runs, less its process (the exit code main returns is the one the program exits with).
 */
export async function opsInProcess(env: NodeJS.ProcessEnv, ...args: string[]): Promise<Ran> {
  const { main } = await import('../../../scripts/ops');
  let stdout = '';
  let stderr = '';
  const code = await main(args, { env, stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) } });
  return { code, stdout, stderr };
}
