/**
 * What a deployment is watched with (docs/deploying.md): one JSON log line per request, naming the request id,
 * the route pattern, the status, the key's id and workspace (never the key) and what a metered call cost; and
 * GET /health on the dashboard too, which the deploy's smoke test compares with the api's build.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { bearer, call, companyByDomain, funded, json } from './support/api';
import { dashboard } from './support/dashboard';

function captureLines() {
  const lines: Record<string, unknown>[] = [];
  for (const method of ['log', 'warn', 'error'] as const) {
    vi.spyOn(console, method).mockImplementation((text: unknown) => {
      try {
        const line = JSON.parse(String(text)) as Record<string, unknown>;
        if (line.event === 'request') lines.push({ ...line, method: line.method, via: method });
      } catch {
        // not one of ours
      }
    });
  }
  return lines;
}

afterEach(() => vi.restoreAllMocks());

describe('request log lines', () => {
  it('one line per metered call: request id, route pattern, key id and workspace, cost; never the key', async () => {
    const account = await funded();
    const lines = captureLines();
    const response = await companyByDomain(account.key, 'stripe.com');
    expect(response.status).toBe(200);
    const body = await json(response);
    const line = lines.find((candidate) => candidate.requestId === response.headers.get('x-request-id'));
    expect(line).toMatchObject({ level: 'info', via: 'log', method: 'GET', status: 200, keyId: account.keyId, workspaceId: account.workspaceId, costCents: body.meta.costCents });
    expect(line!.route).toMatch(/^\/v1\/data\//);
    expect(typeof line!.ms).toBe('number');
    expect(JSON.stringify(lines)).not.toContain(account.key);
  });

  it('a refusal is a warning with its status; the path the client sent is not the route', async () => {
    const lines = captureLines();
    const response = await call('/v1/usage?from=yesterday', bearer('sk_live_not_a_key'));
    expect(response.status).toBe(401);
    const line = lines.find((candidate) => candidate.requestId === response.headers.get('x-request-id'));
    expect(line).toMatchObject({ level: 'warn', via: 'warn', status: 401 });
    expect(String(line!.route)).not.toContain('yesterday');
    expect(JSON.stringify(line)).not.toContain('sk_live_not_a_key');
  });
});

describe('GET /health on the dashboard', () => {
  it('answers the build it serves, as the api worker does', async () => {
    const response = await dashboard('/health');
    expect(response.status).toBe(200);
    expect((await json(response)).data).toMatchObject({ status: 'ok', build: 'test-build' });
  });
});
