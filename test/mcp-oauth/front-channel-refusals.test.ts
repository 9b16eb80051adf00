import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { signUp } from '../support/dashboard';
import { AUTHORIZATIONS_PER_ADDRESS } from '../../src/mcp/oauth/address-throttles';
import { MAX_STATE_CHARS } from '../../src/services/oauth/authorization';
import { authorize, authorizeRequest, form, MCP_ORIGIN, ownAddress, pkce, REDIRECT_URI, registerClient } from './support';

/** What a refused authorization request answered: a page of Sluice's own, never a redirect to the client. */
async function refusalPage(response: Response) {
  expect(response.status).toBe(400);
  expect(response.headers.get('location')).toBeNull();
  expect(response.headers.get('content-type')).toMatch(/^text\/html/);
  expect(response.headers.get('content-security-policy')).toMatch(/^default-src 'none'/);
  return response.text();
}

describe('no redirect to the client before the person decides (RFC 9700 section 4.11.2)', () => {
  it('shows a page instead of bouncing response_type=token to a redirect URI anyone could register', async () => {
    const clientId = await registerClient({ client_name: 'Landing', redirect_uris: ['https://evil.example/landing'] });
    const page = await refusalPage(await authorizeRequest({ client_id: clientId, redirect_uri: 'https://evil.example/landing', response_type: 'token' }));
    expect(page).toContain('Landing cannot connect to Sluice');
    expect(page).toContain('unsupported_response_type');
    expect(page).not.toContain('evil.example');
  });

  it.each([
    ['an unsupported response_type', { response_type: 'token' }, 'unsupported_response_type', 'The only response_type is &quot;code&quot;'],
    ['plain PKCE', { code_challenge_method: 'plain' }, 'invalid_request', 'plain is refused'],
    ['no PKCE challenge', { code_challenge: '' }, 'invalid_request', 'PKCE is required'],
    ['a resource that is not one of ours', { resource: `${MCP_ORIGIN}/mcp/finance` }, 'invalid_target', 'is not an MCP resource of this server'],
    ['an unregistered redirect URI', { redirect_uri: 'http://127.0.0.1:53682/other' }, 'invalid_request', 'is not a redirect URI registered by Test client'],
    ['a state longer than is kept', { state: 'x'.repeat(MAX_STATE_CHARS + 1) }, 'invalid_request', `state is ${MAX_STATE_CHARS + 1} characters long`],
  ])('refuses %s of a registered client on the page, with status 400 and no Location', async (_, params, error, words) => {
    const { challenge } = await pkce();
    const page = await refusalPage(await authorizeRequest({ client_id: await registerClient(), code_challenge: challenge, ...params }));
    expect(page).toContain(`<code>${error}</code>`);
    expect(page).toContain(words);
  });

  it('holds a redirect URI registered before the scheme rules to them: a view-source: URI is refused on the page', async () => {
    const clientId = `oac_${crypto.randomUUID().replace(/-/g, '').slice(0, 24)}`;
    await env.DB.prepare("INSERT INTO oauth_clients (id, name, redirect_uris, client_uri, from_document, created_at) VALUES (?, 'Old', ?, NULL, 0, ?)")
      .bind(clientId, JSON.stringify(['view-source:https://evil.example/landing']), new Date().toISOString())
      .run();
    const page = await refusalPage(await authorizeRequest({ client_id: clientId, redirect_uri: 'view-source:https://evil.example/landing', code_challenge: (await pkce()).challenge }));
    expect(page).toContain('view-source: scheme');
  });

  it('still sends a refusal the person made back to the client: Deny answers access_denied with state and iss', async () => {
    const person = await signUp();
    const { challenge } = await pkce();
    const denied = await authorize(person, { clientId: await registerClient(), challenge, decision: 'deny' });
    expect(`${denied.origin}${denied.pathname}`).toBe(REDIRECT_URI);
    expect(Object.fromEntries(denied.searchParams)).toMatchObject({ error: 'access_denied', state: 'state-1', iss: MCP_ORIGIN });
  });
});

describe('loopback redirect URIs (RFC 8252 section 7.3)', () => {
  it.each(['http://127.0.0.1/callback', 'http://127.0.0.1:1234/callback'])('lets a client registered with %s use any port, and the code goes to that port', async (registered) => {
    const person = await signUp();
    const clientId = await registerClient({ redirect_uris: [registered] });
    const { verifier, challenge } = await pkce();
    const used = 'http://127.0.0.1:50123/callback';
    const response = await authorizeRequest({ client_id: clientId, code_challenge: challenge, redirect_uri: used });
    expect(response.status).toBe(302);
    const consent = new URL(response.headers.get('location')!);
    const decided = await person.json('POST', '/api/oauth/consent', { request: consent.searchParams.get('request'), decision: 'allow', workspaceId: person.workspaceId });
    const redirect = new URL(decided.body.data.redirectTo);
    expect(`${redirect.origin}${redirect.pathname}`).toBe(used);
    const tokens = await form('/oauth/token', { grant_type: 'authorization_code', code: redirect.searchParams.get('code')!, code_verifier: verifier, client_id: clientId, redirect_uri: used });
    expect(tokens.status).toBe(200);
  });

  it.each([
    ['another path', 'http://127.0.0.1:50123/other'],
    ['another loopback host', 'http://localhost:50123/callback'],
    ['https instead of http', 'https://127.0.0.1:50123/callback'],
  ])('still refuses %s on the page', async (_, used) => {
    const clientId = await registerClient({ redirect_uris: ['http://127.0.0.1/callback'] });
    const page = await refusalPage(await authorizeRequest({ client_id: clientId, code_challenge: (await pkce()).challenge, redirect_uri: used }));
    expect(page).toContain('is not a redirect URI registered by Test client');
  });

  it('keeps exact matching for https: another port is another redirect URI', async () => {
    const clientId = await registerClient({ redirect_uris: ['https://editor.example/cb'] });
    await refusalPage(await authorizeRequest({ client_id: clientId, code_challenge: (await pkce()).challenge, redirect_uri: 'https://editor.example:8443/cb' }));
  });
});

describe('authorization requests from one address', () => {
  it(`are ${AUTHORIZATIONS_PER_ADDRESS.limit} an hour; the next is refused on the page with 429 and Retry-After, and files nothing`, async () => {
    const [clientId, { challenge }] = await Promise.all([registerClient(), pkce()]);
    const address = ownAddress();
    const filed = () => env.DB.prepare('SELECT COUNT(*) AS n FROM oauth_requests WHERE client_id = ?').bind(clientId).first<number>('n');
    for (let sent = 0; sent < AUTHORIZATIONS_PER_ADDRESS.limit; sent++) expect((await authorizeRequest({ client_id: clientId, code_challenge: challenge }, address)).status).toBe(302);
    expect(await filed()).toBe(AUTHORIZATIONS_PER_ADDRESS.limit);
    const refused = await authorizeRequest({ client_id: clientId, code_challenge: challenge }, address);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('location')).toBeNull();
    expect(await refused.text()).toContain('Too many authorization requests from this address (60 an hour)');
    expect(await filed()).toBe(AUTHORIZATIONS_PER_ADDRESS.limit);
    // Another address is not held back.
    expect((await authorizeRequest({ client_id: clientId, code_challenge: challenge })).status).toBe(302);
  });
});
