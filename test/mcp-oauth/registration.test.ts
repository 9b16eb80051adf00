import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { clientAddress } from '../../src/core/throttle';
import { REGISTRATION_REQUESTS_PER_ADDRESS, REGISTRATIONS_PER_ADDRESS } from '../../src/mcp/oauth/address-throttles';
import { MCP_ORIGIN, ownAddress, register } from './support';

async function oauthError(response: Response) {
  return { status: response.status, body: (await response.json()) as { error: string; error_description: string } };
}

describe('registration (RFC 7591)', () => {
  it('registers a public client with loopback, https and app-scheme redirect URIs', async () => {
    const response = await register({
      client_name: 'Editor',
      redirect_uris: ['http://localhost:3000/cb', 'https://editor.example/cb', 'cursor://anysphere.cursor-mcp/oauth/callback', 'com.example.editor:/oauth/callback'],
      client_uri: 'https://editor.example/',
      software_id: 'ignored',
    });
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({ client_id: expect.stringMatching(/^oac_[0-9a-f]{24}$/), token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] });
  });

  it.each([
    [{ redirect_uris: ['http://editor.example/cb'] }, 'invalid_redirect_uri', 'plain http off this machine'],
    [{ redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri', 'javascript: scheme'],
    [{ redirect_uris: ['view-source:https://editor.example/cb'] }, 'invalid_redirect_uri', 'view-source: scheme'],
    [{ redirect_uris: ['data:text/html,<script>alert(1)</script>'] }, 'invalid_redirect_uri', 'data: scheme'],
    [{ redirect_uris: ['mailto:someone@editor.example'] }, 'invalid_redirect_uri', 'mailto: scheme'],
    [{ redirect_uris: ['chrome-extension://abcdef/cb'] }, 'invalid_redirect_uri', 'chrome-extension: scheme'],
    [{ redirect_uris: ['https://editor.example/cb#frag'] }, 'invalid_redirect_uri', 'fragment'],
    [{ redirect_uris: [] }, 'invalid_redirect_uri', 'At least one'],
    [{ redirect_uris: ['https://editor.example/cb'], client_uri: 'javascript:alert(document.cookie)' }, 'invalid_client_metadata', 'client_uri must be an http(s) URL'],
    [{ redirect_uris: ['https://editor.example/cb'], client_uri: 'data:text/html,hi' }, 'invalid_client_metadata', 'client_uri must be an http(s) URL'],
    [{ redirect_uris: ['https://editor.example/cb'], client_name: 'Editor\u202Efdp.exe' }, 'invalid_client_metadata', 'text-direction'],
    [{ redirect_uris: ['https://editor.example/cb'], client_name: 'Editor\u0000' }, 'invalid_client_metadata', 'Control characters'],
    [{ redirect_uris: ['https://editor.example/cb'], token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata', 'Only public clients'],
  ])('refuses %j with %s', async (metadata, error, words) => {
    const refused = await oauthError(await register(metadata));
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe(error);
    expect(refused.body.error_description).toContain(words);
  });

  // Claude's connectors register asking for client_secret_post, with a scope of their own, and read the method from the answer.
  it.each(['client_secret_post', 'client_secret_basic'])('registers a client that asks for %s as a public one, with no secret', async (method) => {
    const response = await register({ client_name: 'Claude', redirect_uris: [`https://${method}.example/api/mcp/auth_callback`], token_endpoint_auth_method: method, grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], scope: 'claudeai' });
    expect(response.status).toBe(201);
    const registered = (await response.json()) as Record<string, unknown>;
    expect(registered).toMatchObject({ token_endpoint_auth_method: 'none' });
    expect(registered).not.toHaveProperty('client_secret');
  });

  it('gives a registration with the same name, redirect URIs and home page the client registered before, and any other a new one', async () => {
    const host = `https://${crypto.randomUUID()}.example`;
    const metadata = { client_name: 'Hosted', redirect_uris: [`${host}/callback`], client_uri: `${host}/` };
    const idOf = async (body: unknown) => {
      const response = await register(body);
      expect(response.status).toBe(201);
      return ((await response.json()) as { client_id: string }).client_id;
    };
    const first = await idOf(metadata);
    // Members a server ignores or replaces do not make it another client.
    expect(await idOf({ ...metadata, token_endpoint_auth_method: 'client_secret_post', scope: 'claudeai' })).toBe(first);
    expect(await idOf({ ...metadata, client_name: 'Hosted 2' })).not.toBe(first);
    expect(await idOf({ ...metadata, redirect_uris: [`${host}/other`] })).not.toBe(first);
    expect(await idOf({ ...metadata, client_uri: undefined })).not.toBe(first);
  });
});

describe('registration throttle', () => {
  it(`answers 429 with Retry-After past ${REGISTRATIONS_PER_ADDRESS.limit} new clients an hour from one address, and only for that address`, async () => {
    const address = ownAddress();
    const metadata = (n: number) => ({ client_name: `Burst ${n}`, redirect_uris: ['https://evil.example/landing'] });
    for (let attempt = 0; attempt < REGISTRATIONS_PER_ADDRESS.limit; attempt += 1) expect((await register(metadata(attempt), address)).status).toBe(201);

    const refused = await register(metadata(REGISTRATIONS_PER_ADDRESS.limit), address);
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(await refused.json()).toMatchObject({ error: 'temporarily_unavailable', error_description: expect.stringContaining('Too many client registrations from this address') });

    expect((await register(metadata(REGISTRATIONS_PER_ADDRESS.limit), ownAddress())).status).toBe(201);
  });

  it('answers a hosted client registering the same metadata again for each person from one address, past the limit', async () => {
    const address = ownAddress();
    const metadata = { client_name: 'Claude', redirect_uris: [`https://${crypto.randomUUID()}.example/api/mcp/auth_callback`], token_endpoint_auth_method: 'client_secret_post' };
    const ids = new Set<string>();
    for (let person = 0; person < REGISTRATIONS_PER_ADDRESS.limit * 2; person += 1) {
      const response = await register(metadata, address);
      expect(response.status).toBe(201);
      ids.add(((await response.json()) as { client_id: string }).client_id);
    }
    expect(ids.size).toBe(1);
  });

  it(`answers 429 past ${REGISTRATION_REQUESTS_PER_ADDRESS.limit} registration requests of any kind an hour from one address, before reading them`, { timeout: 120_000 }, async () => {
    const address = ownAddress();
    const metadata = { client_name: 'Again and again', redirect_uris: [`https://${crypto.randomUUID()}.example/cb`] };
    // The count is the throttle's own row: filled to the limit as that many requests would leave it.
    const counted = clientAddress(new Request(`${MCP_ORIGIN}/oauth/register`, { headers: { 'cf-connecting-ip': address }, cf: { country: 'NL' } } as RequestInit));
    await env.DB.prepare('INSERT INTO auth_throttle (bucket, window_start, attempts) VALUES (?, ?, ?)').bind(`oauth-register-any:${counted}`, Date.now(), REGISTRATION_REQUESTS_PER_ADDRESS.limit).run();
    const refused = await register(metadata, address);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: 'temporarily_unavailable', error_description: expect.stringContaining('Too many registration requests from this address') });
    expect((await register(metadata, ownAddress())).status).toBe(201);
  });

  it('trusts cf-connecting-ip only on a request that came through the edge (request.cf set)', () => {
    const url = `${MCP_ORIGIN}/oauth/register`;
    expect(clientAddress(new Request(url, { headers: { 'cf-connecting-ip': '192.0.2.7' }, cf: { country: 'NL' } } as RequestInit))).toBe('192.0.2.7');
    expect(clientAddress(new Request(url, { headers: { 'cf-connecting-ip': '192.0.2.7' } }))).toBe('unattributed');
  });
});
