import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { McpGateway } from '../../src/api/mcp-gateway';
import mcpApp from '../../src/mcp/index';
import { PROGRESS_EVERY_MS } from '../../src/mcp/progress';
import { ops, provision } from '../support/api';

afterEach(() => {
  vi.useRealTimers();
});

/** A workspace's MCP bearer, and its organization's wallet with money in it. */
async function mcpToken(): Promise<string> {
  const account = await provision({ plan: 'payg' });
  await ops('POST', `/organizations/${account.organizationId}/wallet/credit`, { purchasedCents: 100 });
  return (await ops('POST', '/keys', { workspaceId: account.workspaceId, scope: 'workspace_mcp', name: 'mcp' })).body.data.key;
}

/**
 * A tools/call through the mcp worker, whose api worker is the real gateway with its answer held back until
 * `release` is called: the call is still running for as long as the test wants.
 */
function heldCall(token: string, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const context = createExecutionContext();
  const gateway = new McpGateway(context, env);
  const api = {
    authenticate: (bearerToken: string) => gateway.authenticate(bearerToken),
    callTool: async (...args: Parameters<McpGateway['callTool']>) => (await held, gateway.callTool(...args)),
    callWorkspaceTool: async (...args: Parameters<McpGateway['callWorkspaceTool']>) => (await held, gateway.callWorkspaceTool(...args)),
  };
  const request = new Request(`${new URL(env.MCP_URL).origin}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) } }),
  });
  const answered = Promise.resolve(mcpApp.fetch(request, { ...env, API: api }, context));
  return { answered, release, done: () => waitOnExecutionContext(context) };
}

/** The JSON-RPC messages of an event stream, one at a time as they arrive, with the server's event framing checked. */
function messagesOf(response: Response) {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  return async function next(): Promise<any> {
    for (;;) {
      const end = buffered.indexOf('\n\n');
      if (end >= 0) {
        const event = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const data = event.split('\n').filter((line) => line.startsWith('data: '));
        if (data.length === 0) continue;
        return JSON.parse(data.map((line) => line.slice('data: '.length)).join('\n'));
      }
      const { value, done } = await reader.read();
      if (done) return buffered.trim() === '' ? undefined : Promise.reject(new Error(`The stream ended inside an event: ${buffered}`));
      buffered += value;
    }
  };
}

describe('a tool call whose client asked for progress', () => {
  it.each([
    ['a data tool, metered', 'data_linkedin_get_company_by_domain', { domain: 'stripe.com' }],
    ['a workspace tool', 'sluice_db_list', {}],
  ])('%s is answered as an event stream: a progress notification each interval while it runs, then its result', async (_what, name, args) => {
    const token = await mcpToken();
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const call = heldCall(token, name, args, { progressToken: 'call-1' });
    const response = await call.answered;
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const next = messagesOf(response);

    // Two intervals pass while the call runs: two notifications, each naming the client's token, progress growing.
    vi.advanceTimersByTime(2 * PROGRESS_EVERY_MS);
    const first = await next();
    const second = await next();
    expect([first, second]).toEqual([
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'call-1', progress: PROGRESS_EVERY_MS / 1000, message: expect.stringContaining('Still running') } },
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'call-1', progress: (2 * PROGRESS_EVERY_MS) / 1000, message: expect.stringContaining('Still running') } },
    ]);

    // The call ends: its result is the stream's last message, and its timer is gone with it.
    call.release();
    const result = await next();
    expect(vi.getTimerCount()).toBe(0);
    expect(result).toMatchObject({ jsonrpc: '2.0', id: 3, result: { structuredContent: { data: expect.anything() } } });
    expect(result.result.isError).toBeUndefined();
    vi.advanceTimersByTime(3 * PROGRESS_EVERY_MS);
    expect(await next()).toBeUndefined();
    await call.done();
  });

  it('hears no progress when the call ends first: the stream carries the result alone', async () => {
    const token = await mcpToken();
    const call = heldCall(token, 'sluice_db_list', {}, { progressToken: 17 });
    call.release();
    const next = messagesOf(await call.answered);
    expect(await next()).toMatchObject({ id: 3, result: { structuredContent: { data: { databases: [] } } } });
    expect(await next()).toBeUndefined();
    await call.done();
  });

  it('is answered as JSON, as before, when its client sent no progress token', async () => {
    const token = await mcpToken();
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const call = heldCall(token, 'sluice_db_list', {});
    const answered = call.answered;
    vi.advanceTimersByTime(2 * PROGRESS_EVERY_MS);
    call.release();
    const response = await answered;
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toMatchObject({ id: 3, result: { structuredContent: { data: { databases: [] } } } });
    await call.done();
  });
});
