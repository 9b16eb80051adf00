/**
 * A fake of the wrangler 4.86 CLI for the deploy tests: the commands `npm run deploy` runs, answered as
 * wrangler answers them (the same JSON of `d1 list --json` and `secret list`, the same lines and exit codes),
 * against an account kept in a JSON file. Every call is appended to a log (argv, and for a deploy the config
 * it was given and the names, never the values, of the secrets file's entries).
 *
 *   FAKE_WRANGLER_STATE  the account: { d1: [{ uuid, name }], r2: [], queues: [], workers: { name: { secrets, config, deploys } } }
 *   FAKE_WRANGLER_LOG    one JSON line per call
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

const args = process.argv.slice(2);
const statePath = process.env.FAKE_WRANGLER_STATE;
const logPath = process.env.FAKE_WRANGLER_LOG;
const state = statePath && existsSync(statePath) ? JSON.parse(readFileSync(statePath, 'utf8')) : {};
state.d1 ??= [];
state.r2 ??= [];
state.queues ??= [];
state.workers ??= {};
const entry = { argv: args };
const save = () => statePath && writeFileSync(statePath, JSON.stringify(state, null, 2));
const log = () => logPath && appendFileSync(logPath, `${JSON.stringify(entry)}\n`);
const flag = (name) => {
  const index = args.indexOf(`--${name}`);
  return index === -1 ? undefined : args[index + 1];
};
const fail = (message, code = 1) => {
  process.stderr.write(`\n✘ [ERROR] ${message}\n\n`);
  entry.failed = message;
  log();
  process.exit(code);
};
const readConfig = () => {
  const path = flag('config');
  if (!path || !existsSync(resolve(path))) fail(`Could not read the config file ${path}.`);
  return JSON.parse(readFileSync(resolve(path), 'utf8'));
};
const placeholder = (id) => !id || /^0{8}-/.test(id);
const banner = () => process.stdout.write('\n ⛅️ wrangler 4.86.0\n───────────────────\n');
const command = args.filter((arg) => !arg.startsWith('-')).slice(0, 3).join(' ');

if (args[0] === '--version') {
  process.stdout.write('4.86.0\n');
} else if (command.startsWith('whoami') && process.env.FAKE_WRANGLER_LOGGED_OUT) {
  // As wrangler answers without a login: exit 0, and the sentence.
  banner();
  process.stdout.write('Getting User settings...\nYou are not authenticated. Please run `wrangler login`.\n');
} else if (command.startsWith('whoami')) {
  banner();
  process.stdout.write('Getting User settings...\n👋 You are logged in with an OAuth Token, associated with the email ops@example.com.\n');
} else if (command.startsWith('d1 list')) {
  if (!args.includes('--json')) fail('the fake answers d1 list --json only');
  process.stdout.write(`${JSON.stringify(state.d1.map(({ uuid, name }) => ({ uuid, name, created_at: '2026-11-24T10:00:00.000Z', version: 'production', num_tables: 0, file_size: 12288 })), null, 2)}\n`);
} else if (command.startsWith('d1 create')) {
  const name = args[2];
  if (state.d1.some((database) => database.name === name)) fail(`A database with that name already exists [code: 7502]`);
  const uuid = randomUUID();
  state.d1.push({ uuid, name, migrations: 0 });
  banner();
  process.stdout.write(`✅ Successfully created DB '${name}' in region WEUR\nCreated your new D1 database.\n\n{\n  "d1_databases": [\n    {\n      "binding": "DB",\n      "database_name": "${name}",\n      "database_id": "${uuid}"\n    }\n  ]\n}\n`);
} else if (command.startsWith('d1 migrations apply')) {
  const name = args[3];
  if (!args.includes('--remote')) fail('expected --remote');
  const config = readConfig();
  const binding = (config.d1_databases ?? []).find((database) => database.database_name === name || database.binding === name);
  if (!binding) fail(`Couldn't find a D1 DB with the name or binding '${name}' in your wrangler.json file.`);
  const database = state.d1.find((candidate) => candidate.uuid === binding.database_id);
  if (!database) fail(`Couldn't find DB with ID ${binding.database_id} [code: 7404]`);
  const directory = resolve(resolve(flag('config'), '..'), binding.migrations_dir);
  const all = existsSync(directory) ? readdirSync(directory).filter((file) => file.endsWith('.sql')).sort() : [];
  const pending = all.slice(database.migrations ?? 0);
  database.migrations = all.length;
  entry.applied = pending;
  banner();
  process.stdout.write(pending.length ? `Migrations to be applied:\n${pending.map((file) => `│ ${file} │`).join('\n')}\n${pending.map((file) => `🚣 Executed ${file}`).join('\n')}\n` : '✅ No migrations to apply!\n');
} else if (command.startsWith('secret list')) {
  const config = readConfig();
  const worker = state.workers[config.name];
  if (!worker) fail(`Worker "${config.name}" not found.\n\nIf this is a new Worker, run \`wrangler deploy\` first to create it.\nOtherwise, check that the Worker name is correct and you're logged into the right account.`);
  process.stdout.write(`${JSON.stringify(worker.secrets.map((name) => ({ name, type: 'secret_text' })), null, '  ')}\n`);
} else if (command.startsWith('r2 bucket list')) {
  banner();
  process.stdout.write(`Listing buckets...\n${state.r2.map((name) => `name:           ${name}\ncreation_date:  2026-11-24T10:00:00.000Z`).join('\n\n')}\n`);
} else if (command.startsWith('r2 bucket create')) {
  state.r2.push(args[3]);
  process.stdout.write(`Creating bucket '${args[3]}'...\n✅ Created bucket '${args[3]}' with default storage class of Standard.\n`);
} else if (command.startsWith('queues list')) {
  const rows = state.queues.map((name) => `│ ${randomUUID().replace(/-/g, '')} │ ${name} │ 2026-11-24 │ 2026-11-24 │ 0 │ 0 │`);
  process.stdout.write(`┌─┬─┬─┬─┬─┬─┐\n│ id │ name │ created_on │ modified_on │ producers │ consumers │\n├─┼─┼─┼─┼─┼─┤\n${rows.join('\n')}\n└─┴─┴─┴─┴─┴─┘\n`);
} else if (command.startsWith('queues create')) {
  state.queues.push(args[2]);
  process.stdout.write(`🌀 Creating queue '${args[2]}'\n✅ Created queue '${args[2]}'\n`);
} else if (command === 'deploy' || command.startsWith('deploy')) {
  const config = readConfig();
  entry.config = config;
  // What Cloudflare refuses: a D1 id it does not know, a binding to a worker or class not deployed yet.
  for (const database of config.d1_databases ?? []) {
    if (placeholder(database.database_id) || !state.d1.some((known) => known.uuid === database.database_id)) fail(`D1 database ${database.database_id} not found [code: 10021]`);
  }
  for (const service of config.services ?? []) {
    if (!state.workers[service.service]) fail(`Could not resolve service binding 'API'. Target script '${service.service}' not found. [code: 10143]`);
  }
  for (const binding of config.durable_objects?.bindings ?? []) {
    if (binding.script_name && !state.workers[binding.script_name]?.config?.migrations?.some((step) => (step.new_sqlite_classes ?? []).includes(binding.class_name))) {
      fail(`Cannot create binding for class '${binding.class_name}' that is not exported by the script '${binding.script_name}' [code: 10061]`);
    }
  }
  const worker = (state.workers[config.name] ??= { secrets: [], deploys: 0 });
  const secretsFile = flag('secrets-file');
  if (secretsFile) {
    const secrets = JSON.parse(readFileSync(secretsFile, 'utf8'));
    entry.secrets = Object.keys(secrets).sort();
    entry.secretsFileMode = (statSync(secretsFile).mode & 0o777).toString(8);
    worker.secrets = [...new Set([...worker.secrets, ...Object.keys(secrets)])].sort();
    worker.values = { ...worker.values, ...secrets };
  }
  worker.config = config;
  worker.deploys += 1;
  banner();
  process.stdout.write(`Total Upload: 4239.41 KiB / gzip: 984.12 KiB\nUploaded ${config.name} (4.20 sec)\nDeployed ${config.name} triggers (0.85 sec)\n  https://${config.name}.acme.workers.dev\n${(config.triggers?.crons ?? []).map((cron) => `  schedule: ${cron}\n`).join('')}Current Version ID: ${randomUUID()}\n`);
} else {
  fail(`The fake wrangler does not know "${args.join(' ')}".`);
}
save();
log();
