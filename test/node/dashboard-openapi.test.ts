/**
 * The dashboard's /api/openapi.json as the app worker serves it (bundled as it deploys), held to the bar of
 * the api worker's /openapi.json (test/node/reference.test.ts): the strictest lint rules, and a typed
 * client generated from it by openapi-typescript that compiles against openapi-fetch.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack, WORKERS } from '../../scripts/stack';
import { strictLintProblems } from './support/openapi-lint';
import { isolatedEnv, ROOT, tempDir } from './support/processes';

const home = tempDir('dashboard-openapi');
let stack: Stack;
let document: string;

beforeAll(async () => {
  // The dashboard's Durable Object bindings name the api worker's classes, so both run.
  stack = await startStack({ env: await isolatedEnv(home), workers: WORKERS.filter((worker) => worker.id !== 'mcp') });
  const response = await fetch(`${stack.urls.app}/api/openapi.json`);
  expect(response.status).toBe(200);
  document = await response.text();
});

afterAll(async () => {
  await stack?.stop();
  rmSync(home, { recursive: true, force: true });
});

/** Uses the generated types the way a client of the dashboard API would; compiles only if they are right. */
const CLIENT = `import createClient from 'openapi-fetch';
import type { paths } from './schema';

const dashboard = createClient<paths>({ baseUrl: 'http://127.0.0.1:8789' });

export async function signedInEmail(): Promise<string> {
  const { data, error } = await dashboard.GET('/api/me');
  if (error) throw new Error(error.error.code);
  return data.data.user.email;
}

export async function signUpWithoutPassword(): Promise<number | undefined> {
  // @ts-expect-error password is required by the generated body type.
  const { error } = await dashboard.POST('/api/auth/sign-up', { body: { email: 'ada@example.com' } });
  return error?.error.retryAfter;
}
`;

describe('/api/openapi.json of the dashboard', () => {
  it('passes @redocly/cli lint with the recommended-strict rules', async () => {
    expect(await strictLintProblems(document, home, 'dashboard-openapi.json')).toEqual([]);
  });

  it('generates, with openapi-typescript, a typed client that compiles against openapi-fetch', async () => {
    const types = astToString(await openapiTS(JSON.parse(document) as OpenAPI3));
    // Beside the project's node_modules, so that 'openapi-fetch' resolves as it would for a client.
    const dir = join(ROOT, 'test-results', 'dashboard-client');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'schema.ts'), types);
    writeFileSync(join(dir, 'client.ts'), CLIENT);
    const program = ts.createProgram([join(dir, 'client.ts')], {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: [],
    });
    const problems = ts.getPreEmitDiagnostics(program).map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    expect(problems).toEqual([]);
  });
});
