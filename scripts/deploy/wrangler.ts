/**
 * The wrangler CLI as the deploy drives it: the `wrangler` first on PATH (npm run puts the project's pinned
 * node_modules/.bin first), run from the project root so build commands and relative paths resolve as in
 * `npm start`. Every command is echoed before it runs; with --plan it is only echoed.
 */
import { spawn } from 'node:child_process';
import { PROJECT_ROOT } from '../lib/home';

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

export class WranglerError extends Error {
  constructor(
    readonly args: string[],
    readonly ran: Ran,
  ) {
    super(`wrangler ${args.join(' ')} failed (exit ${ran.code}):\n${(ran.stderr || ran.stdout).trim()}`);
    this.name = 'WranglerError';
  }
}

export interface WranglerOptions {
  env: NodeJS.ProcessEnv;
  /** Where each command is told (the deploy's output). */
  echo: (line: string) => void;
  /** Stream wrangler's own output (deploys, migrations) to these as it comes. */
  stream?: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream };
  cwd?: string;
}

export function wranglerCli(options: WranglerOptions) {
  // Not interactive (migrations apply without a prompt), no usage metrics, no colour codes in what is read or shown.
  const env = { ...options.env, WRANGLER_SEND_METRICS: 'false', CI: options.env.CI ?? '1', NO_COLOR: '1', FORCE_COLOR: '0' };
  return {
    /** Runs one command and resolves with what it printed, whatever its exit code. */
    run(args: string[], { stream = false } = {}): Promise<Ran> {
      options.echo(`$ ${commandLine(args)}`);
      return new Promise((resolveRun, reject) => {
        const child = spawn('wrangler', args, { cwd: options.cwd ?? PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          stdout += chunk;
          if (stream) options.stream?.stdout.write(chunk);
        });
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
          stderr += chunk;
          if (stream) options.stream?.stderr.write(chunk);
        });
        child.once('error', reject);
        child.once('close', (code) => resolveRun({ code: code ?? 1, stdout, stderr }));
      });
    },
    /** Runs one command that must succeed. */
    async must(args: string[], runOptions: { stream?: boolean } = {}): Promise<Ran> {
      const ran = await this.run(args, runOptions);
      if (ran.code !== 0) throw new WranglerError(args, ran);
      return ran;
    },
  };
}

export type Wrangler = ReturnType<typeof wranglerCli>;

/** `wrangler r2 bucket list`: labelled values, one block per bucket (`name:  sluice-files`). */
export function bucketNames(output: string): Set<string> {
  return new Set([...output.matchAll(/^name:\s+(\S+)\s*$/gm)].map((match) => match[1]!));
}

/** `wrangler queues list`: a table whose name column holds the queues' names. */
export function queueNames(output: string): Set<string> {
  const rows = output.split('\n').filter((line) => /[│|]/.test(line));
  const header = rows.find((line) => /\bname\b/.test(line));
  if (!header) return new Set();
  const cells = (line: string) => line.split(/[│|]/).map((cell) => cell.trim());
  const column = cells(header).indexOf('name');
  return new Set(rows.filter((row) => row !== header).map((row) => cells(row)[column]).filter((name): name is string => Boolean(name) && !/^[─-]+$/.test(name!)));
}

/** A command as one would type it: arguments with spaces or quotes quoted. */
export function commandLine(args: string[]): string {
  return ['wrangler', ...args].map((arg) => (/^[\w@%+=:,./<>()-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`)).join(' ');
}
