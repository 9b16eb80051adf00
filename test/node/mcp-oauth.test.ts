import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import * as oauth from 'oauth4webapi';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { opsClient, type OpsClient } from '../../scripts/lib/ops-client';
import { launchChromium, openConfirmationLink, RETRY_RESET, screenshot, watchedPage, type WatchedPage } from './support/browser';
import { type SharedStack, sharedStack } from './support/shared-stack';

/**
 * An MCP client that speaks only OAuth, against the real local stack: a strict OAuth client (oauth4webapi)
 * goes from the 401 to the metadata, registers, sends the person to authorize in chromium (sign in,
 * Allow), exchanges the code, lists tools and makes a metered call with the access token, refreshes,
 * has its old refresh token's reuse end the grant; the MCP SDK's own OAuth client does the same flow;
 * a Deny at consent returns access_denied to the client. Refusals that need a clock are in test/mcp-oauth.
 */
let stack: SharedStack;
let ops: OpsClient;
let browser: Browser;
let tab: WatchedPage;
let origin: string;
let organizationId: string;
let callbackServer: Server;
let callbackUrl: string;
let nextCallback: ((url: URL) => void) | undefined;
let sdkAccessToken: string;

const PERSON = { name: 'Ada Lovelace', email: 'ada@example.com', password: 'a long enough passphrase' };
const insecure = { [oauth.allowInsecureRequests]: true };

/** What the client's loopback redirect URI receives next. */
function callback(): Promise<URL> {
  return new Promise((resolve) => (nextCallback = resolve));
}

/** The person, in chromium, at the authorization URL: signs in if asked, then Allows or Denies. Answers what the client's redirect URI got. */
async function consent(authorizationUrl: URL, decision: 'Allow' | 'Deny', shot?: string): Promise<URL> {
  const { page } = tab;
  const received = callback();
  await page.goto(authorizationUrl.href);
  if (new URL(page.url()).pathname === '/signin') {
    await page.getByLabel('Email').fill(PERSON.email);
    await page.getByLabel('Password').fill(PERSON.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }
  await page.waitForURL(/\/oauth\/consent\?request=/);
  await expect.poll(() => page.getByRole('button', { name: decision }).isVisible()).toBe(true);
  if (shot) await screenshot(page, shot);
  await page.getByRole('button', { name: decision }).click();
  await page.waitForURL((url) => url.href.startsWith(callbackUrl));
  return received;
}

async function purchased(): Promise<number> {
  return (await ops.call<{ purchasedBalanceCents: number }>('GET', `/ops/v1/organizations/${organizationId}/wallet`)).purchasedBalanceCents;
}

function rpc(path: string, token: string | undefined, body: unknown = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }) {
  return fetch(`${origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
}

beforeAll(async () => {
  callbackServer = createServer((request, response) => {
    // Only the redirect itself: the browser also asks this origin for a favicon.
    const url = new URL(request.url!, callbackUrl);
    if (url.pathname === '/callback') nextCallback?.(url);
    response.end('You can close this tab.');
  });
  await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve));
  callbackUrl = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}/callback`;
  [stack, browser] = await Promise.all([sharedStack(), launchChromium()]);
  origin = new URL(stack.settings.MCP_URL!).origin;
  ops = opsClient(stack.urls.api!, stack.settings.OPS_TOKEN!);

  const appUrl = stack.urls.app!;
  const signUp = await fetch(`${appUrl}/api/auth/sign-up`, { method: 'POST', headers: { origin: appUrl, 'content-type': 'application/json' }, body: JSON.stringify(PERSON) });
  organizationId = (await signUp.json()).data.organization.id;
  await ops.call('PUT', `/ops/v1/organizations/${organizationId}/plan`, { plan: 'payg' });
  await ops.call('POST', `/ops/v1/organizations/${organizationId}/wallet/credit`, { purchasedCents: 100 });
  tab = await watchedPage(await browser.newContext({ viewport: { width: 1100, height: 800 } }));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  callbackServer?.close();
});

describe('a strict OAuth client (oauth4webapi) against npm start', () => {
  let as: oauth.AuthorizationServer;
  let client: oauth.Client;
  const resource = () => `${origin}/mcp`;

  async function authorizationRequest() {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: callbackUrl,
      response_type: 'code',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      resource: resource(),
      scope: 'mcp',
    }).toString();
    return { verifier, state, url };
  }

  async function authorize(decision: 'Allow' | 'Deny', shot?: string) {
    const { verifier, state, url } = await authorizationRequest();
    return { verifier, state, received: await consent(url, decision, shot) };
  }

  async function exchange(received: URL, state: string, verifier: string) {
    const params = oauth.validateAuthResponse(as, client, received, state);
    const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, callbackUrl, verifier, { ...insecure, additionalParameters: { resource: resource() } });
    return oauth.processAuthorizationCodeResponse(as, client, response);
  }

  it('discovers the authorization server from the 401 and registers', async () => {
    const unauthenticated = await rpc('/mcp', undefined);
    expect(unauthenticated.status).toBe(401);
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(unauthenticated.headers.get('www-authenticate')!)![1]!;
    const resourceServer = await oauth.processResourceDiscoveryResponse(new URL(resource()), await oauth.resourceDiscoveryRequest(new URL(resource()), insecure));
    expect(metadataUrl).toBe(`${origin}/.well-known/oauth-protected-resource/mcp`);
    expect(resourceServer.authorization_servers).toEqual([origin]);

    as = await oauth.processDiscoveryResponse(new URL(origin), await oauth.discoveryRequest(new URL(origin), { ...insecure, algorithm: 'oauth2' }));
    expect(as).toMatchObject({
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['none'],
      client_id_metadata_document_supported: true,
    });
    const registered = await oauth.dynamicClientRegistrationRequest(as, { redirect_uris: [callbackUrl], client_name: 'Strict test client', token_endpoint_auth_method: 'none' }, insecure);
    client = await oauth.processDynamicClientRegistrationResponse(registered);
    expect(client.client_id).toMatch(/^oac_[0-9a-f]{24}$/);
  });

  it('signs in and allows in the browser, then lists tools and makes a metered call with the access token', async () => {
    const { verifier, state, received } = await authorize('Allow', 'oauth-consent');
    expect(received.searchParams.get('iss')).toBe(origin);
    const tokens = await exchange(received, state, verifier);
    expect(tokens.expires_in).toBe(900);

    const mcp = new Client({ name: 'strict', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(resource()), { requestInit: { headers: { authorization: `Bearer ${tokens.access_token}` } } }));
    expect((await mcp.listTools()).tools.map((tool) => tool.name)).toContain('data_linkedin_get_company_by_domain');
    const before = await purchased();
    const result = await mcp.callTool({ name: 'data_linkedin_get_company_by_domain', arguments: { domain: 'oauth-billing.com' } });
    expect(result.isError).toBeFalsy();
    expect(await purchased()).toBeLessThan(before);
    await mcp.close();

    // Refresh rotates. The old refresh token used again at once by its own client (parallel requests that each
    // refreshed) gets a pair of its own; past 60 s it would end the grant (authorization-server.test.ts, on the clock).
    const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure));
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    const beside = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure));
    expect(beside.refresh_token).not.toBe(refreshed.refresh_token);
    expect((await rpc('/mcp', refreshed.access_token)).status).toBe(200);
    expect((await rpc('/mcp', beside.access_token)).status).toBe(200);
    // Revoking either refresh token ends the grant, with every token it issued.
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), beside.refresh_token!, insecure));
    const refused = await rpc('/mcp', refreshed.access_token);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/error_description="[^"]*revoked/);
    const newer = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshed.refresh_token!, insecure);
    await expect(oauth.processRefreshTokenResponse(as, client, newer)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('refuses a token for /mcp on /mcp/web, a reused code, and a revoked refresh token', async () => {
    const { verifier, state, received } = await authorize('Allow');
    const tokens = await exchange(received, state, verifier);
    const elsewhere = await rpc('/mcp/web', tokens.access_token);
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp/web", scope="mcp", error="invalid_token", error_description="This access token was issued for ${origin}/mcp, not ${origin}/mcp/web"`,
    );
    await expect(exchange(received, state, verifier)).rejects.toMatchObject({ error: 'invalid_grant' });
    // The replayed code ended the grant it had made.
    expect((await rpc('/mcp', tokens.access_token)).status).toBe(401);

    const again = await authorize('Allow');
    const fresh = await exchange(again.received, again.state, again.verifier);
    const revoked = await oauth.revocationRequest(as, client, oauth.None(), fresh.refresh_token!, insecure);
    await oauth.processRevocationResponse(revoked);
    expect((await rpc('/mcp', fresh.access_token)).status).toBe(401);
  });

  it('sends access_denied back to the client when the person denies', async () => {
    const { state, received } = await authorize('Deny');
    expect(Object.fromEntries(received.searchParams)).toMatchObject({ error: 'access_denied', state, iss: origin });
    expect(() => oauth.validateAuthResponse(as, client, received, state)).toThrow(oauth.AuthorizationResponseError);
  });

  it('keeps the request through sign-up: a new person sees the client named, signs up, starts the trial at consent and allows', async () => {
    const { verifier, state, url } = await authorizationRequest();
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const newcomer = await watchedPage(context);
    const { page } = newcomer;
    const received = callback();
    await page.goto(url.href);
    await page.waitForURL(/\/signin\?next=/);
    const named = `to connect Strict test client, which will receive access at ${new URL(callbackUrl).host}`;
    expect(await page.getByText(`Sign in ${named}`).isVisible()).toBe(true);
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.waitForURL(/\/signup\?next=/);
    expect(await page.getByText(`Create an account ${named}`).isVisible()).toBe(true);
    await screenshot(page, 'oauth-signup-phone');
    await page.getByLabel('Your name').fill('Grace Hopper');
    // Not dashboard.test.ts's grace@example.com: the two files share a stack (support/shared-stack.ts).
    await page.getByLabel('Email').fill('hopper@example.com');
    await page.getByLabel('Password').fill('another long passphrase');
    await page.getByRole('button', { name: 'Create account' }).click();

    // A new organization has no plan: the consent page says so and offers the trial.
    await page.waitForURL(/\/oauth\/consent\?request=/);
    const notice = page.getByText('This organization has no plan yet');
    await expect.poll(() => notice.isVisible()).toBe(true);
    await screenshot(page, 'oauth-consent-no-plan-phone');
    await page.setViewportSize({ width: 1100, height: 800 });
    await screenshot(page, 'oauth-consent-no-plan');
    // The trial waits for the address to be confirmed: the link from the sign-up's email, opened beside it.
    expect(await page.getByText('Confirm your email address first').isVisible()).toBe(true);
    await (await openConfirmationLink(context, stack.urls.app!, 'hopper@example.com')).close();
    await page.reload();
    await page.getByRole('button', { name: 'Start free trial' }).click();
    await expect.poll(() => notice.count()).toBe(0);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((address) => address.href.startsWith(callbackUrl));

    const tokens = await exchange(await received, state, verifier);
    // On the trial, a metered tool works (without a plan it would answer 402 SUBSCRIPTION_REQUIRED).
    const call = await rpc('/mcp', tokens.access_token, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'data_linkedin_get_company_by_domain', arguments: { domain: 'trial.example' } } });
    expect(call.status).toBe(200);
    const answer = (await call.json()) as { result?: { isError?: boolean } };
    expect(answer.result).toBeDefined();
    expect(answer.result!.isError).toBeFalsy();
    expect(newcomer.problems).toEqual([]);
    await context.close();
  });

  it('refuses plain PKCE and a redirect URI the client did not register on its own page, redirecting nowhere', async () => {
    const base = { client_id: client.client_id, response_type: 'code', state: 'xyz', resource: resource() };
    const plain = await fetch(`${as.authorization_endpoint}?${new URLSearchParams({ ...base, redirect_uri: callbackUrl, code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' })}`, { redirect: 'manual' });
    // Before the person decides, nothing goes to the redirect URI (RFC 9700 section 4.11.2: registration is open).
    expect(plain.status).toBe(400);
    expect(plain.headers.get('location')).toBeNull();
    expect(await plain.text()).toContain('plain is refused');

    const elsewhere = await fetch(
      `${as.authorization_endpoint}?${new URLSearchParams({ ...base, redirect_uri: 'https://attacker.example/cb', code_challenge: 'a'.repeat(43), code_challenge_method: 'S256' })}`,
      { redirect: 'manual' },
    );
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.headers.get('location')).toBeNull();
    expect(await elsewhere.text()).toContain('is not a redirect URI registered by Strict test client');
  });
});

describe("the MCP SDK's own OAuth client", () => {
  it('completes the same flow and calls a tool', async () => {
    const provider = new (class implements OAuthClientProvider {
      client?: OAuthClientInformationMixed;
      saved?: OAuthTokens;
      verifier = '';
      authorizationUrl?: URL;
      get redirectUrl() {
        return callbackUrl;
      }
      get clientMetadata() {
        return { client_name: 'MCP SDK test', redirect_uris: [callbackUrl], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
      }
      clientInformation() {
        return this.client;
      }
      saveClientInformation(client: OAuthClientInformationMixed) {
        this.client = client;
      }
      tokens() {
        return this.saved;
      }
      saveTokens(tokens: OAuthTokens) {
        this.saved = tokens;
      }
      redirectToAuthorization(url: URL) {
        this.authorizationUrl = url;
      }
      saveCodeVerifier(verifier: string) {
        this.verifier = verifier;
      }
      codeVerifier() {
        return this.verifier;
      }
    })();

    const url = new URL(`${origin}/mcp`);
    const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await expect(new Client({ name: 'sdk', version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.authorizationUrl?.searchParams.get('resource')).toBe(url.href);
    const received = await consent(provider.authorizationUrl!, 'Allow');
    await first.finishAuth(received.searchParams.get('code')!);

    const mcp = new Client({ name: 'sdk', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
    await mcp.listTools();
    const listed = (await mcp.callTool({ name: 'sluice_tools_list_enabled', arguments: {} })).structuredContent as { tools: { name: string; usable: boolean; reason?: string }[] };
    // This stack has the professional-network vendor's and DataForSEO's settings, not the video platform's.
    expect(listed.tools.find((tool) => tool.name === 'data_linkedin_get_company_by_domain')).toMatchObject({ usable: true });
    expect(listed.tools.find((tool) => tool.name === 'data_web_scrape')).toMatchObject({ usable: true });
    expect(listed.tools.find((tool) => tool.name === 'data_youtube_search')).toMatchObject({
      usable: false,
      reason: 'Not configured on this server: needs YOUTUBE_API_KEY.',
    });
    const before = await purchased();
    expect((await mcp.callTool({ name: 'data_linkedin_get_company_by_domain', arguments: { domain: 'sdk-billing.com' } })).isError).toBeFalsy();
    expect(await purchased()).toBeLessThan(before);
    await mcp.close();
    expect(tab.problems).toEqual([]);
    sdkAccessToken = provider.saved!.access_token;
  });
});

describe('the dashboard pages of connected apps and MCP servers', () => {
  it('disconnects an app in the page, refusing its token from the next request', async () => {
    const { page } = tab;
    const workspaceId = (await (await page.request.get(`${stack.urls.app}/api/me`, RETRY_RESET)).json()).data.organizations[0].workspaces[0].id;
    await page.goto(`${stack.urls.app}/w/${workspaceId}/apps`);
    const row = page.locator('tr', { hasText: 'MCP SDK test' });
    await expect.poll(() => row.isVisible()).toBe(true);
    await screenshot(page, 'oauth-connected-apps');
    expect((await rpc('/mcp', sdkAccessToken)).status).toBe(200);
    await row.getByRole('button', { name: 'Disconnect MCP SDK test' }).click();
    await page.locator('#confirm-dialog').getByRole('button', { name: 'Disconnect' }).click();
    // The page reloads without the app.
    await expect.poll(() => page.getByText('No app is connected yet.').isVisible()).toBe(true);
    expect((await rpc('/mcp', sdkAccessToken)).status).toBe(401);

    await page.goto(`${stack.urls.app}/w/${workspaceId}/servers`);
    await page.getByLabel('Name', { exact: true }).fill('Company lookups');
    await page.getByRole('checkbox').first().check();
    await page.getByRole('button', { name: 'Create server' }).click();
    const server = page.locator('tr', { hasText: 'Company lookups' });
    await expect.poll(() => server.isVisible()).toBe(true);
    await server.getByRole('button', { name: 'Make default: Company lookups' }).click();
    await expect.poll(() => server.getByText('default').isVisible()).toBe(true);
    expect(tab.problems).toEqual([]);
  });
});
