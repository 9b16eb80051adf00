/**
 * `npm run -s ops -- <command>`: the operator CLI. Talks to a running stack's operator API (/ops/v1) and
 * prints the answer's `data` as JSON on stdout; errors go to stderr with a non-zero exit
 * (1: the API refused or could not be reached, 2: the command line was wrong).
 *
 *   SLUICE_OPS_URL  where the api worker listens (default http://127.0.0.1:8787)
 *   OPS_TOKEN       the operator token (default: .dev.vars, then $SLUICE_HOME/secrets.json, as `npm start` uses)
 */
import { parseArgs } from 'node:util';
import { readDevVars, readSecrets, secretsPath } from './lib/home';
import { type KeyWithSecret, OpsError, OpsUnreachable, opsClient, type OpsClient } from './lib/ops-client';

type Flags = Record<string, string | undefined>;

interface Command {
  usage: string;
  summary: string;
  required: string[];
  run(client: OpsClient, flags: Flags): Promise<unknown>;
}

const path = (value: string) => encodeURIComponent(value);

/** Each plan cap the operator may override, as a command-line flag. */
const CAP_FLAGS = [
  ['workspaces', 'workspaces'],
  ['seats', 'seats'],
  ['agents', 'agents'],
  ['databases', 'databases'],
  ['webhook-events', 'webhookEvents'],
  ['runtime-hours', 'runtimeHours'],
] as const;

const COMMANDS: Record<string, Command> = {
  'org create': {
    usage: '--name NAME [--plan PLAN]',
    summary: 'Create an organization (no plan unless given: metered calls then answer 402).',
    required: ['name'],
    run: (client, f) => client.call('POST', '/ops/v1/organizations', { name: f.name, ...(f.plan === undefined ? {} : { plan: orNull(f.plan) }) }),
  },
  'org show': {
    usage: '--id ORG_ID',
    summary: 'Show an organization.',
    required: ['id'],
    run: (client, f) => client.call('GET', `/ops/v1/organizations/${path(f.id!)}`),
  },
  'workspace create': {
    usage: '--org ORG_ID --name NAME',
    summary: 'Create a workspace in an organization.',
    required: ['org', 'name'],
    run: (client, f) => client.call('POST', '/ops/v1/workspaces', { organizationId: f.org, name: f.name }),
  },
  'key create': {
    usage: '--workspace WS_ID [--scope SCOPE] [--name NAME] [--monthly-limit-cents N]',
    summary: 'Create a workspace key, optionally with a monthly spend limit of its own; prints {"id", "key", ...}.',
    required: ['workspace'],
    run: (client, f) => {
      const monthlyLimitCents = integer(f, 'monthly-limit-cents');
      return client.call('POST', '/ops/v1/keys', {
        workspaceId: f.workspace,
        ...(f.scope === undefined ? {} : { scope: f.scope }),
        ...(f.name === undefined ? {} : { name: f.name }),
        ...(monthlyLimitCents === undefined ? {} : { monthlyLimitCents }),
      });
    },
  },
  'key limit': {
    usage: '--id KEY_ID --monthly-limit-cents N|none',
    summary: "Set a key's monthly spend limit (none: no limit of its own); the very next call follows it.",
    required: ['id', 'monthly-limit-cents'],
    run: (client, f) =>
      client.call('PUT', `/ops/v1/keys/${path(f.id!)}/limit`, { monthlyLimitCents: f['monthly-limit-cents'] === 'none' ? null : integer(f, 'monthly-limit-cents') }),
  },
  'key reveal': {
    usage: '--id KEY_ID',
    summary: 'Show a key again (not once revoked).',
    required: ['id'],
    run: (client, f) => client.call('POST', `/ops/v1/keys/${path(f.id!)}/reveal`),
  },
  'key revoke': {
    usage: '--id KEY_ID',
    summary: 'Revoke a key; it is refused from the next request on.',
    required: ['id'],
    run: (client, f) => client.call('POST', `/ops/v1/keys/${path(f.id!)}/revoke`),
  },
  'agent list': {
    usage: '--workspace WS_ID',
    summary: "List a workspace's deployed and stopped agents, with the organization's agents and runtime hours against the plan's caps.",
    required: ['workspace'],
    run: (client, f) => client.call('GET', `/ops/v1/workspaces/${path(f.workspace!)}/agents`),
  },
  'wallet credit': {
    usage: '--org ORG_ID [--purchased-cents N] [--subscription-cents N]',
    summary: "Add to an organization's purchased balance and/or subscription allowance.",
    required: ['org'],
    run: (client, f) => {
      const purchasedCents = integer(f, 'purchased-cents');
      const subscriptionCents = integer(f, 'subscription-cents');
      if (purchasedCents === undefined && subscriptionCents === undefined) throw new UsageError('wallet credit needs --purchased-cents and/or --subscription-cents.');
      return client.call('POST', `/ops/v1/organizations/${path(f.org!)}/wallet/credit`, {
        ...(purchasedCents === undefined ? {} : { purchasedCents }),
        ...(subscriptionCents === undefined ? {} : { subscriptionCents }),
      });
    },
  },
  'wallet show': {
    usage: '--org ORG_ID',
    summary: "Show an organization's wallet.",
    required: ['org'],
    run: (client, f) => client.call('GET', `/ops/v1/organizations/${path(f.org!)}/wallet`),
  },
  'plan set': {
    usage: `--org ORG_ID --plan PLAN|none [--rpm N|none] [${CAP_FLAGS.map(([flag]) => `--${flag} N|none`).join('] [')}]`,
    summary: "Set an organization's plan (none: no plan), optionally a custom requests-per-minute ceiling, and caps that differ from the plan's (none: back to the plan's).",
    required: ['org', 'plan'],
    run: (client, f) => {
      const rpm = f.rpm === 'none' ? null : integer(f, 'rpm');
      const caps = Object.fromEntries(
        CAP_FLAGS.filter(([flag]) => f[flag] !== undefined).map(([flag, cap]) => [cap, f[flag] === 'none' ? null : integer(f, flag)]),
      );
      return client.call('PUT', `/ops/v1/organizations/${path(f.org!)}/plan`, {
        plan: orNull(f.plan!),
        ...(rpm === undefined ? {} : { rpm }),
        ...(Object.keys(caps).length ? { caps } : {}),
      });
    },
  },
  'mcp-token create': {
    usage: '--workspace WS_ID [--name NAME]',
    summary: 'Create a workspace MCP bearer token; prints {"id", "token", ...}.',
    required: ['workspace'],
    run: async (client, f) => {
      const { id, key, ...rest } = await client.call<KeyWithSecret>('POST', '/ops/v1/keys', {
        workspaceId: f.workspace,
        scope: 'workspace_mcp',
        ...(f.name === undefined ? {} : { name: f.name }),
      });
      return { id, token: key, ...rest };
    },
  },
  'platform list': {
    usage: '',
    summary: 'List the sources and whether each is serving.',
    required: [],
    run: (client) => client.call('GET', '/ops/v1/platforms'),
  },
  'platform disable': {
    usage: '--slug SLUG',
    summary: "Switch a source off: its calls answer 503 PROVIDER_NOT_FOUND (uncharged) until it is enabled again.",
    required: ['slug'],
    run: (client, f) => client.call('POST', `/ops/v1/platforms/${path(f.slug!)}/disable`),
  },
  'platform enable': {
    usage: '--slug SLUG',
    summary: 'Switch a source back on.',
    required: ['slug'],
    run: (client, f) => client.call('POST', `/ops/v1/platforms/${path(f.slug!)}/enable`),
  },
  'mcp-token revoke': {
    usage: '--id KEY_ID',
    summary: 'Revoke a workspace MCP bearer token.',
    required: ['id'],
    run: (client, f) => client.call('POST', `/ops/v1/keys/${path(f.id!)}/revoke`),
  },
};

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  name: { type: 'string' },
  plan: { type: 'string' },
  id: { type: 'string' },
  org: { type: 'string' },
  workspace: { type: 'string' },
  scope: { type: 'string' },
  'purchased-cents': { type: 'string' },
  'subscription-cents': { type: 'string' },
  rpm: { type: 'string' },
  'monthly-limit-cents': { type: 'string' },
  slug: { type: 'string' },
  ...Object.fromEntries(CAP_FLAGS.map(([flag]) => [flag, { type: 'string' }])),
} as const;

class UsageError extends Error {}

/** "none" stands for null: no plan, no custom ceiling. */
function orNull(value: string): string | null {
  return value === 'none' ? null : value;
}

function integer(flags: Flags, name: string): number | undefined {
  const value = flags[name];
  if (value === undefined) return undefined;
  if (!/^-?\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number, not "${value}".`);
  return Number(value);
}

function usage(): string {
  const lines = Object.entries(COMMANDS).map(([name, command]) => `  ${name} ${command.usage}\n      ${command.summary}`);
  return `Usage: npm run -s ops -- <command> [flags]

The operator CLI of a running Sluice stack (npm start). Prints the answer's data as JSON.

Commands:
${lines.join('\n')}

Environment:
  SLUICE_OPS_URL  the api worker (default http://127.0.0.1:8787)
  OPS_TOKEN       operator token (default: .dev.vars, then ${secretsPath()})
`;
}

function resolveToken(): string | undefined {
  return process.env.OPS_TOKEN || readDevVars().OPS_TOKEN || readSecrets().OPS_TOKEN || undefined;
}

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${usage()}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(usage());
    return 0;
  }
  const name = positionals.join(' ');
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`${positionals.length ? `Unknown command "${name}".` : 'No command given.'}\n\n${usage()}`);
    return 2;
  }
  const flags = values as Flags;
  const missing = command.required.filter((flag) => flags[flag] === undefined || flags[flag] === '');
  if (missing.length) {
    process.stderr.write(`${name} needs ${missing.map((flag) => `--${flag}`).join(', ')}.\nUsage: npm run -s ops -- ${name} ${command.usage}\n`);
    return 2;
  }
  const token = resolveToken();
  if (!token) {
    process.stderr.write(`No operator token: set OPS_TOKEN, or start the stack once (npm start) so ${secretsPath()} exists.\n`);
    return 1;
  }
  const client = opsClient(process.env.SLUICE_OPS_URL || 'http://127.0.0.1:8787', token);
  try {
    const data = await command.run(client, flags);
    process.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\nUsage: npm run -s ops -- ${name} ${command.usage}\n`);
      return 2;
    }
    if (error instanceof OpsError) {
      process.stderr.write(`${error.code} (HTTP ${error.status}): ${error.message}\n`);
      if (error.details !== undefined) process.stderr.write(`${JSON.stringify(error.details, null, 2)}\n`);
      return 1;
    }
    if (error instanceof OpsUnreachable) {
      process.stderr.write(`${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

process.exitCode = await main(process.argv.slice(2));
