/**
 * Where the local stack keeps its files, and the small helpers that read them. Shared by `npm start`,
 * the stack module and the operator CLI, so all three agree without loading wrangler or Miniflare.
 *
 *   SLUICE_HOME       default <project>/.sluice   secrets.json, seed.json, build/
 *   SLUICE_STATE_DIR  default $SLUICE_HOME/state  D1 and Durable Object storage (wrangler's layout: v3/)
 *   SLUICE_DEV_VARS   default <project>/.dev.vars settings in dotenv format (optional, gitignored)
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseEnv } from 'node:util';

export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export function sluiceHome(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(PROJECT_ROOT, env.SLUICE_HOME || '.sluice');
}

export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.SLUICE_STATE_DIR ? resolve(PROJECT_ROOT, env.SLUICE_STATE_DIR) : join(sluiceHome(env), 'state');
}

export const secretsPath = (env: NodeJS.ProcessEnv = process.env) => join(sluiceHome(env), 'secrets.json');
export const seedPath = (env: NodeJS.ProcessEnv = process.env) => join(sluiceHome(env), 'seed.json');
export const devVarsPath = (env: NodeJS.ProcessEnv = process.env) => resolve(PROJECT_ROOT, env.SLUICE_DEV_VARS || '.dev.vars');

/** The stack's dotenv file: `.dev.vars` at the project root unless SLUICE_DEV_VARS names another; may be absent. */
export function readDevVars(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const path = devVarsPath(env);
  if (!existsSync(path)) return {};
  return parseEnv(readFileSync(path, 'utf8')) as Record<string, string>;
}

export function readJson<T>(path: string): T | undefined {
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** Writes through a temporary file, so a crash never leaves half a JSON document behind. */
export function writeJson(path: string, value: unknown, mode = 0o644): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(value, null, 2)}\n`, { mode });
  chmodSync(temporary, mode);
  renameSync(temporary, path);
}

/** Secrets `npm start` makes up when none are given; generated once, then kept in secrets.json (0600). */
export const GENERATED_SECRETS = {
  KEY_ENCRYPTION_KEY: () => randomBytes(32).toString('base64'),
  OPS_TOKEN: () => randomBytes(16).toString('hex'),
} as const;

export type GeneratedSecretName = keyof typeof GENERATED_SECRETS;
export type StoredSecrets = Partial<Record<GeneratedSecretName, string>>;

export function readSecrets(env: NodeJS.ProcessEnv = process.env): StoredSecrets {
  return readJson<StoredSecrets>(secretsPath(env)) ?? {};
}

export function writeSecrets(secrets: StoredSecrets, env: NodeJS.ProcessEnv = process.env): void {
  writeJson(secretsPath(env), secrets, 0o600);
}
