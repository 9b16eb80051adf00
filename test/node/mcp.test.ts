import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { opsClient, type OpsClient } from '../../scripts/lib/ops-client';
import { toolErrorOf } from '../mcp/tool-error';
import { followed } from '../support/openapi';
import { type SharedStack, sharedStack } from './support/shared-stack';

/**
 * The mcp worker in the real local stack (workerd, both workers, one Miniflare), driven by the MCP
 * SDK's own client over Streamable HTTP; the professional-network vendor is a fake on loopback.
 */
let stack: SharedStack;
let ops: OpsClient;
let mcpUrl: string;
let apiUrl: string;
let organizationId: string;
let workspaceId: string;
let apiKey: string;
let mcpToken: { id: string; key: string };
/** Every REST tool endpoint, as the public catalog lists it. */
let catalog: { name: string; method: string; path: string; mcpTool: string }[];

/** A client as agents use it: it has listed the tools, so it checks every result against their output schemas. */
async function connectListed(path = '/mcp'): Promise<Client> {
  const client = await connect(path);
  await client.listTools();
  return client;
}

async function connect(path = '/mcp', token = mcpToken.key): Promise<Client> {
  const client = new Client({ name: 'sluice-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${new URL(mcpUrl).origin}${path}`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

async function purchased(): Promise<number> {
  return (await ops.call<{ purchasedBalanceCents: number }>('GET', `/ops/v1/organizations/${organizationId}/wallet`)).purchasedBalanceCents;
}

function post(path: string, headers: Record<string, string> = {}, body: unknown = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }) {
  return fetch(`${new URL(mcpUrl).origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
}

beforeAll(async () => {
  stack = await sharedStack();
  apiUrl = stack.urls.api!;
  mcpUrl = stack.settings.MCP_URL!;
  ops = opsClient(apiUrl, stack.settings.OPS_TOKEN!);
  organizationId = (await ops.call<{ id: string }>('POST', '/ops/v1/organizations', { name: 'MCP test', plan: 'payg' })).id;
  await ops.call('POST', `/ops/v1/organizations/${organizationId}/wallet/credit`, { purchasedCents: 100 });
  workspaceId = (await ops.call<{ id: string }>('POST', '/ops/v1/workspaces', { organizationId, name: 'MCP test' })).id;
  apiKey = (await ops.call<{ key: string }>('POST', '/ops/v1/keys', { workspaceId })).key;
  mcpToken = await ops.call<{ id: string; key: string }>('POST', '/ops/v1/keys', { workspaceId, scope: 'workspace_mcp', name: 'mcp' });
  const platforms = (await (await fetch(`${apiUrl}/v1/platforms`)).json()).data.platforms as { operations: typeof catalog }[];
  catalog = platforms.flatMap((platform) => platform.operations);
}, 180_000);

describe('MCP authentication', () => {
  it.each(['/mcp', '/mcp/web'])('answers an unauthenticated call to %s with the spec 401: challenge and JSON-RPC error', async (path) => {
    const response = await post(path);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${new URL(mcpUrl).origin}/.well-known/oauth-protected-resource${path}", scope="mcp", error="invalid_token", error_description="Missing Authorization header"`,
    );
    expect(await response.text()).toBe('{"jsonrpc":"2.0","error":{"code":-32001,"message":"Missing Authorization header"},"id":null}');
  });

  it.each(['/mcp', '/mcp/web', '/mcp/seo', '/mcp/social'])('serves protected-resource metadata for %s whose resource is that exact URL', async (path) => {
    const response = await fetch(`${new URL(mcpUrl).origin}/.well-known/oauth-protected-resource${path}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ resource: `${new URL(mcpUrl).origin}${path}`, bearer_methods_supported: ['header'] });
  });

  it('refuses a REST API key with 401 invalid_token', async () => {
    const response = await post('/mcp', { authorization: `Bearer ${apiKey}` });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain('error_description="API keys are not accepted by the MCP endpoint');
    expect((await response.json()).error.code).toBe(-32001);
  });

  it('refuses the MCP bearer on REST /v1 with 403 UNAUTHORIZED', async () => {
    const response = await fetch(`${apiUrl}/v1/credits`, { headers: { authorization: `Bearer ${mcpToken.key}` } });
    expect(response.status).toBe(403);
    expect((await response.json()).error).toMatchObject({ code: 'UNAUTHORIZED', message: expect.stringContaining('MCP endpoint only') });
  });

  it('refuses a foreign Origin with 403 and lets the dashboard origin through', async () => {
    expect((await post('/mcp', { authorization: `Bearer ${mcpToken.key}`, origin: 'https://evil.example' })).status).toBe(403);
    expect((await post('/mcp', { authorization: `Bearer ${mcpToken.key}`, origin: new URL(stack.settings.APP_URL!).origin })).status).toBe(200);
  });

  it.each(['GET', 'DELETE'])('answers %s /mcp with 405', async (method) => {
    const response = await fetch(`${new URL(mcpUrl).origin}/mcp`, { method, headers: { authorization: `Bearer ${mcpToken.key}` } });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });

  it('refuses a revoked MCP token on the next request', async () => {
    const token = await ops.call<{ id: string; key: string }>('POST', '/ops/v1/keys', { workspaceId, scope: 'workspace_mcp' });
    expect((await post('/mcp', { authorization: `Bearer ${token.key}` })).status).toBe(200);
    await ops.call('POST', `/ops/v1/keys/${token.id}/revoke`);
    const response = await post('/mcp', { authorization: `Bearer ${token.key}` });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain('revoked');
  });
});

describe('MCP tools', () => {
  it('lists one tool per REST tool endpoint, whose input schema is the REST one, and the discovery tools', async () => {
    // The document first: listing the tools keeps this process busy for seconds (the client compiles each tool's
    // output schema), and a fetch right after it may be handed a kept-alive connection workerd has closed meanwhile.
    const document = (await (await fetch(`${apiUrl}/openapi.json`)).json()) as { paths: Record<string, Record<string, any>> };
    const client = await connect();
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['sluice_tools_search', 'sluice_tools_list_enabled']));
    expect(catalog.length).toBeGreaterThan(0);
    for (const operation of catalog) {
      const tool = tools.find((candidate) => candidate.name === operation.mcpTool);
      // The tool's arguments are the REST query (the Idempotency-Key header travels in _meta instead).
      const query = (document.paths[operation.path]![operation.method.toLowerCase()].parameters ?? []).filter((parameter: { in?: string }) => parameter.in === 'query');
      expect(tool, operation.mcpTool).toBeDefined();
      expect(tool!.description).toMatch(/cents? per/);
      const rest = document.paths[operation.path]![operation.method.toLowerCase()];
      const restFields =
        operation.method === 'GET'
          ? { names: query.map((parameter: { name: string }) => parameter.name), required: query.filter((parameter: { required?: boolean }) => parameter.required).map((parameter: { name: string }) => parameter.name) }
          : { names: Object.keys(followed(document, rest.requestBody).content['application/json'].schema.properties), required: followed(document, rest.requestBody).content['application/json'].schema.required ?? [] };
      // Beside them, a tool a connectable vendor serves takes an optional `connection` (a workspace's own vendor account).
      const properties = { ...(tool!.inputSchema.properties as Record<string, { description?: string }> | undefined) };
      if (properties.connection) expect(properties.connection.description, tool!.name).toMatch(/^Optional: the id of one of the workspace's connections/);
      delete properties.connection;
      expect(Object.keys(properties).sort(), tool!.name).toEqual([...restFields.names].sort());
      expect([...(tool!.inputSchema.required ?? [])].sort(), tool!.name).toEqual([...restFields.required].sort());
    }
    await client.close();
  });

  it('bills a tool call exactly as its REST twin, and records it; its result matches the output schema the client checks', async () => {
    const client = await connectListed();
    const before = await purchased();
    const result = await client.callTool({ name: 'data_linkedin_get_company_by_domain', arguments: { domain: 'mcp-billing.com' } });
    expect(result.isError).toBeFalsy();
    const structured = result.structuredContent as { data: { name: string }; meta: { costCents: number; purchasedBalanceCents: number } };
    expect(structured.data.name).toBe('Stripe');
    expect(structured.meta.costCents).toBe(1);
    expect(JSON.parse((result.content as { text: string }[])[0]!.text)).toEqual(structured);
    const afterMcp = await purchased();

    const rest = await (await fetch(`${apiUrl}/v1/data/linkedin/get-company-by-domain?domain=rest-billing.com`, { headers: { authorization: `Bearer ${apiKey}` } })).json();
    const afterRest = await purchased();
    expect(before - afterMcp).toBe(rest.meta.costCents);
    expect(afterMcp - afterRest).toBe(rest.meta.costCents);
    expect(structured.meta.purchasedBalanceCents).toBe(afterMcp);

    let rows: { rows: { keyId: string; operation: string }[] } | undefined;
    for (let attempt = 0; attempt < 50 && !rows?.rows.some((row) => row.keyId === mcpToken.id); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      rows = (await (await fetch(`${apiUrl}/v1/usage`, { headers: { authorization: `Bearer ${apiKey}` } })).json()).data;
    }
    expect(rows!.rows).toContainEqual(expect.objectContaining({ keyId: mcpToken.id, operation: 'linkedin.get-company-by-domain' }));
    await client.close();
  });

  it('keeps a client that resets its timeout on progress waiting for a vendor slower than that timeout, and hands it the result', async () => {
    const client = await connectListed();
    const heard: number[] = [];
    // The vendor answers after 8 s, the client gives up after 6 s of silence: the progress at 5 s buys it another 6.
    const result = await client.callTool({ name: 'data_linkedin_get_company_by_domain', arguments: { domain: `slow-8000.${Date.now()}.example.com` } }, undefined, {
      timeout: 6_000,
      resetTimeoutOnProgress: true,
      onprogress: ({ progress }) => heard.push(progress),
    });
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    expect((result.structuredContent as { data: { name: string } }).data.name).toBe('Stripe');
    expect(heard).toEqual([5]);
    // A refusal asked the same way reaches the client on the stream as the tool error it reads over JSON.
    const refused = await client.callTool({ name: 'data_linkedin_get_company_by_domain', arguments: { domain: 'https://stripe.com/about' } }, undefined, { onprogress: () => {} });
    expect(refused.isError).toBe(true);
    expect(toolErrorOf(refused).code).toBe('VALIDATION_ERROR');
    await client.close();
  });

  it('answers invalid arguments with a tool error the SDK client shows: VALIDATION_ERROR, its message and details, uncharged', async () => {
    const client = await connectListed();
    const before = await purchased();
    const result = await client.callTool({ name: 'data_linkedin_get_company_by_domain', arguments: { domain: 'https://stripe.com/about', colour: 'red' } });
    expect(result.isError).toBe(true);
    // No structuredContent: it would have to match {data, meta}, and the client checks it even on errors.
    expect(result.structuredContent).toBeUndefined();
    const error = toolErrorOf(result);
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.details!.map((detail) => detail.field).sort()).toEqual(['colour', 'domain']);
    expect((result.content as { text: string }[])[0]!.text).toMatch(/^VALIDATION_ERROR: \S.*\n\{"error":/);
    expect(await purchased()).toBe(before);
    await client.close();
  });

  it('answers a tool whose vendor has no credentials here with a tool error the SDK client shows: PROVIDER_UNAVAILABLE and what to set, uncharged', async () => {
    const client = await connectListed();
    const before = await purchased();
    // The shared stack configures the professional-network vendor and DataForSEO, not the video platform's.
    const result = await client.callTool({ name: 'data_youtube_search', arguments: { q: 'anvils' } });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect((result.content as { text: string }[])[0]!.text).toMatch(/^PROVIDER_UNAVAILABLE: The YouTube Data API is not configured on this server: set YOUTUBE_API_KEY/);
    expect(toolErrorOf(result)).toMatchObject({ code: 'PROVIDER_UNAVAILABLE', retryAfter: 60 });
    expect(await purchased()).toBe(before);
    await client.close();
  });

  it('replays a tool call with the same _meta.idempotency_key uncharged, and refuses a malformed key as VALIDATION_ERROR', async () => {
    const client = await connectListed();
    const before = await purchased();
    const ask = { name: 'data_linkedin_get_company_by_domain', arguments: { domain: 'mcp-retry.com' }, _meta: { idempotency_key: `retry-${Date.now()}` } };
    const first = await client.callTool(ask);
    const retry = await client.callTool(ask);
    expect(first.isError).toBeFalsy();
    expect(retry.isError).toBeFalsy();
    const firstContent = first.structuredContent as { data: unknown; meta: Record<string, unknown> };
    const retryContent = retry.structuredContent as { data: unknown; meta: Record<string, unknown> };
    expect(retryContent.data).toEqual(firstContent.data);
    expect(firstContent.meta.replayed).toBeUndefined();
    expect(retryContent.meta).toEqual({ ...firstContent.meta, replayed: true });
    expect(before - (await purchased())).toBe(1);

    const malformed = await client.callTool({ ...ask, _meta: { idempotency_key: 42 } });
    expect(malformed.isError).toBe(true);
    const error = toolErrorOf(malformed);
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.details).toEqual([{ field: '_meta.idempotency_key', location: 'body', message: 'Must be 1 to 255 printable ASCII characters.' }]);
    expect(before - (await purchased())).toBe(1);
    await client.close();
  });

  it('shows each facet only its group, and refuses a tool of another group there with JSON-RPC -32602', async () => {
    const social = await connect('/mcp/social');
    const socialNames = (await social.listTools()).tools.map((tool) => tool.name);
    expect(socialNames).toContain('data_linkedin_get_company_by_domain');
    expect(socialNames.filter((name) => name.startsWith('data_web_') || name.startsWith('data_seo_'))).toEqual([]);
    await social.close();

    const web = await connect('/mcp/web');
    const webNames = (await web.listTools()).tools.map((tool) => tool.name);
    expect(webNames).not.toContain('data_linkedin_get_company_by_domain');
    // Besides its group: the discovery and workspace tools (sluice_*), served everywhere.
    for (const name of webNames) expect(name.startsWith('data_web_') || name.startsWith('sluice_')).toBe(true);
    await expect(web.callTool({ name: 'data_linkedin_get_company_by_domain', arguments: { domain: 'stripe.com' } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown tool: data_linkedin_get_company_by_domain'),
    });
    const found = await web.callTool({ name: 'sluice_tools_search', arguments: { query: 'linkedin company domain' } });
    const matches = (found.structuredContent as { tools: { name: string; enabled: boolean }[] }).tools;
    expect(matches[0]).toMatchObject({ name: 'data_linkedin_get_company_by_domain', enabled: false });
    await web.close();
  });

  it('finds tools by free text and lists the enabled ones with prices', async () => {
    const client = await connect();
    const found = await client.callTool({ name: 'sluice_tools_search', arguments: { query: 'company' } });
    expect((found.structuredContent as { tools: { name: string; enabled: boolean; price: string }[] }).tools).toContainEqual(
      expect.objectContaining({ name: 'data_linkedin_get_company_by_domain', enabled: true, price: '1 cent per request' }),
    );
    const enabled = await client.callTool({ name: 'sluice_tools_list_enabled', arguments: {} });
    const listed = (enabled.structuredContent as { tools: { name: string }[] }).tools.map((tool) => tool.name);
    expect(listed.sort()).toEqual(catalog.map((operation) => operation.mcpTool).sort());
    await client.close();
  });
});

describe('MCP resources, prompts and completion', () => {
  const text = (result: { contents: unknown[] }) => (result.contents[0] as { text: string }).text;

  it('advertises resources, prompts and completions, without subscriptions (the server is stateless)', async () => {
    const client = await connect();
    const capabilities = client.getServerCapabilities()!;
    expect(capabilities).toMatchObject({ tools: {}, resources: {}, prompts: {}, completions: {} });
    expect(capabilities.resources!.subscribe).toBeUndefined();
    await client.close();
  });

  it('serves the catalog and llms.txt exactly as the api worker does at /v1/platforms and /llms.txt', async () => {
    const client = await connect('/mcp/web');
    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual(['sluice://catalog', 'sluice://llms.txt', 'sluice://databases']);

    const restCatalog = (await (await fetch(`${apiUrl}/v1/platforms`)).json()).data;
    const catalogRead = await client.readResource({ uri: 'sluice://catalog' });
    expect(catalogRead.contents[0]).toMatchObject({ uri: 'sluice://catalog', mimeType: 'application/json' });
    expect(JSON.parse(text(catalogRead))).toEqual(restCatalog);

    const llms = await client.readResource({ uri: 'sluice://llms.txt' });
    expect(llms.contents[0]).toMatchObject({ mimeType: 'text/markdown' });
    expect(text(llms)).toBe(await (await fetch(`${apiUrl}/llms.txt`)).text());

    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((template) => template.uriTemplate)).toEqual(['sluice://catalog/{platform}', 'sluice://databases/{databaseId}']);
    const linkedin = await client.readResource({ uri: 'sluice://catalog/linkedin' });
    expect(JSON.parse(text(linkedin))).toEqual((await (await fetch(`${apiUrl}/v1/platforms/linkedin`)).json()).data);
    await expect(client.readResource({ uri: 'sluice://catalog/myspace' })).rejects.toMatchObject({ code: -32002, message: expect.stringContaining("No source 'myspace'") });
    await expect(client.readResource({ uri: 'sluice://nothing' })).rejects.toMatchObject({ code: -32002 });

    const platforms = await client.complete({ ref: { type: 'ref/resource', uri: 'sluice://catalog/{platform}' }, argument: { name: 'platform', value: 'li' } });
    expect(platforms.completion.values).toEqual(['linkedin']);
    await client.close();
  });

  it("lists the workspace's databases and one database's tables, and completes a database id", async () => {
    const client = await connectListed();
    const created = await client.callTool({ name: 'sluice_db_create', arguments: { name: 'mcp-resources' } });
    const { id } = (created.structuredContent as { data: { id: string } }).data;
    await client.callTool({ name: 'sluice_db_query', arguments: { databaseId: id, sql: 'CREATE TABLE companies (domain TEXT PRIMARY KEY)' } });

    const listed = JSON.parse(text(await client.readResource({ uri: 'sluice://databases' })));
    expect(listed.databases).toContainEqual(expect.objectContaining({ id, name: 'mcp-resources', workspaceId }));
    const described = JSON.parse(text(await client.readResource({ uri: `sluice://databases/${id}` })));
    expect(described).toMatchObject({ id, name: 'mcp-resources', tables: ['companies'] });
    await expect(client.readResource({ uri: 'sluice://databases/db_000000000000000000000000' })).rejects.toMatchObject({
      code: -32002,
      message: expect.stringContaining('NOT_FOUND: No database db_000000000000000000000000'),
    });

    const ids = await client.complete({ ref: { type: 'ref/resource', uri: 'sluice://databases/{databaseId}' }, argument: { name: 'databaseId', value: id.slice(0, 8) } });
    expect(ids.completion.values).toContain(id);
    await client.close();
  });

  it('offers prompts naming the real tools, only where those tools are served, and completes their choices', async () => {
    const client = await connect();
    expect((await client.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(['enrich_companies', 'audit_page_seo']);
    const source = await client.complete({ ref: { type: 'ref/prompt', name: 'enrich_companies' }, argument: { name: 'source', value: 'l' } });
    expect(source.completion.values).toEqual(['leads', 'linkedin']);

    const enrich = await client.getPrompt({ name: 'enrich_companies', arguments: { companies: 'stripe.com, adyen.com', source: 'linkedin' } });
    const message = (enrich.messages[0]!.content as { text: string }).text;
    expect(enrich.messages[0]!.role).toBe('user');
    expect(message).toContain('stripe.com, adyen.com');
    expect(message).toContain('data_linkedin_get_company_by_domain (1 cent per request)');
    expect(message).toContain('sluice_db_create');
    await expect(client.getPrompt({ name: 'enrich_companies', arguments: {} })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('needs companies') });
    await expect(client.getPrompt({ name: 'enrich_companies', arguments: { companies: 'a.com', source: 'fax' } })).rejects.toMatchObject({ code: -32602 });
    await client.close();

    // /mcp/web serves the scraper but no SEO or company tool: only the on-page audit is offered there.
    const web = await connect('/mcp/web');
    const { prompts } = await web.listPrompts();
    expect(prompts.map((prompt) => prompt.name)).toEqual(['audit_page_seo']);
    const focus = await web.complete({ ref: { type: 'ref/prompt', name: 'audit_page_seo' }, argument: { name: 'focus', value: '' } });
    expect(focus.completion.values).toEqual(['on-page']);
    const audit = await web.getPrompt({ name: 'audit_page_seo', arguments: { url: 'https://example.com/pricing' } });
    const steps = (audit.messages[0]!.content as { text: string }).text;
    expect(steps).toContain('data_web_scrape');
    expect(steps).not.toContain('data_seo_');
    await expect(web.getPrompt({ name: 'enrich_companies', arguments: { companies: 'stripe.com' } })).rejects.toMatchObject({ code: -32602 });
    await web.close();
  });
});

describe('MCP answers: request ids, security headers, capped bodies', () => {
  const call = (body: unknown) => post('/mcp', { authorization: `Bearer ${mcpToken.key}` }, body);

  it('puts an x-request-id and the security headers on every answer: success, 401, 404, 405, metadata, preflight', async () => {
    const origin = new URL(mcpUrl).origin;
    const responses = await Promise.all([
      call({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      post('/mcp'),
      post('/mcp/nope', { authorization: `Bearer ${mcpToken.key}` }),
      fetch(`${origin}/mcp`),
      fetch(`${origin}/.well-known/oauth-protected-resource/mcp`),
      fetch(`${origin}/mcp`, { method: 'OPTIONS', headers: { origin: stack.settings.APP_URL!, 'access-control-request-method': 'POST' } }),
    ]);
    expect(responses.map((response) => response.status)).toEqual([200, 401, 404, 405, 200, 204]);
    const ids = responses.map((response) => response.headers.get('x-request-id'));
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{24}$/);
    expect(new Set(ids).size).toBe(ids.length);
    for (const response of responses) {
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      expect(response.headers.get('x-frame-options')).toBe('DENY');
    }
  });

  it('records a tool call under the request id its answer carries', async () => {
    const response = await call({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'data_linkedin_get_company_by_domain', arguments: { domain: 'mcp-request-id.com' } } });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id');
    let rows: { requestId: string }[] = [];
    for (let attempt = 0; attempt < 50 && !rows.some((row) => row.requestId === requestId); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      rows = (await (await fetch(`${apiUrl}/v1/usage`, { headers: { authorization: `Bearer ${apiKey}` } })).json()).data.rows;
    }
    expect(rows.map((row) => row.requestId)).toContain(requestId);
  });

  it('refuses a body over 1 MB with 400 and a JSON-RPC error naming VALIDATION_ERROR and the cap, uncharged', async () => {
    const before = await purchased();
    const arguments_ = { domain: 'mcp-big.com', padding: 'x'.repeat(2 * 1024 * 1024) };
    const response = await call({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'data_linkedin_get_company_by_domain', arguments: arguments_ } });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error.code).toBe(-32600);
    expect(body.error.message).toBe('VALIDATION_ERROR: The request body is larger than 1 MB (1,048,576 bytes), the most this API reads.');
    expect(body.error.data).toMatchObject({ code: 'VALIDATION_ERROR', maxBytes: 1_048_576 });
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(await purchased()).toBe(before);
  });
});

describe('sluice_webhook_endpoints_list', () => {
  it("lists the workspace's webhook endpoints, without their secrets, on every endpoint beside the other workspace tools", async () => {
    const created = await fetch(`${apiUrl}/v1/webhook-endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      // An IP literal: public, and checked without a DNS lookup, which this machine cannot make.
      body: JSON.stringify({ url: 'https://93.184.215.14/sluice', events: ['key.created', 'credits.low'], creditsLowThresholdCents: 300 }),
    });
    expect(created.status).toBe(201);
    const endpoint = (await created.json()).data as { id: string };

    for (const path of ['/mcp', '/mcp/web']) {
      const client = await connect(path);
      const listed = await client.callTool({ name: 'sluice_webhook_endpoints_list', arguments: {} });
      expect(listed.structuredContent).toEqual({
        data: {
          endpoints: [
            expect.objectContaining({ id: endpoint.id, url: 'https://93.184.215.14/sluice', events: ['key.created', 'credits.low'], creditsLowThresholdCents: 300, deliveries: [] }),
          ],
        },
      });
      expect(JSON.stringify(listed.structuredContent)).not.toContain('whsec_');
      await client.close();
    }
  });
});
