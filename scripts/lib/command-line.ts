/**
 * The operator CLI's command line: each command declares its flags and what each value must be, and
 * from that one declaration come its usage line and every check made before the operator API is called.
 * A wrong command line is one sentence saying what is wrong, then that command's usage line, exit 2.
 */
import { parseArgs } from 'node:util';

export type Flags = Record<string, string | undefined>;

/** What a flag's value must be: its placeholder in the usage line, and what is wrong with a value, if anything. */
export interface ValueKind {
  placeholder: string;
  problem(value: string): string | undefined;
}

export interface FlagSpec {
  kind: ValueKind;
  required?: boolean;
}

export interface CommandSpec<Client> {
  summary: string;
  flags: Record<string, FlagSpec>;
  /** A rule over several flags, checked after each flag's own. */
  check?(flags: Flags): string | undefined;
  run(client: Client, flags: Flags): Promise<unknown>;
}

/** A value the API checks itself (a name, a plan, a slug): the CLI only insists it is not empty. */
export const text = (placeholder: string): ValueKind => ({ placeholder, problem: () => undefined });

/** An id as newId (src/core/ids.ts) makes it: the prefix, an underscore and 96 random bits in hex. */
export const resourceId = (prefix: string, placeholder: string): ValueKind => {
  const shape = new RegExp(`^${prefix}_[0-9a-f]{24}$`);
  return { placeholder, problem: (value) => (shape.test(value) ? undefined : `must be ${prefix}_ followed by 24 lowercase hex characters`) };
};

/** A whole number from `min` up; with `none`, also the word none (for null: no limit, back to the plan's). */
export const wholeNumber = (options: { min: number; max?: number; none?: boolean }): ValueKind => ({
  placeholder: options.none ? 'N|none' : 'N',
  problem: (value) =>
    (options.none && value === 'none') || (/^\d+$/.test(value) && Number(value) >= options.min && (options.max === undefined || Number(value) <= options.max))
      ? undefined
      : `must be a whole number from ${options.min} ${options.max === undefined ? 'up' : `to ${options.max}`}${options.none ? ', or none' : ''}`,
});

export class UsageError extends Error {
  /** The command whose usage line follows the message; none when no command was recognised. */
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

export const CLI = 'npm run -s ops --';

export function usageLine<C>(name: string | undefined, commands: Record<string, CommandSpec<C>>): string {
  const command = name === undefined ? undefined : commands[name];
  if (!command) return `Usage: ${CLI} <command> [flags]   (${CLI} --help lists the commands)`;
  const flags = Object.entries(command.flags).map(([flag, spec]) => (spec.required ? `--${flag} ${spec.kind.placeholder}` : `[--${flag} ${spec.kind.placeholder}]`));
  return `Usage: ${CLI} ${[name, ...flags].join(' ')}`;
}

export type Parsed<C> = { help: true } | { help: false; name: string; command: CommandSpec<C>; flags: Flags };

/** Reads argv against the commands; throws UsageError for the first thing wrong with it. */
export function parseCommandLine<C>(argv: string[], commands: Record<string, CommandSpec<C>>): Parsed<C> {
  const known = new Set(Object.values(commands).flatMap((command) => Object.keys(command.flags)));
  const options = Object.fromEntries([...known].map((flag) => [flag, { type: 'string' as const }]));
  // Not strict: a value that starts with a dash (--purchased-cents -5) is taken as the value, and checked
  // like any other, instead of being refused by parseArgs with a message about ambiguity.
  const { tokens } = parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: false, tokens: true });

  const positionals = tokens.flatMap((token) => (token.kind === 'positional' ? [token.value] : []));
  const name = [positionals.slice(0, 2).join(' '), positionals[0] ?? ''].find((candidate) => commands[candidate] !== undefined);
  const fail = (message: string): never => {
    throw new UsageError(message, name);
  };

  const flags: Flags = {};
  let help = false;
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    if (token.name === 'help') {
      if (token.value !== undefined) fail(`${token.rawName} takes no value.`);
      help = true;
    } else if (!known.has(token.name)) {
      fail(`Unknown option ${token.rawName}.`);
    } else if (token.value === undefined) {
      fail(`${token.rawName} needs a value.`);
    } else if (flags[token.name] !== undefined) {
      fail(`${token.rawName} is given twice.`);
    } else {
      flags[token.name] = token.value;
    }
  }
  if (help) return { help: true };

  if (name === undefined) fail(positionals.length ? `Unknown command "${positionals.slice(0, 2).join(' ')}".` : 'No command given.');
  const command = commands[name!]!;
  const extra = positionals.slice(name!.split(' ').length);
  if (extra.length) fail(`Unexpected argument "${extra[0]}": every value follows its --flag.`);

  for (const flag of Object.keys(flags)) {
    if (!command.flags[flag]) fail(`${name} takes no --${flag}.`);
  }
  const missing = Object.entries(command.flags).filter(([flag, spec]) => spec.required && !flags[flag]);
  if (missing.length) fail(`${name} needs ${missing.map(([flag]) => `--${flag}`).join(', ')}.`);
  for (const [flag, value] of Object.entries(flags)) {
    if (value === '') fail(`--${flag} needs a value.`);
    const problem = command.flags[flag]!.kind.problem(value!);
    if (problem) fail(`--${flag} ${problem}, not "${value}".`);
  }
  const problem = command.check?.(flags);
  if (problem) fail(problem);
  return { help: false, name: name!, command, flags };
}
