import { describe, expect, it } from 'vitest';
import { clientAddress } from '../../src/core/throttle';
import { REGISTRATIONS_PER_ADDRESS } from '../../src/mcp/oauth/address-throttles';
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
    [{ redirect_uris: ['https://editor.example/cb'], token_endpoint_auth_method: 'client_secret_basic' }, 'invalid_client_metadata', 'Only public clients'],
  ])('refuses %j with %s', async (metadata, error, words) => {
    const refused = await oauthError(await register(metadata));
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe(error);
    expect(refused.body.error_description).toContain(words);
  });
});

describe('registration throttle', () => {
  it(`answers 429 with Retry-After past ${REGISTRATIONS_PER_ADDRESS.limit} registrations an hour from one address, and only for that address`, async () => {
    const address = ownAddress();
    const metadata = { client_name: 'Burst', redirect_uris: ['https://evil.example/landing'] };
    for (let attempt = 0; attempt < REGISTRATIONS_PER_ADDRESS.limit; attempt += 1) expect((await register(metadata, address)).status).toBe(201);

    const refused = await register(metadata, address);
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(await refused.json()).toMatchObject({ error: 'temporarily_unavailable', error_description: expect.stringContaining('Too many client registrations from this address') });
    // A refused body counts too: the limit is on requests, not on successes.
    expect((await register({ redirect_uris: [] }, address)).status).toBe(429);

    expect((await register(metadata)).status).toBe(201);
  });

  it('trusts cf-connecting-ip only on a request that came through the edge (request.cf set)', () => {
    const url = `${MCP_ORIGIN}/oauth/register`;
    expect(clientAddress(new Request(url, { headers: { 'cf-connecting-ip': '192.0.2.7' }, cf: { country: 'NL' } } as RequestInit))).toBe('192.0.2.7');
    expect(clientAddress(new Request(url, { headers: { 'cf-connecting-ip': '192.0.2.7' } }))).toBe('unattributed');
  });
});
