import { describe, expect, it } from 'vitest';
import { bearer, call } from '../support/api';
import { APP_ORIGIN, dashboard, type Person, signUp } from '../support/dashboard';

/** The dashboard's routes that manage keys of any kind (API keys, MCP tokens, sandbox keys), from its own OpenAPI document. */
async function keyRoutes(): Promise<{ method: string; path: string }[]> {
  const document = (await (await dashboard('/api/openapi.json')).json()) as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(document.paths)
    .filter(([path]) => /\/(keys|mcp-tokens|sandbox-keys)(\/|$)/.test(path))
    .flatMap(([path, methods]) => Object.keys(methods).map((method) => ({ method: method.toUpperCase(), path })));
}

/** A body the route would accept from a signed-in person, so only the credentials can be what refuses it. */
function validBody(method: string, path: string): unknown {
  if (method === 'GET') return undefined;
  if (path.endsWith('/limit')) return { monthlyLimitCents: 1 };
  if (path.endsWith('/reveal') || path.endsWith('/revoke')) return undefined;
  return { name: 'made by an API key' };
}

/** A 401 UNAUTHORIZED for the route, whose body does not carry the secret of the key it was about. */
async function expectRefusedWithoutSecret(response: Response, method: string, path: string, secret: string) {
  const text = await response.text();
  expect({ method, path, status: response.status }).toEqual({ method, path, status: 401 });
  expect(JSON.parse(text).error.code).toBe('UNAUTHORIZED');
  expect(text).not.toContain(secret);
}

/** Everything a person can see of the workspace's keys, through their own session. */
async function keysSeenBy(person: Person) {
  const base = `/api/workspaces/${person.workspaceId}`;
  const [keys, tokens, sandbox] = await Promise.all([person.json('GET', `${base}/keys`), person.json('GET', `${base}/mcp-tokens`), person.json('GET', `${base}/sandbox-keys`)]);
  for (const listed of [keys, tokens, sandbox]) expect(listed.status).toBe(200);
  const shape = (entry: { id: string; name: string; revokedAt: string | null; monthlyLimitCents?: number | null }) => ({
    id: entry.id,
    name: entry.name,
    revokedAt: entry.revokedAt,
    monthlyLimitCents: entry.monthlyLimitCents ?? null,
  });
  return { keys: keys.body.data.keys.map(shape), tokens: tokens.body.data.tokens.map(shape), sandbox: sandbox.body.data.keys.map(shape) };
}

/** A person with a working API key (the one that will knock on the key routes) and one of each kind of key to aim at. */
async function workspaceWithKeys() {
  const person = await signUp();
  const base = `/api/workspaces/${person.workspaceId}`;
  const apiKey = (await person.json('POST', `${base}/keys`, { name: 'the caller' })).body.data as { id: string; key: string };
  const target = (await person.json('POST', `${base}/keys`, { name: 'the target' })).body.data as { id: string; key: string };
  const token = (await person.json('POST', `${base}/mcp-tokens`, { name: 'a token' })).body.data as { id: string };
  const sandbox = await person.json('POST', `${base}/sandbox-keys`, { name: 'a sandbox key' });
  expect(sandbox.status).toBe(201);
  expect((await call('/v1/credits', bearer(apiKey.key))).status).toBe(200);
  return { person, apiKey, target, token, sandboxKey: sandbox.body.data as { id: string } };
}

describe('an API key cannot manage API keys', () => {
  it("is refused with 401 on every key route of the dashboard, even from the dashboard's origin, and changes nothing", async () => {
    const { person, apiKey, target, token, sandboxKey } = await workspaceWithKeys();
    const before = await keysSeenBy(person);
    const routes = await keyRoutes();
    // List, create, reveal, revoke and limit of API keys, MCP tokens and sandbox keys.
    expect(routes.length).toBeGreaterThanOrEqual(11);

    for (const { method, path } of routes) {
      const keyId = path.includes('/sandbox-keys/') ? sandboxKey.id : target.id;
      const url = path.replace('{workspaceId}', person.workspaceId).replace('{keyId}', keyId).replace('{tokenId}', token.id);
      const body = validBody(method, path);
      await expectRefusedWithoutSecret(await dashboard(url, bearer(apiKey.key, { method, body, headers: { origin: APP_ORIGIN } })), method, path, target.key);
    }

    expect(await keysSeenBy(person)).toEqual(before);
    expect((await call('/v1/credits', bearer(target.key))).status).toBe(200);
    expect((await call('/v1/credits', bearer(apiKey.key))).status).toBe(200);
  });

  it("is refused with 401 on the operator's /ops/v1/keys routes, and changes nothing", async () => {
    const { person, apiKey, target } = await workspaceWithKeys();
    const before = await keysSeenBy(person);
    const attempts: [string, string, unknown?][] = [
      ['POST', '/ops/v1/keys', { workspaceId: person.workspaceId, name: 'made by an API key' }],
      ['POST', `/ops/v1/keys/${target.id}/reveal`],
      ['POST', `/ops/v1/keys/${target.id}/revoke`],
      ['PUT', `/ops/v1/keys/${target.id}/limit`, { monthlyLimitCents: 1 }],
    ];

    for (const [method, path, body] of attempts) {
      await expectRefusedWithoutSecret(await call(path, bearer(apiKey.key, { method, body })), method, path, target.key);
    }

    expect(await keysSeenBy(person)).toEqual(before);
    expect((await call('/v1/credits', bearer(target.key))).status).toBe(200);
  });
});
