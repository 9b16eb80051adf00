import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import worker from '../../src/api';
import { exampleOf } from '../../src/api/examples';
import { dataPathsOf } from '../../src/api/routes/data';
import { PLAN_TABLE } from '../../src/core/plans';
import { CONNECTABLE_VENDORS, type ConnectableVendor } from '../../src/services/connections-vendors';
import { MAX_CONNECTIONS_PER_WORKSPACE } from '../../src/services/connections';
import { OPERATIONS } from '../../src/operations';
import { connectionRootPathsOf } from '../../src/api/routes/connections';
import { mcpToolName } from '../../src/core/operation';
import { receivedBy } from '../fakes/dataforseo';
import { FAKE_VENDORS_ORIGIN } from '../fakes/vendor-wire';
import { credit, eventually, json, provision, wallet } from '../support/api';

const SETTINGS = env as unknown as Record<string, string>;

/** A request to the api worker with some of its settings replaced (an installation without a vendor's key, a vendor out of reach). */
async function send(method: string, path: string, key: string, body?: unknown, settings: Record<string, string> = {}) {
  const init: RequestInit = { method, headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await worker.fetch(new Request(`http://sluice.test${path}`, init), { ...env, ...settings } as typeof env, createExecutionContext());
  return { status: response.status, headers: response.headers, body: await json(response), text: '' };
}

/** The credentials the fakes accept: this installation's own settings for the vendor. */
const goodCredentials = (vendor: ConnectableVendor) => Object.fromEntries(vendor.fields.map((field) => [field.name, SETTINGS[field.setting]!]));
const baseUrlSettingOf = (vendor: ConnectableVendor) => vendor.fields[0]!.setting.replace(/_(API_KEY|LOGIN|PASSWORD)$/, '_BASE_URL');

const hunter = CONNECTABLE_VENDORS.find((vendor) => vendor.slug === 'hunter')!;
const hunterOperation = OPERATIONS.find((operation) => operation.upstream?.vendor.id === 'hunter' && operation.method === 'GET' && exampleOf(operation))!;

async function connected(vendor = hunter) {
  const account = await provision({ plan: 'payg' });
  await credit(account.organizationId, { purchasedCents: 100 });
  const created = await send('POST', '/v1/connections', account.key, { vendor: vendor.slug, name: 'ours', credentials: goodCredentials(vendor) });
  expect(created.status).toBe(201);
  return { account, connection: created.body.data as { id: string; hint: string; status: string } };
}

function throughConnection(id: string, key: string, settings: Record<string, string> = {}) {
  const path = dataPathsOf(hunterOperation, `/v1/connections/${id}/data/`)[0]!;
  const query = new URLSearchParams(Object.entries(exampleOf(hunterOperation)!.input).map(([name, value]): [string, string] => [name, String(value)]));
  return send('GET', `${path}?${query}`, key, undefined, settings);
}

/** The vendor answers every Hunter call with this instead (its wire format), while the test runs. */
function hunterAnswers(answer: () => Response) {
  const realFetch = globalThis.fetch;
  vi.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    return request.url.startsWith(`${FAKE_VENDORS_ORIGIN}/hunter/`) ? answer() : realFetch(request);
  });
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('connections: the credential check before anything is stored', () => {
  it.each(CONNECTABLE_VENDORS.map((vendor) => [vendor.slug, vendor] as const))('%s: accepted → 201 ok with a hint; rejected → 400 with the reason; unreachable → 503; nothing stored on failure', async (_, vendor) => {
    const account = await provision({ plan: 'payg' });
    const good = goodCredentials(vendor);
    const wrong = Object.fromEntries(Object.entries(good).map(([name, value]) => [name, `wrong-${value}`]));

    const rejected = await send('POST', '/v1/connections', account.key, { vendor: vendor.slug, credentials: wrong });
    expect(rejected.status).toBe(400);
    expect(rejected.body.error.code).toBe('VALIDATION_ERROR');
    expect(rejected.body.error.message).toMatch(/refused/);
    expect(rejected.body.error.details.map((detail: { field: string }) => detail.field)).toContain(`credentials.${vendor.hintField}`);

    const unreachable = await send('POST', '/v1/connections', account.key, { vendor: vendor.slug, credentials: good }, { [baseUrlSettingOf(vendor)]: 'https://unreachable.fake' });
    expect(unreachable.status).toBe(503);
    expect(unreachable.body.error.code).toBe('PROVIDER_UNAVAILABLE');
    // The reason in plain words: no runtime reference, and not bracketed inside brackets.
    const said = unreachable.body.error.message as string;
    expect(said.startsWith(`${vendor.label} could not be reached to check the credentials: `)).toBe(true);
    expect(said.endsWith('. Nothing was stored; retry shortly.')).toBe(true);
    expect(said).not.toContain('reference =');
    expect(said).not.toMatch(/\([^()]*\(/);
    expect((await send('GET', '/v1/connections', account.key)).body.data.connections).toEqual([]);

    const accepted = await send('POST', '/v1/connections', account.key, { vendor: vendor.slug, credentials: good });
    expect(accepted.status).toBe(201);
    expect(accepted.body.data).toMatchObject({ vendor: vendor.slug, status: 'ok', hint: `…${good[vendor.hintField]!.slice(-4)}` });
    expect((await send('GET', '/v1/connections', account.key)).body.data.connections.map((connection: { id: string }) => connection.id)).toEqual([accepted.body.data.id]);
  });

  it.each([
    ['youtube-data-api', 'i18nRegions', { part: 'snippet', key: 'fake-google-key' }],
    ['xai', 'v1/api-key', {}],
    ['thecompaniesapi', 'v2/user', {}],
  ] as const)("%s: the check is the vendor's documented free call (%s), answered from the fake's recorded shape", async (slug, path, query) => {
    const vendor = CONNECTABLE_VENDORS.find((candidate) => candidate.slug === slug)!;
    const account = await provision({ plan: 'payg' });
    expect((await send('POST', '/v1/connections', account.key, { vendor: slug, credentials: goodCredentials(vendor) })).status).toBe(201);
    const received = await json(await fetch(`${FAKE_VENDORS_ORIGIN}/__last?${new URLSearchParams({ vendor: slug, path })}`));
    expect(received).toMatchObject({ method: 'GET', query });
  });

  it(`keeps at most ${MAX_CONNECTIONS_PER_WORKSPACE} a workspace: two asked at once for the last place get one, and one more is 409 before the vendor is asked`, async () => {
    const account = await provision({ plan: 'payg' });
    const filled = Array.from({ length: MAX_CONNECTIONS_PER_WORKSPACE - 1 }, (_, i) =>
      env.DB.prepare(`INSERT INTO connections (id, workspace_id, vendor, name, credentials_ciphertext, hint, status, created_at, last_checked_at) VALUES (?, ?, 'hunter', 'earlier', 'sealed', '…0000', 'ok', ?, ?)`).bind(
        `con_filled_${crypto.randomUUID()}`, account.workspaceId, new Date(Date.now() - 1000 * (i + 1)).toISOString(), new Date().toISOString()),
    );
    await env.DB.batch(filled);
    const create = () => send('POST', '/v1/connections', account.key, { vendor: 'hunter', credentials: goodCredentials(hunter) });
    const both = await Promise.all([create(), create()]);
    expect(both.map((answer) => answer.status).sort()).toEqual([201, 409]);
    expect(both.find((answer) => answer.status === 409)!.body.error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('delete one first') });

    const asked: string[] = [];
    const realFetch = globalThis.fetch;
    vi.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
      const request = new Request(input, init);
      if (request.url.startsWith(`${FAKE_VENDORS_ORIGIN}/hunter/`)) asked.push(request.url);
      return realFetch(request);
    });
    expect((await create()).status).toBe(409);
    expect(asked).toEqual([]);
    const listed = (await send('GET', '/v1/connections', account.key)).body.data.connections as { id: string }[];
    expect(listed).toHaveLength(MAX_CONNECTIONS_PER_WORKSPACE);
    expect((await send('DELETE', `/v1/connections/${listed[0]!.id}`, account.key)).status).toBe(200);
    expect((await create()).status).toBe(201);
    expect(asked).toHaveLength(1);
  });

  it.each(CONNECTABLE_VENDORS.map((vendor) => [vendor.slug, vendor] as const))(
    '%s: a credential that is not printable ASCII is 400 naming the field, not a 500 or a 503: refused as it is, or refused by the vendor when sent encoded',
    async (_, vendor) => {
      const account = await provision({ plan: 'payg' });
      const field = vendor.fields.find((candidate) => candidate.name === vendor.hintField)!;
      for (const bad of ['pass€word', 'line\nbreak']) {
        const answer = await send('POST', '/v1/connections', account.key, { vendor: vendor.slug, credentials: { ...goodCredentials(vendor), [field.name]: bad } });
        expect([answer.status, answer.body.error.code], JSON.stringify(bad)).toEqual([400, 'VALIDATION_ERROR']);
        const detail = (answer.body.error.details as { field: string; message: string }[]).find((candidate) => candidate.field === `credentials.${field.name}`)!;
        expect(detail, JSON.stringify(answer.body.error.details)).toBeDefined();
        // HTTP Basic's base64 carries any text: those reach the vendor, which refuses the wrong password.
        if (field.encoded) expect(detail.message).not.toBe('Printable ASCII characters only.');
        else expect(detail.message).toBe('Printable ASCII characters only.');
      }
    },
  );

  it('names a missing credential field and a vendor that is not connectable', async () => {
    const account = await provision({ plan: 'payg' });
    const missing = await send('POST', '/v1/connections', account.key, { vendor: 'dataforseo', credentials: { login: 'someone' } });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details.map((detail: { field: string }) => detail.field)).toEqual(['credentials.password']);
    const unknown = await send('POST', '/v1/connections', account.key, { vendor: 'nobody', credentials: {} });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details[0].field).toBe('vendor');
  });

  it('lists the vendors with their fields and operations', async () => {
    const account = await provision({ plan: 'payg' });
    const vendors = (await send('GET', '/v1/connections/vendors', account.key)).body.data.vendors;
    expect(vendors.find((vendor: { slug: string }) => vendor.slug === 'dataforseo')).toMatchObject({ fields: [{ name: 'login', secret: false }, { name: 'password', secret: true }] });
    expect(vendors.find((vendor: { slug: string }) => vendor.slug === 'hunter').operations).toContain(`${hunterOperation.platform}/${hunterOperation.name}`);
  });
});

describe("connections: each one-key vendor's operations through its connection", () => {
  it('answers with the connection’s key alone (the installation’s blanked), marked with the connection', async () => {
    const account = await provision({ plan: 'payg' });
    await credit(account.organizationId, { purchasedCents: 100 });
    for (const vendor of CONNECTABLE_VENDORS.filter((candidate) => candidate.fields.length === 1 && candidate.slug !== 'firecrawl')) {
      const created = await send('POST', '/v1/connections', account.key, { vendor: vendor.slug, credentials: goodCredentials(vendor) });
      expect(created.status, vendor.slug).toBe(201);
      const operation = vendor.operations.find((candidate) => exampleOf(candidate))!;
      const input = exampleOf(operation)!.input;
      const path = dataPathsOf(operation, `/v1/connections/${created.body.data.id}/data/`)[0]!;
      const blanked = { [vendor.fields[0]!.setting]: '' };
      const answer =
        operation.method === 'GET'
          ? await send('GET', `${path}?${new URLSearchParams(Object.entries(input).map(([name, value]): [string, string] => [name, String(value)]))}`, account.key, undefined, blanked)
          : await send('POST', path, account.key, input, blanked);
      expect({ vendor: vendor.slug, operation: operation.name, status: answer.status }).toEqual({ vendor: vendor.slug, operation: operation.name, status: 200 });
      expect(answer.body.meta.connectionId).toBe(created.body.data.id);
    }
  });
});

describe('connections: secrets stay secret', () => {
  it('never answers, logs or stores in clear a credential', async () => {
    const logged: string[] = [];
    for (const level of ['log', 'error', 'warn', 'info', 'debug'] as const) vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(' ')));
    const secret = SETTINGS.DATAFORSEO_PASSWORD!;
    const dataforseo = CONNECTABLE_VENDORS.find((vendor) => vendor.slug === 'dataforseo')!;
    const { account, connection } = await connected(dataforseo);
    const answers = [
      await send('GET', '/v1/connections', account.key),
      await send('GET', `/v1/connections/${connection.id}`, account.key),
      await send('POST', `/v1/connections/${connection.id}/check`, account.key),
      await send('POST', '/v1/connections', account.key, { vendor: 'dataforseo', credentials: { login: SETTINGS.DATAFORSEO_LOGIN, password: `${secret}-wrong` } }),
    ];
    for (const answer of answers) expect(JSON.stringify(answer.body)).not.toContain(secret);
    expect(logged.join('\n')).not.toContain(secret);
    const row = await env.DB.prepare('SELECT * FROM connections WHERE id = ?').bind(connection.id).first();
    expect(row).not.toBeNull();
    expect(JSON.stringify(row)).not.toContain(secret);
    expect(JSON.stringify(row)).not.toContain(btoa(secret));
  });
});

describe('connections: calls through them', () => {
  it("sends the workspace's own credentials and charges only the plan's fee", async () => {
    const { account, connection } = await connected();
    const before = await wallet(account.organizationId);
    // Without a Hunter key of its own, the installation can only answer with the connection's.
    const direct = await send('GET', `${hunterOperation.paths.find((path) => path.startsWith('/v1/data/'))}?${new URLSearchParams(exampleOf(hunterOperation)!.input as Record<string, string>)}`, account.key, undefined, { HUNTER_API_KEY: '' });
    expect(direct.status).toBe(503);
    const answer = await throughConnection(connection.id, account.key, { HUNTER_API_KEY: '' });
    expect(answer.status).toBe(200);
    expect(answer.body.meta).toMatchObject({ costCents: PLAN_TABLE.payg.connectionFeeCents, connectionId: connection.id });
    expect(hunterOperation.price.display.cents).not.toBe(PLAN_TABLE.payg.connectionFeeCents);
    const after = await eventually(() => wallet(account.organizationId), (state) => state.purchasedBalanceCents !== before.purchasedBalanceCents);
    expect(before.purchasedBalanceCents - after.purchasedBalanceCents).toBe(PLAN_TABLE.payg.connectionFeeCents);
    const received = await json(await fetch(`${FAKE_VENDORS_ORIGIN}/__last?${new URLSearchParams({ vendor: 'hunter', path: hunterOperation.upstream!.endpoint.path })}`));
    expect(received.query.api_key).toBe(SETTINGS.HUNTER_API_KEY);
    const row = await eventually(
      () => env.DB.prepare('SELECT connection_id AS connectionId, cost_units AS costUnits FROM usage WHERE workspace_id = ? AND status = 200').bind(account.workspaceId).first<{ connectionId: string }>(),
      (found) => found !== null,
    );
    expect(row).toMatchObject({ connectionId: connection.id });
    const usage = await send('GET', '/v1/usage', account.key);
    expect(usage.body.data.rows.find((entry: { status: number }) => entry.status === 200)).toMatchObject({ connectionId: connection.id, sandbox: false });
  });

  it("a vendor's 429 is the spec's 429 PROVIDER_ERROR with the vendor's Retry-After, saying a plan change will not help; not charged", async () => {
    const { account, connection } = await connected();
    const before = await wallet(account.organizationId);
    hunterAnswers(() => Response.json({ errors: [{ id: 'too_many_requests', code: 429, details: 'You have reached the rate limit of 15 requests per second.' }] }, { status: 429, headers: { 'retry-after': '17' } }));
    const answer = await throughConnection(connection.id, account.key);
    expect(answer.status).toBe(429);
    expect(answer.body.error).toMatchObject({ code: 'PROVIDER_ERROR', retryAfter: 17 });
    expect(answer.headers.get('retry-after')).toBe('17');
    expect(answer.body.error.message).toMatch(/own account/);
    expect(answer.body.error.message).toMatch(/plan change will not help/);
    vi.restoreAllMocks();
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(before.purchasedBalanceCents);
  });

  it('the vendor refusing the credentials is PROVIDER_ERROR naming the connection, which is marked rejected', async () => {
    const { account, connection } = await connected();
    hunterAnswers(() => Response.json({ errors: [{ id: 'authentication_failed', code: 401, details: 'No user found for the API key supplied' }] }, { status: 401 }));
    const answer = await throughConnection(connection.id, account.key);
    expect(answer.status).toBe(401);
    expect(answer.body.error.code).toBe('PROVIDER_ERROR');
    expect(answer.body.error.message).toContain(connection.id);
    vi.restoreAllMocks();
    expect((await send('GET', `/v1/connections/${connection.id}`, account.key)).body.data.status).toBe('rejected');
    const checked = await send('POST', `/v1/connections/${connection.id}/check`, account.key);
    expect(checked.body.data.status).toBe('ok');
  });

  it("the vendor's account out of credits passes as 402 PROVIDER_ERROR, not UPSTREAM_CREDITS_EXHAUSTED", async () => {
    const { account, connection } = await connected();
    hunterAnswers(() => Response.json({ errors: [{ id: 'too_many_requests', code: 429, details: "You've reached your usage limit for this month. Upgrade your plan." }] }, { status: 429 }));
    const answer = await throughConnection(connection.id, account.key);
    expect(answer.status).toBe(402);
    expect(answer.body.error.code).toBe('PROVIDER_ERROR');
  });

  it('an operation the vendor does not serve is 404 ENDPOINT_NOT_FOUND naming the vendors that do', async () => {
    const { account, connection } = await connected();
    const answer = await send('POST', `/v1/connections/${connection.id}/data/seo/serp`, account.key, { keyword: 'shoes' });
    expect(answer.status).toBe(404);
    expect(answer.body.error.code).toBe('ENDPOINT_NOT_FOUND');
    expect(answer.body.error.message).toMatch(/dataforseo/);
  });

  it("another workspace's connection is 404 on every route", async () => {
    const { connection } = await connected();
    const stranger = await provision({ plan: 'payg' });
    for (const [method, path] of [
      ['GET', `/v1/connections/${connection.id}`],
      ['DELETE', `/v1/connections/${connection.id}`],
      ['POST', `/v1/connections/${connection.id}/check`],
    ] as const) {
      expect({ method, path, status: (await send(method, path, stranger.key)).status }).toEqual({ method, path, status: 404 });
    }
    expect((await throughConnection(connection.id, stranger.key)).status).toBe(404);
    expect((await send('GET', '/v1/connections', stranger.key)).body.data.connections).toEqual([]);
  });

  it('DELETE removes the connection and its credentials', async () => {
    const { account, connection } = await connected();
    expect((await send('DELETE', `/v1/connections/${connection.id}`, account.key)).status).toBe(200);
    expect((await send('GET', `/v1/connections/${connection.id}`, account.key)).status).toBe(404);
    expect(await env.DB.prepare('SELECT id FROM connections WHERE id = ?').bind(connection.id).first()).toBeNull();
  });

  it('GET /v1/plans shows each plan’s connection fee', async () => {
    const plans = (await send('GET', '/v1/plans', 'none')).body.data.plans;
    expect(plans.find((plan: { id: string }) => plan.id === 'payg').connectionFeeCents).toBe(PLAN_TABLE.payg.connectionFeeCents);
  });
});

/** Every root tool path (/scrape, /serp, ...) as served through a connection, from the registry. */
const ROOT_TOOLS = OPERATIONS.flatMap((operation) => connectionRootPathsOf(operation).map((path) => [path.replace(/^.*:connectionId/, ''), operation, path] as const));
const servingVendorsOf = (operation: (typeof OPERATIONS)[number]) => CONNECTABLE_VENDORS.filter((vendor) => vendor.operations.includes(operation)).map((vendor) => vendor.slug);

describe('connections: the root web and SEO tools through them', () => {
  it('there are some: every root tool path of the registry has its twin under /v1/connections/{id}', () => {
    expect(ROOT_TOOLS.map(([root]) => root)).toEqual(expect.arrayContaining(['/scrape', '/serp']));
    expect(ROOT_TOOLS.length).toBe(OPERATIONS.flatMap((operation) => operation.paths.filter((path) => !path.startsWith('/v1/'))).length);
  });

  it("each through a connection whose vendor does not serve it (Hunter's) is 404 ENDPOINT_NOT_FOUND naming the vendors that do", async () => {
    const { account, connection } = await connected();
    for (const [root, operation, path] of ROOT_TOOLS) {
      const url = path.replace(':connectionId', connection.id);
      const answer = operation.method === 'GET' ? await send('GET', url, account.key) : await send('POST', url, account.key, exampleOf(operation)!.input);
      expect({ root, status: answer.status, code: answer.body.error?.code }).toEqual({ root, status: 404, code: 'ENDPOINT_NOT_FOUND' });
      for (const slug of servingVendorsOf(operation)) expect(answer.body.error.message, root).toContain(slug);
    }
  });

  it("POST /v1/connections/{id}/serp: the root tool's input and answer, the DataForSEO account's credentials, only the fee, a usage row marked with the connection", async () => {
    const dataforseo = CONNECTABLE_VENDORS.find((vendor) => vendor.slug === 'dataforseo')!;
    const { account, connection } = await connected(dataforseo);
    const serp = OPERATIONS.find((operation) => operation.paths.includes('/serp'))!;
    const keyword = `shoes ${connection.id.slice(-8)}`;
    const input = { ...exampleOf(serp)!.input, keyword };
    const direct = await send('POST', '/serp', account.key, input);
    expect(direct.status).toBe(200);
    const before = await wallet(account.organizationId);
    // An installation without a DataForSEO password of its own answers only with the connection's.
    const through = await send('POST', `/v1/connections/${connection.id}/serp`, account.key, input, { DATAFORSEO_PASSWORD: '' });
    expect(through.status).toBe(200);
    expect(through.body.data).toEqual(direct.body.data);
    expect(through.body.meta).toMatchObject({ costCents: PLAN_TABLE.payg.connectionFeeCents, connectionId: connection.id });
    expect((await receivedBy('/v3/serp/google/organic/live/advanced', keyword)).last?.authorization).toBe(`Basic ${btoa(`${SETTINGS.DATAFORSEO_LOGIN}:${SETTINGS.DATAFORSEO_PASSWORD}`)}`);
    const after = await eventually(() => wallet(account.organizationId), (state) => state.purchasedBalanceCents !== before.purchasedBalanceCents);
    expect(before.purchasedBalanceCents - after.purchasedBalanceCents).toBe(PLAN_TABLE.payg.connectionFeeCents);
    const rows = await eventually(
      () => env.DB.prepare('SELECT connection_id AS connectionId FROM usage WHERE workspace_id = ? AND status = 200 ORDER BY created_at').bind(account.workspaceId).all<{ connectionId: string | null }>(),
      (found) => found.results.length === 2,
    );
    expect(rows.results.map((row) => row.connectionId).sort()).toEqual([connection.id, null].sort());
  });

  it("the vendor's throttle on a root tool is the spec's 429 PROVIDER_ERROR saying a plan change will not help; not charged", async () => {
    const dataforseo = CONNECTABLE_VENDORS.find((vendor) => vendor.slug === 'dataforseo')!;
    const { account, connection } = await connected(dataforseo);
    const before = await wallet(account.organizationId);
    const answer = await send('POST', `/v1/connections/${connection.id}/serp`, account.key, { keyword: 'shoes http-429' });
    expect(answer.status).toBe(429);
    expect(answer.body.error).toMatchObject({ code: 'PROVIDER_ERROR', retryAfter: expect.any(Number) });
    expect(answer.headers.get('retry-after')).toBe(String(answer.body.error.retryAfter));
    expect(answer.body.error.message).toMatch(/plan change will not help/);
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(before.purchasedBalanceCents);
  });

  it("a scrape through a Firecrawl connection is checked by Firecrawl's rules, not the built-in scraper's, wherever the installation scrapes", async () => {
    const firecrawl = CONNECTABLE_VENDORS.find((vendor) => vendor.slug === 'firecrawl')!;
    const { account, connection } = await connected(firecrawl);
    // A script action the built-in scraper does not run; Firecrawl does.
    const input = { url: `https://acme.example/${connection.id}`, actions: [{ type: 'executeJavascript', script: 'document.title' }] };
    const builtin = { WEB_PROVIDER: 'builtin' };
    const refused = await send('POST', '/scrape', account.key, input, builtin);
    expect(refused.status).toBe(400);
    const through = await send('POST', `/v1/connections/${connection.id}/scrape`, account.key, input, builtin);
    expect(through.status, JSON.stringify(through.body)).toBe(200);
    expect(through.body.meta).toMatchObject({ connectionId: connection.id });
  });

  it("Firecrawl's 403 for a site it does not scrape passes through as the site's refusal, and leaves the connection ok", async () => {
    const firecrawl = CONNECTABLE_VENDORS.find((vendor) => vendor.slug === 'firecrawl')!;
    const { account, connection } = await connected(firecrawl);
    const refused = await send('POST', `/v1/connections/${connection.id}/scrape`, account.key, { url: `https://fail-403.example/${connection.id}` });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'PROVIDER_ERROR', message: expect.stringContaining('This website is no longer supported') });
    expect((await send('GET', `/v1/connections/${connection.id}`, account.key)).body.data.status).toBe('ok');
  });

  it('an Idempotency-Key used through a connection names that call: sent again on the root tool it is 409, not a replay of the other account\'s answer', async () => {
    const dataforseo = CONNECTABLE_VENDORS.find((vendor) => vendor.slug === 'dataforseo')!;
    const { account, connection } = await connected(dataforseo);
    const serp = OPERATIONS.find((operation) => operation.paths.includes('/serp'))!;
    const input = { ...exampleOf(serp)!.input, keyword: `boots ${connection.id.slice(-8)}` };
    const withKey = (path: string) =>
      worker.fetch(
        new Request(`http://sluice.test${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json', 'idempotency-key': `key-${connection.id}` },
          body: JSON.stringify(input),
        }),
        env,
        createExecutionContext(),
      );
    expect((await withKey(`/v1/connections/${connection.id}/serp`)).status).toBe(200);
    const replayed = await withKey(`/v1/connections/${connection.id}/serp`);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    const direct = await withKey('/serp');
    expect(direct.status).toBe(409);
    expect((await json(direct)).error.code).toBe('CONFLICT');
  });

  it('validates like the root tool: bad input is 400 naming the field, never a charge', async () => {
    const dataforseo = CONNECTABLE_VENDORS.find((vendor) => vendor.slug === 'dataforseo')!;
    const { account, connection } = await connected(dataforseo);
    const answer = await send('POST', `/v1/connections/${connection.id}/serp`, account.key, { keyword: '' });
    expect(answer.status).toBe(400);
    expect(answer.body.error.details.map((detail: { field: string }) => detail.field)).toContain('keyword');
  });

  it('are documented: each its own operation at /v1/connections/{connectionId}/<tool>, with the root tool’s input', async () => {
    const doc = await json(await worker.fetch(new Request('http://sluice.test/openapi.json'), env, createExecutionContext()));
    for (const [root, operation] of ROOT_TOOLS) {
      const documented = doc.paths[`/v1/connections/{connectionId}${root}`]?.[operation.method.toLowerCase()];
      expect(documented?.operationId, root).toBe(`${mcpToolName(operation)}_through_connection`);
      expect(documented.responses['404'], root).toBeDefined();
      expect(JSON.stringify(documented.requestBody ?? documented.parameters), root).toBe(JSON.stringify(doc.paths[root][operation.method.toLowerCase()].requestBody ?? doc.paths[root][operation.method.toLowerCase()].parameters));
    }
  });
});
