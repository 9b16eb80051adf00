/**
 * The operator CLI's command line, run through its main function (the first as a process, the way
 * `npm run -s ops --` runs it: the exit code and the streams are main's). A wrong command line is caught
 * before the operator API is called, so nothing listens here: SLUICE_OPS_URL names a port nobody holds,
 * and only a command line that passes its checks gets as far as "Cannot reach".
 * The client under it is also checked against a server that drops a connection unanswered.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { OpsUnreachable, opsClient } from '../../scripts/lib/ops-client';
import { freePort, ops, opsInProcess, type Ran } from './support/processes';

let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  env = { ...process.env, SLUICE_OPS_URL: `http://127.0.0.1:${await freePort()}`, OPS_TOKEN: 'test-ops-token', NO_COLOR: '1' };
});

const lines = (ran: Ran) => ran.stderr.trimEnd().split('\n');

describe('a wrong command line', () => {
  it('is an id of the wrong shape: the whole rule, then the usage of that command, exit 2', async () => {
    const ran = await ops(env, 'org', 'show', '--id', 'org_nope');
    expect(ran.code).toBe(2);
    expect(ran.stdout).toBe('');
    expect(lines(ran)).toEqual(['--id must be org_ followed by 24 lowercase hex characters, not "org_nope".', 'Usage: npm run -s ops -- org show --id ORG_ID']);
  });

  it('is a negative amount: said as such (not "argument is ambiguous"), then the usage of that command, exit 2', async () => {
    const ran = await opsInProcess(env, 'wallet', 'credit', '--org', `org_${'0'.repeat(24)}`, '--purchased-cents', '-5');
    expect(ran.code).toBe(2);
    expect(ran.stdout).toBe('');
    expect(lines(ran)).toEqual([
      '--purchased-cents must be a whole number from 0 up, not "-5".',
      'Usage: npm run -s ops -- wallet credit --org ORG_ID [--purchased-cents N] [--subscription-cents N]',
    ]);
  });

  it('is a key given more days than a year: the range said, then the usage, exit 2', async () => {
    const ran = await opsInProcess(env, 'key', 'expiry', '--id', `key_${'0'.repeat(24)}`, '--expires-in-days', '366');
    expect(ran.code).toBe(2);
    expect(lines(ran)).toEqual(['--expires-in-days must be a whole number from 1 to 365, or none, not "366".', 'Usage: npm run -s ops -- key expiry --id KEY_ID --expires-in-days N|none']);
  });

  it('is an unknown option: named once, quotes balanced, then the usage of that command, exit 2', async () => {
    const ran = await opsInProcess(env, 'org', 'create', '--nam', 'Acme');
    expect(ran.code).toBe(2);
    expect(ran.stdout).toBe('');
    expect(lines(ran)).toEqual(['Unknown option --nam.', 'Usage: npm run -s ops -- org create --name NAME [--plan PLAN]']);
  });

  it('is an unknown command: named, then the general usage line pointing at --help, not the whole help, exit 2', async () => {
    const ran = await opsInProcess(env, 'org', 'delete', '--id', `org_${'0'.repeat(24)}`);
    expect(ran.code).toBe(2);
    expect(lines(ran)).toEqual(['Unknown command "org delete".', 'Usage: npm run -s ops -- <command> [flags]   (npm run -s ops -- --help lists the commands)']);
  });
});

describe('a right command line', () => {
  it('passes the checks with an id as newId makes it, and only then goes to the operator API (exit 1: nothing listens)', async () => {
    const ran = await opsInProcess(env, 'org', 'show', '--id', 'org_0123456789abcdef01234567');
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(/^Cannot reach http:\/\/127\.0\.0\.1:\d+ /);
  });
});

describe('a connection the server closes without answering', () => {
  /** A server that drops the first request's connection unanswered and answers every later one. */
  async function droppingFirst(): Promise<{ url: string; requests: string[]; close(): void }> {
    const { createServer } = await import('node:http');
    const requests: string[] = [];
    const server = createServer((request, response) => {
      requests.push(`${request.method} ${request.url}`);
      if (requests.length === 1) return void request.socket.destroy();
      response.setHeader('content-type', 'application/json').end(JSON.stringify({ success: true, data: { purchasedBalanceCents: 7 } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    return { url: `http://127.0.0.1:${port}`, requests, close: () => server.close() };
  }

  it('is tried once more for a GET, which may be repeated, and the answer is the second one', async () => {
    const server = await droppingFirst();
    try {
      const answer = await opsClient(server.url, 'test-ops-token').call<{ purchasedBalanceCents: number }>('GET', '/ops/v1/organizations/x/wallet');
      expect(answer.purchasedBalanceCents).toBe(7);
      expect(server.requests).toEqual(['GET /ops/v1/organizations/x/wallet', 'GET /ops/v1/organizations/x/wallet']);
    } finally {
      server.close();
    }
  });

  it('is not repeated for a POST, which may have been applied: the caller is told, once', async () => {
    const server = await droppingFirst();
    try {
      await expect(opsClient(server.url, 'test-ops-token').call('POST', '/ops/v1/organizations/x/wallet/credit', { purchasedCents: 5 })).rejects.toThrow(OpsUnreachable);
      expect(server.requests).toEqual(['POST /ops/v1/organizations/x/wallet/credit']);
    } finally {
      server.close();
    }
  });
});
