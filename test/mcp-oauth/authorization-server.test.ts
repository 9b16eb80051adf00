import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { createKey } from '../../src/services/accounts';
import { clock } from '../../src/core/clock';
import { sha256Hex } from '../../src/core/digest';
import { ACCESS_TOKENS_PER_GRANT, REFRESH_REUSE_GRACE_MS, REFRESH_TOKENS_PER_GRANT } from '../../src/services/oauth/tokens';
import { findClient } from '../../src/services/oauth/clients';
import { listConnectedClients } from '../../src/services/oauth/grants';
import type { OAuthError } from '../../src/services/oauth/errors';
import type { OAuthEnv } from '../../src/services/oauth/settings';
import { signUp } from '../support/dashboard';
import { authorize, authorizeRequest, connect, form, listTools, MCP_ORIGIN, mcp, pkce, REDIRECT_URI, registerClient } from './support';

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

function later(ms: number) {
  const start = realNow();
  clock.now = () => start + ms;
}

async function oauthError(response: Response) {
  return { status: response.status, body: (await response.json()) as { error: string; error_description: string } };
}

describe('discovery', () => {
  it('publishes RFC 8414 metadata with S256 only, public clients and metadata documents', async () => {
    const response = await mcp('/.well-known/oauth-authorization-server');
    expect(await response.json()).toMatchObject({
      issuer: MCP_ORIGIN,
      authorization_endpoint: `${MCP_ORIGIN}/oauth/authorize`,
      token_endpoint: `${MCP_ORIGIN}/oauth/token`,
      registration_endpoint: `${MCP_ORIGIN}/oauth/register`,
      revocation_endpoint: `${MCP_ORIGIN}/oauth/revoke`,
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['none'],
      client_id_metadata_document_supported: true,
      scopes_supported: ['mcp'],
    });
  });

  it.each(['/mcp', '/mcp/web', '/mcp/seo', '/mcp/social'])('names itself and the authorization server in the metadata of %s', async (path) => {
    const metadata = (await (await mcp(`/.well-known/oauth-protected-resource${path}`)).json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({ resource: `${MCP_ORIGIN}${path}`, authorization_servers: [MCP_ORIGIN] });
  });

  it("answers at the root (RFC 9728's fallback) with /mcp's metadata, and an unknown endpoint's with a 404 naming the real ones", async () => {
    for (const root of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/']) {
      expect(await (await mcp(root)).json(), root).toMatchObject({ resource: `${MCP_ORIGIN}/mcp`, authorization_servers: [MCP_ORIGIN] });
    }
    const unknown = await mcp('/.well-known/oauth-protected-resource/api');
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toBe(
      'No MCP endpoint at /api: the endpoints are /mcp, /mcp/<group> and /mcp/s/<server id>, each with its metadata at /.well-known/oauth-protected-resource<endpoint>.',
    );
  });
});

describe('client ID metadata documents', () => {
  it('fetches the document at the client_id URL through the safe fetch and sends the person to consent', async () => {
    const { challenge } = await pkce();
    const clientId = 'https://apps.example.com/oauth/client.json';
    const response = await authorizeRequest({ client_id: clientId, redirect_uri: 'https://apps.example.com/callback', code_challenge: challenge });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toMatch(new RegExp(`^${env.APP_URL}/oauth/consent\\?request=sluice_oar_[0-9a-f]{64}$`));
  });

  it.each([
    ['https://apps.example.com/oauth/impostor.json', 'names another client_id'],
    ['https://apps.example.com/oauth/missing.json', 'answered HTTP 404'],
    ['https://loopback.example.com/oauth/client.json', 'Only public http(s) addresses are fetched'],
  ])('refuses %s on the page, redirecting nowhere', async (clientId, words) => {
    const { challenge } = await pkce();
    const response = await authorizeRequest({ client_id: clientId, redirect_uri: 'https://apps.example.com/callback', code_challenge: challenge });
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
    expect(await response.text()).toContain(words);
  });
});

describe('where client documents may be read from', () => {
  const privateDocument = 'https://loopback.example.com/oauth/client.json';
  const read = (settings: Record<string, string>) =>
    findClient({ ...(env as unknown as OAuthEnv), ...settings }, privateDocument).then(
      () => 'fetched a client',
      (error: unknown) => (error as OAuthError).description,
    );

  it("is not widened by the scraper's allowance: a private document needs OAUTH_CLIENT_ALLOW_PRIVATE_HOSTS", async () => {
    const scrapeAllowed = await read({ SCRAPE_ALLOW_PRIVATE_HOSTS: 'loopback.example.com:443' });
    expect(scrapeAllowed).toContain('Only public http(s) addresses are fetched');
    expect(scrapeAllowed).toContain('OAUTH_CLIENT_ALLOW_PRIVATE_HOSTS');
    // Allowed, it is fetched: the private host answers an HTML page, which is then refused as no document.
    expect(await read({ OAUTH_CLIENT_ALLOW_PRIVATE_HOSTS: 'loopback.example.com:443' })).toContain('is not JSON');
  });
});

describe('authorization and tokens', () => {
  it('exchanges a code once, within a minute, with the right verifier and redirect URI', async () => {
    const person = await signUp();
    const clientId = await registerClient();
    const exchange = (code: string, verifier: string, extra: Record<string, string> = {}) =>
      form('/oauth/token', { grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT_URI, ...extra });

    const wrong = await pkce();
    const first = await pkce();
    const code = (await authorize(person, { clientId, challenge: first.challenge })).searchParams.get('code')!;
    const mismatch = await oauthError(await exchange(code, wrong.verifier));
    expect(mismatch.body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('PKCE') });
    // The failed attempt spent the code.
    expect((await oauthError(await exchange(code, first.verifier))).body.error).toBe('invalid_grant');

    const late = await pkce();
    const lateCode = (await authorize(person, { clientId, challenge: late.challenge })).searchParams.get('code')!;
    later(61_000);
    expect((await oauthError(await exchange(lateCode, late.verifier))).body.error_description).toContain('expired');
    clock.now = realNow;

    const good = await pkce();
    const goodCode = (await authorize(person, { clientId, challenge: good.challenge })).searchParams.get('code')!;
    expect((await oauthError(await exchange(goodCode, good.verifier, { redirect_uri: 'http://127.0.0.1:53682/other' }))).body.error_description).toContain('redirect_uri');
    // Each refused exchange spent its code, so its grant will never have a token: none is listed as connected.
    expect(await listConnectedClients(env.DB, person.workspaceId)).toEqual([]);
  });

  it.each(['claudeai', 'mcp offline_access', 'mcp admin'])('grants mcp to a client that asks for scope %j, and says so in the token answer', async (scope) => {
    const person = await signUp();
    const tokens = await connect(person, { scope });
    expect(tokens.scope).toBe('mcp');
    expect((await listTools('/mcp', tokens.access_token)).status).toBe(200);
  });

  it('refuses an expired access token with the challenge, and refresh still works', async () => {
    const person = await signUp();
    const tokens = await connect(person);
    expect((await listTools('/mcp', tokens.access_token)).status).toBe(200);
    later(15 * 60_000 + 1);
    const expired = await listTools('/mcp', tokens.access_token);
    expect(expired.status).toBe(401);
    expect(expired.headers.get('www-authenticate')).toContain('error_description="The access token has expired; refresh it"');
    const refreshed = await form('/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: tokens.clientId });
    expect(refreshed.status).toBe(200);
    expect((await listTools('/mcp', ((await refreshed.json()) as { access_token: string }).access_token)).status).toBe(200);
  });

  it('refuses a refresh that asks for another resource, and another client refreshing', async () => {
    const person = await signUp();
    const tokens = await connect(person);
    const retarget = await oauthError(await form('/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: tokens.clientId, resource: `${MCP_ORIGIN}/mcp/seo` }));
    expect(retarget.body.error).toBe('invalid_target');
    const otherClient = await oauthError(await form('/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: await registerClient() }));
    expect(otherClient.body.error).toBe('invalid_grant');
    // Neither mistake spent the token: its client still refreshes with it.
    expect((await form('/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: tokens.clientId })).status).toBe(200);
  });

  it('keeps the newest refresh and access tokens of a grant however often it refreshes, and a spent refresh token let go of, used again, ends it', async () => {
    const person = await signUp();
    const tokens = await connect(person);
    const refresh = (refreshToken: string) => form('/oauth/token', { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: tokens.clientId });
    const grant = (await env.DB.prepare('SELECT grant_id AS id FROM oauth_tokens WHERE hash = ?').bind(await sha256Hex(tokens.refresh_token)).first<{ id: string }>())!.id;
    const issued = [tokens];
    for (let i = 0; i < Math.max(ACCESS_TOKENS_PER_GRANT, REFRESH_TOKENS_PER_GRANT) + 2; i++) {
      const answer = await refresh(issued.at(-1)!.refresh_token);
      expect(answer.status).toBe(200);
      issued.push({ ...((await answer.json()) as typeof tokens), clientId: tokens.clientId });
    }
    const kept = await env.DB.prepare('SELECT kind, COUNT(*) AS n FROM oauth_tokens WHERE grant_id = ? GROUP BY kind ORDER BY kind').bind(grant).all<{ kind: string; n: number }>();
    expect(kept.results).toEqual([{ kind: 'access', n: ACCESS_TOKENS_PER_GRANT }, { kind: 'refresh', n: REFRESH_TOKENS_PER_GRANT }]);
    // The newest access tokens work; one older than those was let go.
    expect((await listTools('/mcp', issued.at(-1)!.access_token)).status).toBe(200);
    expect((await listTools('/mcp', issued.at(-ACCESS_TOKENS_PER_GRANT)!.access_token)).status).toBe(200);
    expect((await listTools('/mcp', issued.at(-ACCESS_TOKENS_PER_GRANT - 1)!.access_token)).status).toBe(401);

    // A token of another family, made up, is only unknown: the grant goes on.
    const madeUp = await oauthError(await refresh(`sluice_ort_${'0'.repeat(32)}_${'1'.repeat(64)}`));
    expect(madeUp.body.error_description).toBe('Unknown refresh token.');
    expect((await listTools('/mcp', issued.at(-1)!.access_token)).status).toBe(200);
    // The very first refresh token, spent long ago and no longer stored, is still known as this grant's: it ends it.
    const replay = await oauthError(await refresh(tokens.refresh_token));
    expect(replay.body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('already used') });
    expect((await listTools('/mcp', issued.at(-1)!.access_token)).status).toBe(401);
    expect((await oauthError(await refresh(issued.at(-1)!.refresh_token))).body.error_description).toContain('revoked');
  });

  it('gives each of a client\'s parallel refreshes with one token tokens of their own, and ends the grant when the token comes back after the grace', async () => {
    const person = await signUp();
    const tokens = await connect(person);
    const refresh = (refreshToken: string) => form('/oauth/token', { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: tokens.clientId });
    // The MCP SDK's client: its requests in parallel all met an expired access token, and each refreshes.
    later(15 * 60_000 + 1);
    const answers = await Promise.all([1, 2, 3].map(() => refresh(tokens.refresh_token)));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    const issued = (await Promise.all(answers.map((answer) => answer.json()))) as { access_token: string; refresh_token: string }[];
    expect(new Set(issued.map((pair) => pair.refresh_token)).size).toBe(3);
    for (const pair of issued) expect((await listTools('/mcp', pair.access_token)).status).toBe(200);
    // Whichever pair the client kept refreshes on.
    const kept = await refresh(issued[2]!.refresh_token);
    expect(kept.status).toBe(200);
    const latest = (await kept.json()) as { access_token: string };

    // Past the grace, the first token is a replay: the grant ends.
    later(15 * 60_000 + 1 + REFRESH_REUSE_GRACE_MS);
    const replay = await oauthError(await refresh(tokens.refresh_token));
    expect(replay.body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('already used') });
    expect((await listTools('/mcp', latest.access_token)).status).toBe(401);
  });

  it('keeps a grant in use going 30 days past each refresh, for a year from consent at most; one left 30 days ends', async () => {
    const person = await signUp();
    const tokens = await connect(person);
    const DAY = 24 * 60 * 60_000;
    const refreshAt = async (day: number, refreshToken: string) => {
      later(day * DAY);
      return form('/oauth/token', { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: tokens.clientId });
    };
    // Refreshed every 29 days: past the 30 days from consent, and on until the year is out.
    let current = tokens.refresh_token;
    for (let day = 29; day < 365; day += 29) {
      const answer = await refreshAt(day, current);
      expect({ day, status: answer.status }).toEqual({ day, status: 200 });
      const next = (await answer.json()) as { refresh_token: string; access_token: string; expires_in: number };
      current = next.refresh_token;
      expect(next.expires_in).toBe(15 * 60);
    }
    // The last refresh was on day 348: the access token it gave ends with the grant, a year after consent.
    const last = await refreshAt(364, current);
    expect(last.status).toBe(200);
    const final = (await last.json()) as { refresh_token: string };
    const expired = await oauthError(await refreshAt(366, final.refresh_token));
    expect(expired.body.error_description).toContain('expired');

    // Another grant, left alone for 31 days after a refresh, ends.
    clock.now = realNow;
    const idle = await connect(person);
    const refreshed = await form('/oauth/token', { grant_type: 'refresh_token', refresh_token: idle.refresh_token, client_id: idle.clientId });
    const kept = (await refreshed.json()) as { refresh_token: string };
    later(31 * DAY);
    const lapsed = await oauthError(await form('/oauth/token', { grant_type: 'refresh_token', refresh_token: kept.refresh_token, client_id: idle.clientId }));
    expect(lapsed.body.error_description).toContain('expired');
  });

  it('lets spent refresh tokens go before any pair a burst of parallel refreshes handed out', async () => {
    const person = await signUp();
    const tokens = await connect(person);
    const refresh = (refreshToken: string) => form('/oauth/token', { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: tokens.clientId });
    // A burst of as many refreshes as the grant keeps tokens: each gets a pair.
    const burst = await Promise.all(Array.from({ length: REFRESH_TOKENS_PER_GRANT }, () => refresh(tokens.refresh_token)));
    expect(burst.map((answer) => answer.status)).toEqual(Array(REFRESH_TOKENS_PER_GRANT).fill(200));
    const pairs = (await Promise.all(burst.map((answer) => answer.json()))) as { refresh_token: string }[];
    // The client goes on with the pair it kept, the last to arrive: its refreshes add spent tokens, newer than the burst's.
    let kept = pairs.at(-1)!.refresh_token;
    for (let refreshes = 0; refreshes < 3; refreshes++) {
      const answer = await refresh(kept);
      expect(answer.status).toBe(200);
      kept = ((await answer.json()) as { refresh_token: string }).refresh_token;
    }
    // Had it kept the first pair instead, that pair is still there: the spent tokens went first.
    expect((await refresh(pairs[0]!.refresh_token)).status).toBe(200);
  });

  it('refuses a spent refresh token within the grace to another client, and keeps the grant', async () => {
    const person = await signUp();
    const tokens = await connect(person);
    const refresh = (refreshToken: string, clientId: string) => form('/oauth/token', { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });
    const first = await refresh(tokens.refresh_token, tokens.clientId);
    expect(first.status).toBe(200);
    const next = (await first.json()) as { access_token: string };
    const stranger = await oauthError(await refresh(tokens.refresh_token, await registerClient()));
    expect(stranger.body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('another client') });
    expect((await listTools('/mcp', next.access_token)).status).toBe(200);
  });

  it('refreshes a grant made before refresh families into one, and its old token used again still ends it', async () => {
    const person = await signUp();
    const tokens = await connect(person);
    // The grant as one made before families: no family, and a refresh token of the old shape.
    const legacy = `sluice_ort_${'ab'.repeat(32)}`;
    const grant = (await env.DB.prepare('SELECT grant_id AS id FROM oauth_tokens WHERE hash = ?').bind(await sha256Hex(tokens.refresh_token)).first<{ id: string }>())!.id;
    await env.DB.batch([
      env.DB.prepare('UPDATE oauth_grants SET refresh_family_hash = NULL WHERE id = ?').bind(grant),
      env.DB.prepare('UPDATE oauth_tokens SET hash = ? WHERE hash = ?').bind(await sha256Hex(legacy), await sha256Hex(tokens.refresh_token)),
    ]);
    const refresh = (refreshToken: string) => form('/oauth/token', { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: tokens.clientId });
    const answer = await refresh(legacy);
    expect(answer.status).toBe(200);
    const next = (await answer.json()) as typeof tokens;
    expect(next.refresh_token).toMatch(/^sluice_ort_[0-9a-f]{32}_[0-9a-f]{64}$/);
    expect((await refresh(next.refresh_token)).status).toBe(200);
    expect((await oauthError(await refresh(legacy))).body.error_description).toContain('already used');
  });

  it("answers a malformed Authorization header with a challenge a client can parse: RFC 6750's characters only in error_description", async () => {
    for (const authorization of ['Bearer ', 'Basic dXNlcjpwYXNz', 'Bearer two tokens']) {
      const refused = await mcp('/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      });
      expect(refused.status).toBe(401);
      // Four auth-params, each a token="quoted-string" with nothing but the allowed characters inside.
      const params = /^Bearer (resource_metadata="[^"]*"), (scope="mcp"), (error="invalid_token"), error_description="([^"]*)"$/.exec(refused.headers.get('www-authenticate')!);
      expect(params).not.toBeNull();
      expect(params![4]).toMatch(/^[\x20\x21\x23-\x5b\x5d-\x7e]+$/);
      expect(params![4]).toContain('Authorization header must be');
      // The JSON-RPC message keeps the sentence as written.
      expect(((await refused.json()) as { error: { message: string } }).error.message).toBe('Authorization header must be "Bearer <token>"');
    }
  });

  it('refuses an API key at /mcp so OAuth clients start their flow', async () => {
    const person = await signUp();
    const key = await createKey(env.DB, env.KEY_ENCRYPTION_KEY, { workspaceId: person.workspaceId, scope: 'workspace', name: 'rest' });
    const refused = await listTools('/mcp', key.key);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain(`resource_metadata="${MCP_ORIGIN}/.well-known/oauth-protected-resource/mcp"`);
    expect(refused.headers.get('www-authenticate')).toContain('API keys are not accepted by the MCP endpoint');
  });
});

describe('connected apps in the dashboard', () => {
  it('lists a workspace connection and revoking it stops its tokens on the next request', async () => {
    const person = await signUp();
    const tokens = await connect(person);
    const listed = await person.json('GET', `/api/workspaces/${person.workspaceId}/oauth-clients`);
    expect(listed.body.data.clients).toEqual([
      expect.objectContaining({ clientName: 'Test client', verified: false, redirectHost: '127.0.0.1:53682', resource: `${MCP_ORIGIN}/mcp`, userId: person.account.user.id }),
    ]);
    const grantId = listed.body.data.clients[0].grantId;

    const stranger = await signUp();
    expect((await stranger.request('POST', `/api/workspaces/${person.workspaceId}/oauth-clients/${grantId}/revoke`)).status).toBe(404);
    expect((await listTools('/mcp', tokens.access_token)).status).toBe(200);

    expect((await person.request('POST', `/api/workspaces/${person.workspaceId}/oauth-clients/${grantId}/revoke`)).status).toBe(200);
    const refused = await listTools('/mcp', tokens.access_token);
    expect(refused.status).toBe(401);
    expect((await person.json('GET', `/api/workspaces/${person.workspaceId}/oauth-clients`)).body.data.clients).toEqual([]);
    const refresh = await oauthError(await form('/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: tokens.clientId }));
    expect(refresh.body.error).toBe('invalid_grant');
  });

  it('refuses a consent for a workspace the person is not a member of', async () => {
    const person = await signUp();
    const stranger = await signUp();
    const { challenge } = await pkce();
    await expect(authorize(person, { clientId: await registerClient(), challenge, workspaceId: stranger.workspaceId })).rejects.toThrow(/consent failed: 404/);
  });

  it('answers a consent only once', async () => {
    const person = await signUp();
    const { challenge } = await pkce();
    const response = await authorizeRequest({ client_id: await registerClient(), code_challenge: challenge });
    const request = new URL(response.headers.get('location')!).searchParams.get('request');
    expect((await person.json('POST', '/api/oauth/consent', { request, decision: 'deny' })).status).toBe(200);
    expect((await person.json('POST', '/api/oauth/consent', { request, decision: 'allow', workspaceId: person.workspaceId })).status).toBe(404);
  });
});
