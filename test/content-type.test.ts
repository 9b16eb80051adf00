import { describe, expect, it } from 'vitest';
import { call, json, OPS_TOKEN, provision } from './support/api';
import { APP_ORIGIN, dashboard, signUp } from './support/dashboard';
import { followed } from './support/openapi';

/**
 * A body that is not JSON is a 400 VALIDATION_ERROR saying to send `content-type: application/json`, on
 * every route that takes one, in both workers' documents: never a 500 (the OpenAPI validator's 415 was
 * answered INTERNAL_ERROR) and never a 415 (the spec's statuses have none). Iterated from the served
 * OpenAPI documents, so a route added later is covered without a line here.
 */
interface Route {
  method: string;
  path: string;
  /** The path with each `{parameter}` filled with its documented example, so the path is valid and the body is what is judged. */
  example: string;
}

interface Parameter {
  name: string;
  in: string;
  example?: unknown;
  schema?: { example?: unknown; pattern?: string };
}

/** A documented example of a path parameter, else a value its id pattern (`^usr_[0-9a-f]{24}$`) accepts. */
function exampleOf(parameter: Parameter): string | undefined {
  const example = parameter.example ?? parameter.schema?.example;
  if (example !== undefined) return String(example);
  const id = /^\^([a-z]+_)\[0-9a-f\]\{(\d+)\}\$$/.exec(parameter.schema?.pattern ?? '');
  return id ? `${id[1]}${'0'.repeat(Number(id[2]))}` : undefined;
}

type Document = { paths: Record<string, Record<string, { parameters?: Parameter[]; requestBody?: { content?: Record<string, unknown> } | { $ref: string } }>> };

function routesTakingJson(document: Document): Route[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([, operation]) => followed(document, operation.requestBody)?.content?.['application/json'])
      .map(([method, operation]) => {
        const examples = new Map((operation.parameters ?? []).filter((parameter) => parameter.in === 'path').map((parameter) => [parameter.name, exampleOf(parameter)]));
        const example = path.replace(/\{(\w+)\}/g, (_, name: string) => {
          if (examples.get(name) === undefined) throw new Error(`${method} ${path}: the path parameter ${name} has no example`);
          return examples.get(name)!;
        });
        return { method: method.toUpperCase(), path, example };
      }),
  );
}

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

function expectContentTypeRefusal(route: Route, status: number, body: any) {
  expect({ route: `${route.method} ${route.path}`, status, code: body?.error?.code }).toEqual({ route: `${route.method} ${route.path}`, status: 400, code: 'VALIDATION_ERROR' });
  expect(body.error.details).toEqual([expect.objectContaining({ field: 'body', location: 'body', message: expect.stringContaining('content-type: application/json') })]);
}

/** The key of an agent deployed from the dashboard: the only key /runtime takes. */
async function deployedAgentKey(): Promise<string> {
  const owner = await signUp();
  expect((await owner.json('POST', `/api/organizations/${owner.organizationId}/trial`)).status).toBe(201);
  const deployed = await owner.json('POST', `/api/workspaces/${owner.workspaceId}/agents`, { name: 'content-type' });
  expect(deployed.status).toBe(201);
  return deployed.body.data.key;
}

describe('a body that is not JSON', () => {
  it('is refused with 400 VALIDATION_ERROR naming the content-type, on every JSON route of the api worker', async () => {
    const routes = routesTakingJson(await json(await call('/openapi.json')));
    expect(routes.length).toBeGreaterThan(20);
    const workspace = await provision();
    const agentKey = await deployedAgentKey();
    for (const route of routes) {
      const key = route.path.startsWith('/ops/') ? OPS_TOKEN : route.path.startsWith('/runtime/') ? agentKey : workspace.key;
      const response = await call(route.example, { method: route.method, headers: { authorization: `Bearer ${key}`, ...FORM }, body: 'name=x&url=https%3A%2F%2Fexample.com' });
      expectContentTypeRefusal(route, response.status, await response.json());
    }
  });

  it('is refused the same way on every JSON route of the dashboard', async () => {
    const routes = routesTakingJson((await (await dashboard('/api/openapi.json')).json()) as Document);
    expect(routes.length).toBeGreaterThan(10);
    const person = await signUp();
    for (const route of routes) {
      const response = await dashboard(route.example, {
        method: route.method,
        headers: { cookie: `sluice_session=${person.cookie}`, origin: APP_ORIGIN, ...FORM },
        body: 'name=x&email=a%40example.com',
      });
      expectContentTypeRefusal(route, response.status, await response.json());
    }
  });
});
