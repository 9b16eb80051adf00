import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApiApp, McpGateway } from '../../src/api';
import { centsFromUnits } from '../../src/core/money';
import mcpWorker from '../../src/mcp/index';
import { OPERATIONS } from '../../src/operations';
import { mcpToolName, operationId, type Operation } from '../../src/core/operation';
import { vendorParameters } from '../../src/providers/vendor';
import { FAILURE_CLASSES, FAKE_VENDORS_ORIGIN, fixtureName, VENDOR_FAKES, type FailureClass } from '../fakes/vendor-wire';
import { credit, json, provision, type Provisioned, wallet } from '../support/api';

/**
 * Generated from the registry: every operation served by a vendor table row is called with its own example
 * against the vendor's fake, through REST and through MCP, and with each class of vendor failure. Adding an
 * operation adds it here; there is no list of operations to keep.
 */
const VENDOR_OPERATIONS = OPERATIONS.filter((operation) => operation.upstream !== undefined);
// Vite inlines every fixture at build time, so the recorded vendor answers are readable inside workerd.
const FIXTURES = import.meta.glob<unknown>('../fixtures/*/*.json', { eager: true, import: 'default' });
const FUNDS_CENTS = 100_000;
const app = buildApiApp();

type Vendored = Operation & Required<Pick<Operation, 'upstream' | 'example'>>;

/** The worker's settings pointed at the vendor's fake, or at one class of its failures. */
function settingsFor(operation: Vendored, failure?: FailureClass) {
  const { vendor } = operation.upstream;
  const base = `${FAKE_VENDORS_ORIGIN}/${vendor.id}${failure ? `/~${failure}` : ''}`;
  return { ...env, ...VENDOR_FAKES[vendor.id]!.settings, [vendor.baseUrlSetting]: base };
}

function restRequest(operation: Vendored, key: string): Request {
  const path = operation.paths[0];
  const headers = { authorization: `Bearer ${key}` };
  if (operation.method === 'GET') {
    const query = new URLSearchParams(Object.entries(operation.example).map(([name, value]): [string, string] => [name, String(value)]));
    return new Request(`http://sluice.test${path}?${query}`, { headers });
  }
  return new Request(`http://sluice.test${path}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(operation.example) });
}

async function rest(operation: Vendored, key: string, settings = settingsFor(operation)) {
  const context = createExecutionContext();
  const response = await app.fetch(restRequest(operation, key), settings, context);
  await waitOnExecutionContext(context);
  return { response, body: await json(response) };
}

/** An MCP tool call through the mcp worker's facet for the slug, whose pipeline is the api worker's gateway. */
async function mcpCall(operation: Vendored, token: string) {
  const context = createExecutionContext();
  const gateway = new McpGateway(context, settingsFor(operation));
  const request = new Request(`http://mcp.test/mcp/${operation.platform}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: mcpToolName(operation), arguments: operation.example } }),
  });
  const response = await mcpWorker.fetch(request, { API: gateway, MCP_URL: 'http://mcp.test/mcp', APP_URL: 'http://app.test' }, context);
  await waitOnExecutionContext(context);
  return (await json(response)).result as { isError?: boolean; structuredContent: { data: unknown; meta: { costCents: number } } };
}

/** The vendor's payload for the example: its fixture, as the vendor's own reading of a success gives it. */
function expectedData(operation: Vendored): unknown {
  const { vendor, endpoint } = operation.upstream;
  const fixture = FIXTURES[`../fixtures/${vendor.id}/${fixtureName(endpoint.path)}`];
  expect(fixture, `fixture for ${vendor.id} ${endpoint.path}`).toBeDefined();
  const reading = vendor.read(fixture);
  if (!reading.ok) throw new Error(`The fixture of ${operationId(operation)} reads as a failure`);
  return reading.data;
}

/** What the call costs: the registry's own price for the example and the answer. */
function priceOf(operation: Vendored, data: unknown): number {
  const input = operation.input.parse(operation.example);
  return centsFromUnits(Math.min(operation.price.quote(input), operation.price.settle(input, { data })));
}

/**
 * Funded accounts per slug: one for REST, one for MCP, one for failures, so no call is answered from the cache
 * another leg filled. The business plan's window (600 a minute) holds a slug's calls.
 */
const accounts = new Map<string, Promise<{ rest: Provisioned; mcp: Provisioned; failures: Provisioned }>>();
function accountsFor(platform: string) {
  if (!accounts.has(platform)) {
    accounts.set(
      platform,
      (async () => {
        const [rest, mcp, failures] = await Promise.all([provision({ plan: 'business' }), provision({ plan: 'business', scope: 'workspace_mcp' }), provision({ plan: 'business' })]);
        await Promise.all([rest, mcp, failures].map((account) => credit(account.organizationId, { purchasedCents: FUNDS_CENTS })));
        return { rest, mcp, failures };
      })(),
    );
  }
  return accounts.get(platform)!;
}

/** What the organization can spend: the plan's allowance left (spent first) and the purchased balance. */
async function spendable(organizationId: string): Promise<number> {
  const balance = await wallet(organizationId);
  return balance.subscriptionRemainingCents + balance.purchasedBalanceCents;
}

let catalog: Record<string, { operations: { name: string; mcpTool: string; price: { cents: number } }[] }>;
let reference: { paths: Record<string, Record<string, { description: string }>> };
beforeAll(async () => {
  const platforms = (await json(await app.fetch(new Request('http://sluice.test/v1/platforms'), env, createExecutionContext()))).data.platforms;
  catalog = Object.fromEntries(platforms.map((platform: { slug: string }) => [platform.slug, platform]));
  reference = await json(await app.fetch(new Request('http://sluice.test/openapi.json'), env, createExecutionContext()));
});

it('walks the seven social and lead slugs', () => {
  expect(new Set(VENDOR_OPERATIONS.map((operation) => operation.platform))).toEqual(new Set(['linkedin', 'youtube', 'tiktok', 'x', 'instagram', 'facebook', 'leads']));
  expect(VENDOR_OPERATIONS.length).toBeGreaterThanOrEqual(50);
});

describe.each(VENDOR_OPERATIONS.map((operation) => [operationId(operation), operation as Vendored] as const))('%s', (_, operation) => {
  it('has an example its own schema accepts, and its price in the catalog and the reference', () => {
    expect(operation.input.safeParse(operation.example).success).toBe(true);
    const listed = catalog[operation.platform]!.operations.find((entry) => entry.name === operation.name);
    expect(listed).toMatchObject({ mcpTool: mcpToolName(operation), price: operation.price.display });
    expect(listed!.price.cents).toBeGreaterThan(0);
    const documented = reference.paths[operation.paths[0]]![operation.method.toLowerCase()]!;
    expect(documented.description).toContain(`Cost: ${operation.price.display.cents} cent`);
  });

  it('answers its example through REST with the vendor payload in its declared output, billed its price', async () => {
    const { rest: account } = await accountsFor(operation.platform);
    const before = await spendable(account.organizationId);
    const { response, body } = await rest(operation, account.key);
    expect(response.status, JSON.stringify(body.error)).toBe(200);
    expect(body.data).toEqual(expectedData(operation));
    const parsed = operation.output.safeParse(body.data);
    expect(parsed.success, parsed.error?.message).toBe(true);

    const price = priceOf(operation, body.data);
    expect(price).toBeGreaterThan(0);
    expect(body.meta).toMatchObject({ costCents: price, cached: false });
    expect(await spendable(account.organizationId)).toBeCloseTo(before - price, 6);

    const { vendor, endpoint } = operation.upstream;
    const received = await json(await fetch(`${FAKE_VENDORS_ORIGIN}/__last?${new URLSearchParams({ vendor: vendor.id, path: endpoint.path })}`));
    const sent = vendorParameters(endpoint, operation.input.parse(operation.example));
    for (const [name, value] of Object.entries(sent)) {
      if (received.method === 'GET') expect(received.query[name], name).toBe(String(value));
      else expect(received.body[name], name).toEqual(value);
    }
  });

  it(`answers the same through MCP, billed its price`, async () => {
    const { mcp: account } = await accountsFor(operation.platform);
    const before = await spendable(account.organizationId);
    const result = await mcpCall(operation, account.key);
    expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
    expect(result.structuredContent.data).toEqual(expectedData(operation));
    const price = priceOf(operation, result.structuredContent.data);
    expect(result.structuredContent.meta.costCents).toBe(price);
    expect(await spendable(account.organizationId)).toBeCloseTo(before - price, 6);
  });

  it('bills zero for every class of vendor failure, and for a vendor without credentials', async () => {
    const { failures: account } = await accountsFor(operation.platform);
    const before = await wallet(account.organizationId);
    const classes = (Object.keys(FAILURE_CLASSES) as FailureClass[]).filter((failure) => failure !== 'rejected' || VENDOR_FAKES[operation.upstream.vendor.id]!.rejected);
    // The classes run side by side: each is its own call, and the account's window holds them all.
    const outcomes = await Promise.all(classes.map(async (failure) => ({ failure, ...(await rest(operation, account.key, settingsFor(operation, failure))) })));
    for (const { failure, response, body } of outcomes) {
      expect([response.status, body.error?.code], `${failure}: ${JSON.stringify(body)}`).toEqual([FAILURE_CLASSES[failure].status, FAILURE_CLASSES[failure].code]);
    }
    const { vendor } = operation.upstream;
    const { response, body } = await rest(operation, account.key, { ...settingsFor(operation), [vendor.keySetting]: undefined });
    expect([response.status, body.error.code]).toEqual([503, 'PROVIDER_UNAVAILABLE']);
    expect(body.error.message).toContain(vendor.keySetting);
    expect(await wallet(account.organizationId)).toMatchObject({ purchasedBalanceCents: before.purchasedBalanceCents, subscriptionRemainingCents: before.subscriptionRemainingCents, heldCents: 0 });
  });
});
