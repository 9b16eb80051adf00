import { describe, expect, it } from 'vitest';
import { MAX_REQUEST_BODY_BYTES } from '../src/core/request-body';
import { call, funded, json, OPS_TOKEN, tool, wallet } from './support/api';

/** A body as a stream with no Content-Length, so only counting what arrives can catch its size. */
function streamOf(bytes: number, chunk = 64 * 1024): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= bytes) return controller.close();
      const size = Math.min(chunk, bytes - sent);
      controller.enqueue(new TextEncoder().encode(' '.repeat(size)));
      sent += size;
    },
  });
}

const CAP_MESSAGE = `The request body is larger than 1 MB (${MAX_REQUEST_BODY_BYTES.toLocaleString('en-US')} bytes), the most this API reads.`;

async function expectCapRefusal(response: Response): Promise<void> {
  expect(response.status).toBe(400);
  const body = await json(response);
  expect(body.error.code).toBe('VALIDATION_ERROR');
  expect(body.error.details).toEqual([{ field: 'body', location: 'body', message: CAP_MESSAGE }]);
}

describe('request bodies are capped at 1 MB and read with a bounded reader', () => {
  it('refuses a 50 MB JSON body on a tool endpoint with 400 VALIDATION_ERROR naming the cap, uncharged', async () => {
    const account = await funded(10, 'payg');
    const huge = JSON.stringify({ url: 'https://acme.example/', padding: 'x'.repeat(50 * 1024 * 1024) });
    await expectCapRefusal(await tool(account.key, '/scrape', JSON.parse(huge)));
    expect(await wallet(account.organizationId)).toMatchObject({ purchasedBalanceCents: 10, heldCents: 0 });
  }, 30_000);

  it('stops reading a body with no Content-Length once it passes the cap', async () => {
    const account = await funded(10, 'payg');
    let pulled = 0;
    const source = streamOf(20 * MAX_REQUEST_BODY_BYTES);
    const counting = source.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          pulled += chunk.byteLength;
          controller.enqueue(chunk);
        },
      }),
    );
    const response = await call('/scrape', { method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' }, body: counting, duplex: 'half' } as RequestInit);
    await expectCapRefusal(response);
    expect(pulled).toBeLessThan(3 * MAX_REQUEST_BODY_BYTES);
  });

  it('refuses a body over the cap on the operator API too', async () => {
    const response = await call('/ops/v1/organizations', {
      method: 'POST',
      headers: { authorization: `Bearer ${OPS_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x'.repeat(MAX_REQUEST_BODY_BYTES), plan: 'payg' }),
    });
    await expectCapRefusal(response);
  });

  it('checks the credential before the size: without a key, or with an unknown one, a body over the cap is the 401 any keyless call gets', async () => {
    const oversized = JSON.stringify({ url: 'https://acme.example/', padding: 'x'.repeat(MAX_REQUEST_BODY_BYTES) });
    const keyless = await call('/scrape', { method: 'POST', headers: { 'content-type': 'application/json' }, body: oversized });
    const unknown = await tool(`sluice_live_${'0'.repeat(32)}`, '/scrape', oversized);
    for (const response of [keyless, unknown]) {
      expect(response.status).toBe(401);
      const body = await json(response);
      expect(body.error.code).toBe('UNAUTHORIZED');
      expect(body.error.how_to_get_access).toBeDefined();
    }
    // With a key, the same body is refused for its size and not as the malformed JSON Hono's validator reports for any failed read.
    const account = await funded(10, 'payg');
    await expectCapRefusal(await tool(account.key, '/scrape', oversized));
  });

  it('reads a body just under the cap as usual: validation answers about its fields', async () => {
    const account = await funded(10, 'payg');
    const body = { url: 'https://acme.example/', padding: 'x'.repeat(MAX_REQUEST_BODY_BYTES - 100) };
    const response = await tool(account.key, '/scrape', body);
    expect(response.status).toBe(400);
    expect((await json(response)).error.details).toEqual([{ field: 'padding', location: 'body', message: 'Unknown field.' }]);
  });
});

describe('security headers on every response of the api worker', () => {
  it.each([
    ['GET', '/health', 200],
    ['GET', '/openapi.json', 200],
    ['GET', '/docs', 200],
    ['GET', '/v1/platforms', 200],
    ['GET', '/v1/credits', 401],
    ['GET', '/nope', 404],
    ['POST', '/scrape', 401],
  ] as const)('%s %s (%i) carries nosniff, no-referrer and DENY framing', async (method, path, status) => {
    const response = await call(path, { method });
    expect(response.status).toBe(status);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('carries them on a metered success and on a refusal of a body over the cap', async () => {
    const account = await funded(10, 'payg');
    const success = await call('/v1/data/linkedin/get-company-by-domain?domain=stripe.com', { headers: { authorization: `Bearer ${account.key}` } });
    const refused = await tool(account.key, '/scrape', { url: 'https://acme.example/', padding: 'x'.repeat(MAX_REQUEST_BODY_BYTES) });
    for (const response of [success, refused]) {
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('x-frame-options')).toBe('DENY');
    }
    expect([success.status, refused.status]).toEqual([200, 400]);
  });
});
