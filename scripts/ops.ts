/**
 * `npm run -s ops -- <command>`: the operator CLI. Talks to a running stack's operator API (/ops/v1) and
 * prints the answer's `data` as JSON on stdout; errors go to stderr with a non-zero exit
 * (1: the API refused or could not be reached, 2: the command line was wrong).
 *
 *   SLUICE_OPS_URL  where the api worker listens (default http://127.0.0.1:8787)
 *   OPS_TOKEN       the operator token (default: .dev.vars, then $SLUICE_HOME/secrets.json, as `npm start` uses)
 */
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { CLI, type CommandSpec, type Flags, parseCommandLine, resourceId, text, UsageError, usageLine, type ValueKind, wholeNumber } from './lib/command-line';
import { readDevVars, readSecrets, secretsPath } from './lib/home';
import { type KeyWithSecret, OpsError, OpsUnreachable, opsClient, type OpsClient } from './lib/ops-client';

const path = (value: string) => encodeURIComponent(value);

const ORG_ID = resourceId('org', 'ORG_ID');
const WS_ID = resourceId('ws', 'WS_ID');
const KEY_ID = resourceId('key', 'KEY_ID');
/** Cents as the operator API takes them: whole, never negative. */
const CENTS = wholeNumber({ min: 0 });
const CENTS_OR_NONE = wholeNumber({ min: 0, none: true });
/** Days a key works for, from now (1 to 365, as the operator API takes them). */
const DAYS = wholeNumber({ min: 1, max: 365 });
const DAYS_OR_NONE = wholeNumber({ min: 1, max: 365, none: true });
/** A plan cap: a count, or none for the plan's own. */
const COUNT_OR_NONE = wholeNumber({ min: 0, none: true });

/** Each plan cap the operator may override, as a command-line flag. */
const CAP_FLAGS = [
  ['workspaces', 'workspaces'],
  ['seats', 'seats'],
  ['agents', 'agents'],
  ['databases', 'databases'],
  ['webhook-events', 'webhookEvents'],
  ['runtime-hours', 'runtimeHours'],
] as const;

const required = (kind: ValueKind) => ({ kind, required: true });
const optional = (kind: ValueKind) => ({ kind });

const COMMANDS: Record<string, CommandSpec<OpsClient>> = {
  'org create': {
    summary: 'Create an organization (no plan unless given: metered calls then answer 402).',
    flags: { name: required(text('NAME')), plan: optional(text('PLAN')) },
    run: (client, f) => client.call('POST', '/ops/v1/organizations', { name: f.name, ...(f.plan === undefined ? {} : { plan: orNull(f.plan) }) }),
  },
  'org show': {
    summary: 'Show an organization.',
    flags: { id: required(ORG_ID) },
    run: (client, f) => client.call('GET', `/ops/v1/organizations/${path(f.id!)}`),
  },
  'workspace create': {
    summary: 'Create a workspace in an organization.',
    flags: { org: required(ORG_ID), name: required(text('NAME')) },
    run: (client, f) => client.call('POST', '/ops/v1/workspaces', { organizationId: f.org, name: f.name }),
  },
  'key create': {
    summary: 'Create a workspace key, optionally with a monthly spend limit of its own; prints {"id", "key", ...}.',
    flags: { workspace: required(WS_ID), scope: optional(text('SCOPE')), name: optional(text('NAME')), 'monthly-limit-cents': optional(CENTS), 'expires-in-days': optional(DAYS) },
    run: (client, f) => {
      const monthlyLimitCents = numberOf(f, 'monthly-limit-cents');
      const expiresInDays = numberOf(f, 'expires-in-days');
      return client.call('POST', '/ops/v1/keys', {
        workspaceId: f.workspace,
        ...(f.scope === undefined ? {} : { scope: f.scope }),
        ...(f.name === undefined ? {} : { name: f.name }),
        ...(monthlyLimitCents === undefined ? {} : { monthlyLimitCents }),
        ...(expiresInDays === undefined ? {} : { expiresInDays }),
      });
    },
  },
  'key expiry': {
    summary: "Give a key a new expiry, days from now (none: it works until revoked); an expired or revoked key stays so.",
    flags: { id: required(KEY_ID), 'expires-in-days': required(DAYS_OR_NONE) },
    run: (client, f) => client.call('PUT', `/ops/v1/keys/${path(f.id!)}/expiry`, { expiresInDays: numberOf(f, 'expires-in-days') }),
  },
  'key limit': {
    summary: "Set a key's monthly spend limit (none: no limit of its own); the very next call follows it.",
    flags: { id: required(KEY_ID), 'monthly-limit-cents': required(CENTS_OR_NONE) },
    run: (client, f) => client.call('PUT', `/ops/v1/keys/${path(f.id!)}/limit`, { monthlyLimitCents: numberOf(f, 'monthly-limit-cents') }),
  },
  'key reveal': {
    summary: 'Show a key again (not once revoked).',
    flags: { id: required(KEY_ID) },
    run: (client, f) => client.call('POST', `/ops/v1/keys/${path(f.id!)}/reveal`),
  },
  'key revoke': {
    summary: 'Revoke a key; it is refused from the next request on.',
    flags: { id: required(KEY_ID) },
    run: (client, f) => client.call('POST', `/ops/v1/keys/${path(f.id!)}/revoke`),
  },
  'agent list': {
    summary: "List a workspace's deployed and stopped agents, with the organization's agents and runtime hours against the plan's caps.",
    flags: { workspace: required(WS_ID) },
    run: (client, f) => client.call('GET', `/ops/v1/workspaces/${path(f.workspace!)}/agents`),
  },
  'wallet credit': {
    summary: "Add to an organization's purchased balance and/or subscription allowance.",
    flags: { org: required(ORG_ID), 'purchased-cents': optional(CENTS), 'subscription-cents': optional(CENTS) },
    check: (f) => (f['purchased-cents'] === undefined && f['subscription-cents'] === undefined ? 'wallet credit needs --purchased-cents and/or --subscription-cents.' : undefined),
    run: (client, f) => {
      const purchasedCents = numberOf(f, 'purchased-cents');
      const subscriptionCents = numberOf(f, 'subscription-cents');
      return client.call('POST', `/ops/v1/organizations/${path(f.org!)}/wallet/credit`, {
        ...(purchasedCents === undefined ? {} : { purchasedCents }),
        ...(subscriptionCents === undefined ? {} : { subscriptionCents }),
      });
    },
  },
  'wallet show': {
    summary: "Show an organization's wallet.",
    flags: { org: required(ORG_ID) },
    run: (client, f) => client.call('GET', `/ops/v1/organizations/${path(f.org!)}/wallet`),
  },
  'plan set': {
    summary: "Set an organization's plan (none: no plan), optionally a custom requests-per-minute ceiling, and caps that differ from the plan's (none: back to the plan's).",
    flags: {
      org: required(ORG_ID),
      plan: required(text('PLAN|none')),
      rpm: optional(wholeNumber({ min: 1, none: true })),
      ...Object.fromEntries(CAP_FLAGS.map(([flag]) => [flag, optional(COUNT_OR_NONE)])),
    },
    run: (client, f) => {
      const rpm = numberOf(f, 'rpm');
      const caps = Object.fromEntries(CAP_FLAGS.filter(([flag]) => f[flag] !== undefined).map(([flag, cap]) => [cap, numberOf(f, flag)]));
      return client.call('PUT', `/ops/v1/organizations/${path(f.org!)}/plan`, {
        plan: orNull(f.plan!),
        ...(rpm === undefined ? {} : { rpm }),
        ...(Object.keys(caps).length ? { caps } : {}),
      });
    },
  },
  'mcp-token create': {
    summary: 'Create a workspace MCP bearer token; prints {"id", "token", ...}.',
    flags: { workspace: required(WS_ID), name: optional(text('NAME')) },
    run: async (client, f) => {
      const { id, key, ...rest } = await client.call<KeyWithSecret>('POST', '/ops/v1/keys', {
        workspaceId: f.workspace,
        scope: 'workspace_mcp',
        ...(f.name === undefined ? {} : { name: f.name }),
      });
      return { id, token: key, ...rest };
    },
  },
  'mcp-token revoke': {
    summary: 'Revoke a workspace MCP bearer token.',
    flags: { id: required(KEY_ID) },
    run: (client, f) => client.call('POST', `/ops/v1/keys/${path(f.id!)}/revoke`),
  },
  'user confirm-email': {
    summary: "Confirm a person's email address (an installation without email cannot send the link the free trial waits for).",
    flags: { email: required(text('EMAIL')) },
    run: (client, f) => client.call('POST', '/ops/v1/users/confirm-email', { email: f.email }),
  },
  'user two-factor-reset': {
    summary: 'Turn off two-factor sign-in for a person who lost their app and recovery codes, once sure the request is theirs: every browser of theirs is signed out, and their address told.',
    flags: { email: required(text('EMAIL')) },
    run: (client, f) => client.call('POST', '/ops/v1/users/two-factor-reset', { email: f.email }),
  },
  'platform list': {
    summary: 'List the sources and whether each is serving.',
    flags: {},
    run: (client) => client.call('GET', '/ops/v1/platforms'),
  },
  'platform disable': {
    summary: 'Switch a source off: its calls answer 503 PROVIDER_NOT_FOUND (uncharged) until it is enabled again.',
    flags: { slug: required(text('SLUG')) },
    run: (client, f) => client.call('POST', `/ops/v1/platforms/${path(f.slug!)}/disable`),
  },
  'platform enable': {
    summary: 'Switch a source back on.',
    flags: { slug: required(text('SLUG')) },
    run: (client, f) => client.call('POST', `/ops/v1/platforms/${path(f.slug!)}/enable`),
  },
};

/** "none" stands for null: no plan, no custom ceiling. */
function orNull(value: string): string | null {
  return value === 'none' ? null : value;
}

/** A number flag, already checked by its kind: undefined when not given, null for none. */
function numberOf(flags: Flags, name: string): number | null | undefined {
  const value = flags[name];
  return value === undefined ? undefined : value === 'none' ? null : Number(value);
}

function help(env: NodeJS.ProcessEnv): string {
  const lines = Object.keys(COMMANDS).map((name) => `  ${usageLine(name, COMMANDS).slice(`Usage: ${CLI} `.length)}\n      ${COMMANDS[name]!.summary}`);
  return `Usage: ${CLI} <command> [flags]

The operator CLI of a running Sluice stack (npm start). Prints the answer's data as JSON.

Commands:
${lines.join('\n')}

Environment:
  SLUICE_OPS_URL  the api worker (default http://127.0.0.1:8787)
  OPS_TOKEN       operator token (default: .dev.vars, then ${secretsPath(env)})
`;
}

function resolveToken(env: NodeJS.ProcessEnv): string | undefined {
  return env.OPS_TOKEN || readDevVars(env).OPS_TOKEN || readSecrets(env).OPS_TOKEN || undefined;
}

/** Where a run reads its settings and writes its answer: the process's own, or what a caller hands in (the tests run it in theirs). */
export interface OpsIo {
  env: NodeJS.ProcessEnv;
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/** One command line, run to its exit code. */
export async function main(argv: string[], io: OpsIo = { env: process.env, stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  let parsed;
  try {
    parsed = parseCommandLine(argv, COMMANDS);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr.write(`${error.message}\n${usageLine(error.command, COMMANDS)}\n`);
    return 2;
  }
  if (parsed.help) {
    io.stdout.write(help(io.env));
    return 0;
  }
  const { command, flags } = parsed;
  const token = resolveToken(io.env);
  if (!token) {
    io.stderr.write(`No operator token: set OPS_TOKEN, or start the stack once (npm start) so ${secretsPath(io.env)} exists.\n`);
    return 1;
  }
  const client = opsClient(io.env.SLUICE_OPS_URL || 'http://127.0.0.1:8787', token);
  try {
    const data = await command.run(client, flags);
    io.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof OpsError) {
      io.stderr.write(`${error.code} (HTTP ${error.status}): ${error.message}\n`);
      if (error.details !== undefined) io.stderr.write(`${JSON.stringify(error.details, null, 2)}\n`);
      return 1;
    }
    if (error instanceof OpsUnreachable) {
      io.stderr.write(`${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

// Run as a program (npm run -s ops); imported, as the tests import it, it only defines main.
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) process.exitCode = await main(process.argv.slice(2));
