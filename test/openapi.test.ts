import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import { exampleOf } from '../src/api/examples';
import { buildApiApp } from '../src/api/index';
import { OPERATIONS } from '../src/operations';
import { mcpToolName } from '../src/core/operation';
import { call, json } from './support/api';
import { dashboard } from './support/dashboard';
import { followed } from './support/openapi';

const document = async (settings: Partial<typeof env> = {}, app = buildApiApp()) =>
  json(await app.fetch(new Request('http://sluice.test/openapi.json'), { ...env, ...settings }, createExecutionContext()));

/** Every operation of the document as [method path, operation]. */
function operationsOf(doc: any): [string, any][] {
  return Object.entries<any>(doc.paths).flatMap(([path, item]) =>
    Object.entries<any>(item)
      .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
      .map(([method, operation]) => [`${method.toUpperCase()} ${path}`, operation] as [string, any]),
  );
}

describe('the example of every operation', () => {
  it.each(OPERATIONS.map((operation) => [`${operation.platform}/${operation.name}`, operation] as const))('%s has one whose input and answer pass its own schemas', (key, operation) => {
    const example = exampleOf(operation);
    expect(example, key).toBeDefined();
    expect(example!.data, `${key} answer`).toBeDefined();
    const input = operation.input.safeParse(example!.input);
    expect(input.success, JSON.stringify(input.error?.issues)).toBe(true);
    const data = operation.output.safeParse(example!.data);
    expect(data.success, JSON.stringify(data.error?.issues)).toBe(true);
  });

  it('is shown in the document: a request (body or parameters) and a success answer (200, 201 for a creation, 202 for a job queued) for every operation', async () => {
    const doc = await document();
    for (const [name, operation] of operationsOf(doc)) {
      const ok = followed(doc, operation.responses['200'] ?? operation.responses['201'] ?? operation.responses['202']).content;
      expect(Object.values<any>(ok)[0].example, `${name} answer`).toBeDefined();
      if (operation.requestBody) expect(followed(doc, operation.requestBody).content['application/json'].example, `${name} body`).toBeDefined();
      for (const reference of operation.parameters ?? []) {
        const parameter = followed(doc, reference);
        expect(parameter.schema.example ?? parameter.example, `${name} ${parameter.name}`).toBeDefined();
      }
    }
  });
});

describe('the documented headers', () => {
  it('names Retry-After on every 429 and 503, and RateLimit-* on every metered success', async () => {
    const doc = await document();
    expect(Object.keys(doc.components.headers).sort()).toEqual(['Idempotent-Replayed', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After']);
    let waits = 0;
    for (const [name, operation] of operationsOf(doc)) {
      for (const status of ['429', '503']) {
        if (!operation.responses[status]) continue;
        waits++;
        expect(followed(doc, operation.responses[status]).headers?.['Retry-After'], `${name} ${status}`).toEqual({ $ref: '#/components/headers/Retry-After' });
      }
    }
    expect(waits).toBeGreaterThanOrEqual(OPERATIONS.length * 2);
    for (const operation of OPERATIONS) {
      const documented = doc.paths[operation.paths[0]][operation.method.toLowerCase()];
      for (const status of ['200', '429']) {
        expect(Object.keys(followed(doc, documented.responses[status]).headers ?? {}), `${operation.name} ${status}`).toEqual(expect.arrayContaining(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']));
      }
    }
  });

  it('takes an optional Idempotency-Key header on every metered operation and names Idempotent-Replayed on its success', async () => {
    const doc = await document();
    expect(doc.components.parameters.IdempotencyKey).toMatchObject({ name: 'Idempotency-Key', in: 'header', required: false });
    expect(doc.components.schemas.IdempotencyKey).toMatchObject({ type: 'string', minLength: 1, maxLength: 255 });
    for (const operation of OPERATIONS) {
      const documented = doc.paths[operation.paths[0]][operation.method.toLowerCase()];
      expect(documented.parameters, operation.name).toContainEqual({ $ref: '#/components/parameters/IdempotencyKey' });
      expect(followed(doc, documented.responses['200']).headers['Idempotent-Replayed'], operation.name).toEqual({ $ref: '#/components/headers/Idempotent-Replayed' });
    }
  });
});

describe('the documented statuses', () => {
  it('declare each answer and request body operations share once, under components, and refer to it', async () => {
    // The second document an app builds (another set of public URLs), so a first one that changed the routes'
    // own answers while moving them would leave this one referring to nothing.
    const app = buildApiApp();
    await document({}, app);
    const doc = await document({ BASE_URL: 'https://again.example.com' }, app);
    const inline = new Map<string, string[]>();
    const referred = { errors: 0, successes: 0, bodies: 0 };
    const place = (node: any, where: string, kind: keyof typeof referred) => {
      if (node.$ref) {
        referred[kind]++;
        expect(followed(doc, node), `${where}: ${node.$ref}`).toMatchObject(kind === 'bodies' ? { content: expect.any(Object) } : { description: expect.any(String) });
        return;
      }
      const text = JSON.stringify(node);
      inline.set(text, [...(inline.get(text) ?? []), where]);
    };
    for (const [name, operation] of operationsOf(doc)) {
      for (const [status, response] of Object.entries<any>(operation.responses)) place(response, `${name} ${status}`, Number(status) < 400 ? 'successes' : 'errors');
      if (operation.requestBody) place(operation.requestBody, `${name} body`, 'bodies');
    }
    expect([...inline.values()].filter((operations) => operations.length > 1)).toEqual([]);
    expect(referred.errors).toBeGreaterThan(OPERATIONS.length * 5);
    // Each root tool's body and answer, documented again at its path through a connection, are declared once: every
    // such body and success answer is referred to twice.
    const throughConnections = operationsOf(doc).filter(([name]) => name.includes(' /v1/connections/{connectionId}/'));
    expect(throughConnections.length).toBeGreaterThan(10);
    expect(referred.successes).toBeGreaterThanOrEqual(throughConnections.length * 2);
    expect(referred.bodies).toBeGreaterThanOrEqual(throughConnections.filter(([, operation]) => operation.requestBody).length * 2);
    const scrape = doc.paths['/v1/connections/{connectionId}/scrape'].post;
    expect(scrape.requestBody).toEqual(doc.paths['/scrape'].post.requestBody);
    expect(scrape.requestBody).toEqual({ $ref: '#/components/requestBodies/DataWebScrape' });
    expect(scrape.responses['200']).toEqual({ $ref: '#/components/responses/DataWebScrapeOk' });
    // One 429 for the metered operations, with the window's headers beside Retry-After, and one for the others.
    expect(doc.components.responses.RateLimitedMetered.headers).toEqual(expect.objectContaining({ 'Retry-After': expect.anything(), 'RateLimit-Limit': expect.anything() }));
    expect(Object.keys(doc.components.responses.RateLimited.headers)).toEqual(['Retry-After']);
  });

  it('name 404 on every operation: an upstream 4xx passes through with its status, and a generated client types only the declared ones', async () => {
    const doc = await document();
    for (const operation of OPERATIONS) {
      const documented = doc.paths[operation.paths[0]][operation.method.toLowerCase()];
      expect(followed(doc, documented.responses['404'])?.content['application/json'].schema, `${operation.platform}/${operation.name}`).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' });
    }
  });
});

describe('servers', () => {
  it('are the configured public URLs: BASE_URL, and TOOLS_BASE_URL on the root-path tools when it differs', async () => {
    const doc = await document({ BASE_URL: 'https://api.example.com', TOOLS_BASE_URL: 'https://tools.example.com/' });
    expect(doc.servers).toEqual([{ url: 'https://api.example.com', description: 'REST API' }]);
    expect(doc.paths['/scrape'].servers).toEqual([{ url: 'https://tools.example.com', description: 'Tool endpoints' }]);
    expect(doc.paths['/v1/credits'].servers).toBeUndefined();
    expect(doc.paths['/v1/data/linkedin/get-company-by-domain'].servers).toBeUndefined();

    const same = await document({ BASE_URL: 'https://one.example.com', TOOLS_BASE_URL: 'https://one.example.com' });
    expect(same.servers).toEqual([{ url: 'https://one.example.com', description: 'REST API' }]);
    expect(same.paths['/scrape'].servers).toBeUndefined();
  });
});

describe('twins', () => {
  it('documents each operation once, at its canonical path, naming the paths it is also served at', async () => {
    const doc = await document();
    for (const operation of OPERATIONS) {
      const [canonical, ...aliases] = operation.paths;
      const documented = doc.paths[canonical][operation.method.toLowerCase()];
      expect(documented.operationId).toBe(mcpToolName(operation));
      for (const alias of aliases) {
        expect(doc.paths[alias], alias).toBeUndefined();
        expect(documented['x-aliases']).toContain(alias);
        expect(documented.description).toContain(`\`${alias}\``);
      }
    }
    const ids = operationsOf(doc).map(([, operation]) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('still serves every alias', async () => {
    for (const operation of OPERATIONS) {
      for (const path of operation.paths) {
        const response = await call(path, { method: operation.method });
        expect(response.status, path).toBe(401);
      }
    }
  });
});

describe('data.result', () => {
  it('is required in every payload that has it, so generated clients need no optional chaining', async () => {
    const doc = await document();
    let payloads = 0;
    for (const operation of OPERATIONS) {
      const schema = followed(doc, doc.paths[operation.paths[0]][operation.method.toLowerCase()].responses['200']).content['application/json'].schema;
      const data = schema.properties.data;
      if (!data.properties?.result) continue;
      payloads++;
      expect(data.required, operation.name).toContain('result');
    }
    // Vendor rows answer the vendor's own payload as it sends it; every payload of ours has `result`.
    expect(payloads).toBe(OPERATIONS.filter((operation) => operation.upstream === undefined).length);
  });
});

describe('the document', () => {
  it('is built once per set of public URLs, not per request', async () => {
    const app = buildApiApp();
    const build = vi.spyOn(app, 'getOpenAPIDocument');
    const first = await document({}, app);
    await document({}, app);
    expect(build).toHaveBeenCalledTimes(1);
    const elsewhere = await document({ BASE_URL: 'https://elsewhere.example' }, app);
    expect(build).toHaveBeenCalledTimes(2);
    expect(elsewhere.servers[0].url).toBe('https://elsewhere.example');
    expect(first.servers[0].url).toBe(env.BASE_URL);
  });
});

/** Every `$ref` in a document, with where it stands. */
function refsOf(node: unknown, at = '#'): [string, string][] {
  if (!node || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([name, value]) =>
    name === '$ref' && typeof value === 'string' ? [[at, value] as [string, string]] : refsOf(value, `${at}/${name}`),
  );
}

/** Every schema that says `nullable` without saying what type may be null, by where it stands. */
function untypedNullables(node: unknown, at = '#'): string[] {
  if (!node || typeof node !== 'object') return [];
  const own = 'nullable' in node && !['type', '$ref', 'allOf', 'anyOf', 'oneOf'].some((name) => name in node) ? [at] : [];
  return [...own, ...Object.entries(node).flatMap(([name, value]) => untypedNullables(value, `${at}/${name}`))];
}

describe.each([
  ['/openapi.json of the api worker', () => document()],
  ['/api/openapi.json of the dashboard', async () => json(await dashboard('/api/openapi.json'))],
])('%s', (_, load) => {
  it('resolves every $ref inside itself', async () => {
    const doc = await load();
    const unresolved = refsOf(doc).filter(([, ref]) => followed(doc, { $ref: ref }) === undefined);
    expect(unresolved).toEqual([]);
    expect(refsOf(doc).length).toBeGreaterThan(0);
  });

  it('declares under components.headers exactly the response headers it refers to', async () => {
    const doc = await load();
    const named = new Set(refsOf(doc).flatMap(([, ref]) => (ref.startsWith('#/components/headers/') ? [ref.split('/').pop()] : [])));
    expect(named.has('Retry-After')).toBe(true);
    expect(Object.keys(doc.components.headers).sort()).toEqual([...named].sort());
  });

  it('names its license, and gives every nullable schema a type', async () => {
    const doc = await load();
    expect(doc.info.license).toEqual({ name: 'Proprietary', url: `${env.APP_URL.replace(/\/+$/, '')}/terms` });
    expect(untypedNullables(doc)).toEqual([]);
  });
});
