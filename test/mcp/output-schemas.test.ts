import { Validator, type Schema } from '@cfworker/json-schema';
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { McpGateway } from '../../src/api';
import { exampleOf } from '../../src/api/examples';
import { mcpToolName, operationId, type Operation } from '../../src/core/operation';
import mcpWorker from '../../src/mcp/index';
import { OPERATIONS } from '../../src/operations';
import { FAKE_VENDORS_ORIGIN, VENDOR_FAKES } from '../fakes/vendor-wire';
import { credit, json, provision, type Provisioned } from '../support/api';

/**
 * Generated from the registry: every data tool is called with its operation's example against the fakes, and what
 * it answers in `structuredContent` must validate against the `outputSchema` its listing declares. The MCP SDK's
 * client checks exactly that and throws when it fails (`Client.callTool`: "Structured content does not match the
 * tool's output schema"), so a mismatch makes the tool unusable in it however right the data is. The schemas are
 * read as draft 7, as the SDK's validator reads a schema that names no dialect.
 */

/** Operations no example can make succeed here, and why. */
const NOT_CALLED: Record<string, string> = {
  'youtube.screenshot': 'renders in a browser: the workers tests have no BROWSER binding (test/node/render.test.ts covers it)',
};

const CALLED = OPERATIONS.filter((operation) => !(operationId(operation) in NOT_CALLED) && exampleOf(operation) !== undefined);

/** The worker's settings: a vendor row's operation points at the generic vendor fake; the rest use the test env's fakes. */
function settingsFor(operation: Operation) {
  if (!operation.upstream) return env;
  const { vendor } = operation.upstream;
  return { ...env, ...VENDOR_FAKES[vendor.id]!.settings, [vendor.baseUrlSetting]: `${FAKE_VENDORS_ORIGIN}/${vendor.id}` };
}

async function rpc(operation: Operation, token: string, method: string, params: unknown) {
  const context = createExecutionContext();
  const gateway = new McpGateway(context, settingsFor(operation));
  const request = new Request(`${new URL(env.MCP_URL).origin}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const response = await mcpWorker.fetch(request, { ...env, API: gateway }, context);
  await waitOnExecutionContext(context);
  return (await json(response)) as { result: Record<string, unknown> };
}

let account: Provisioned;
let outputSchemas: Map<string, Schema>;
beforeAll(async () => {
  account = await provision({ plan: 'business', scope: 'workspace_mcp' });
  await credit(account.organizationId, { purchasedCents: 100_000 });
  const listed = (await rpc(CALLED[0]!, account.key, 'tools/list', {})).result.tools as { name: string; outputSchema: Schema }[];
  outputSchemas = new Map(listed.map((tool) => [tool.name, tool.outputSchema]));
});

it('calls every data tool but those it names, each with an example', () => {
  expect(CALLED.length + Object.keys(NOT_CALLED).length).toBe(OPERATIONS.length);
});

describe.each(CALLED.map((operation) => [operationId(operation), operation] as const))('%s', (_, operation) => {
  it('answers structuredContent its outputSchema accepts', async () => {
    const answer = (await rpc(operation, account.key, 'tools/call', { name: mcpToolName(operation), arguments: exampleOf(operation)!.input })).result;
    expect(answer.isError, JSON.stringify(answer.content)).toBeFalsy();
    const schema = outputSchemas.get(mcpToolName(operation));
    expect(schema).toBeDefined();
    const validation = new Validator(schema!, '7', false).validate(answer.structuredContent);
    expect(validation.errors.map((error) => `${error.instanceLocation}: ${error.error}`)).toEqual([]);
  });
});
