/**
 * What a deployment is watched with (docs/deploying.md): one JSON log line per request, naming the request id,
 * the route pattern, the status, the key's id and workspace (never the key) and what a metered call cost; and
 * GET /health on the dashboard too, which the deploy's smoke test compares with the api's build.
 */
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Env } from '../src/core/config';
import { announceJobEnd } from '../src/services/jobs/events';
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

describe('job log lines', () => {
  it("one line when a job ends, at the level its outcome warrants, with its counts and spend; a cancelled job's end is its canceller's", async () => {
    const ends: Record<string, unknown>[] = [];
    for (const method of ['log', 'warn', 'error'] as const) {
      vi.spyOn(console, method).mockImplementation((text: unknown) => {
        const line = /^\{/.test(String(text)) ? (JSON.parse(String(text)) as Record<string, unknown>) : {};
        if (String(line.event).startsWith('job.')) ends.push({ ...line, via: method });
      });
    }
    const job = {
      id: 'job_0123456789abcdef01234567', organizationId: 'org_logs', workspaceId: 'ws_logs', operation: 'linkedin/get-company-by-domain', name: null,
      reason: null, items: 3, succeeded: 2, failed: 1, spentUnits: 20_000, quotedUnits: 30_000, maxCostUnits: null, keyId: null, budgetKeyId: null, grantId: null, connectionId: null, intoDatabaseId: null, intoTable: null,
      windowResetAt: 0, windowLimit: 60, windowRemaining: 60, resumeAt: 0, createdAt: '2026-11-24T10:00:00.000Z', startedAt: null, finishedAt: null, resultsPrunedAt: null, waitingSince: null, waitingOn: null,
    };
    await announceJobEnd(env as unknown as Env, { ...job, status: 'succeeded' });
    await announceJobEnd(env as unknown as Env, { ...job, status: 'failed', succeeded: 0, failed: 3, spentUnits: 0 });
    await announceJobEnd(env as unknown as Env, { ...job, status: 'cancelled' });
    expect(ends).toEqual([
      expect.objectContaining({ event: 'job.completed', level: 'info', via: 'log', jobId: job.id, workspaceId: 'ws_logs', counts: { total: 3, succeeded: 2, failed: 1, pending: 0 }, spentCents: 2 }),
      expect.objectContaining({ event: 'job.failed', level: 'warn', via: 'warn', jobId: job.id, counts: { total: 3, succeeded: 0, failed: 3, pending: 0 }, spentCents: 0 }),
    ]);
  });
});
