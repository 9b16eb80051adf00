import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { McpGateway } from '../../src/api/mcp-gateway';
import { exampleOf } from '../../src/api/examples';
import { hashKey } from '../../src/core/keys';
import { mcpToolName } from '../../src/core/operation';
import { PLAN_TABLE } from '../../src/core/plans';
import { listTools } from '../../src/mcp/tool-listing';
import { DATA_TOOLS } from '../../src/operations/tools';
import { OPERATIONS } from '../../src/operations';
import { findPrincipal } from '../../src/services/accounts';
import { CONNECTABLE_VENDORS } from '../../src/services/connections-vendors';
import { credit, json, provision, call } from '../support/api';

const SETTINGS = env as unknown as Record<string, string>;
const hunterOperation = OPERATIONS.find((operation) => operation.upstream?.vendor.id === 'hunter' && exampleOf(operation))!;

/** A tool call through the api worker's gateway, in an installation without a Hunter key of its own. */
async function callTool(key: string, input: Record<string, unknown>) {
  const context = createExecutionContext();
  const gateway = new McpGateway(context, { ...env, HUNTER_API_KEY: '' } as typeof env);
  const principal = (await findPrincipal(env.DB, await hashKey(key)))!;
  const outcome = await gateway.callTool(principal, mcpToolName(hunterOperation), input, 'req_mcp_connection');
  await waitOnExecutionContext(context);
  return outcome;
}

async function connectedAccount() {
  const account = await provision({ plan: 'payg' });
  await credit(account.organizationId, { purchasedCents: 50 });
  const created = await call('/v1/connections', {
    method: 'POST',
    headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ vendor: 'hunter', credentials: { apiKey: SETTINGS.HUNTER_API_KEY } }),
  });
  expect(created.status).toBe(201);
  return { account, connectionId: (await json(created)).data.id as string };
}

describe('connections on MCP: a `connection` argument', () => {
  it('lists the argument on the tools a connectable vendor serves, and only there', () => {
    const tools = listTools(DATA_TOOLS);
    const served = new Set(CONNECTABLE_VENDORS.flatMap((vendor) => vendor.operations.map(mcpToolName)));
    for (const tool of tools) {
      const connection = (tool.inputSchema.properties as Record<string, unknown>).connection;
      if (served.has(tool.name)) expect(connection, tool.name).toMatchObject({ type: 'string' });
      else expect(connection, tool.name).toBeUndefined();
    }
    expect(served.has(mcpToolName(hunterOperation))).toBe(true);
  });

  it("sends the tool call with the connection's credentials, charged the plan's fee", async () => {
    const { account, connectionId } = await connectedAccount();
    const input = exampleOf(hunterOperation)!.input;
    const without = await callTool(account.key, input);
    expect(without).toMatchObject({ ok: false, error: { code: 'PROVIDER_UNAVAILABLE' } });
    const through = await callTool(account.key, { ...input, connection: connectionId });
    expect(through).toMatchObject({ ok: true, meta: { connectionId, costCents: PLAN_TABLE.payg.connectionFeeCents } });
  });

  it("refuses another workspace's connection as not found, and a connection that is not a string", async () => {
    const { connectionId } = await connectedAccount();
    const stranger = await provision({ plan: 'payg' });
    const input = exampleOf(hunterOperation)!.input;
    expect(await callTool(stranger.key, { ...input, connection: connectionId })).toMatchObject({ ok: false, status: 404 });
    expect(await callTool(stranger.key, { ...input, connection: 7 })).toMatchObject({ ok: false, status: 400, error: { code: 'VALIDATION_ERROR' } });
  });
});
