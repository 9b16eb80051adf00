import { z } from 'zod';
import { clock } from '../../core/clock';
import { sha256Hex } from '../../core/digest';
import { ApiError } from '../../core/errors';
import { humanName } from '../../core/human-name';
import { newId } from '../../core/ids';
import { SafeFetcher } from '../../providers/builtin-web/safe-fetch';
import { builtinWebSettings } from '../../providers/builtin-web/settings';
import { OAuthError } from './errors';
import { LIFETIMES, type OAuthEnv } from './settings';
import type { Env } from '../../core/config';

/** A client the authorization server knows: registered dynamically, or described by its metadata document. */
export interface OAuthClient {
  id: string;
  name: string;
  redirectUris: string[];
  clientUri: string | null;
  /** True when the id is an https URL whose document described the client (its domain is verified). */
  fromDocument: boolean;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Single-word schemes a browser or the operating system handles itself: a code sent there would be run
 * (javascript:), shown (view-source:, data:), read from disk, or handed to some other program (mailto:),
 * never to the client that asked.
 */
const HANDLED_BY_THE_BROWSER_OR_SYSTEM = new Set([
  'about', 'blob', 'callto', 'chrome', 'chrome-extension', 'chrome-search', 'chrome-untrusted', 'content', 'data', 'devtools', 'edge', 'facetime',
  'file', 'filesystem', 'ftp', 'geo', 'intent', 'irc', 'jar', 'javascript', 'ldap', 'magnet', 'mailto', 'market', 'moz-extension', 'news', 'nntp',
  'opera', 'resource', 'safari-extension', 'sftp', 'sms', 'smb', 'ssh', 'tel', 'telnet', 'vbscript', 'view-source', 'webcal', 'ws', 'wss',
]);

/**
 * Why a redirect URI cannot be registered, or undefined when it can: https anywhere, http only on this
 * machine (RFC 8252 section 7.3, loopback), or an app's own private-use scheme (section 7.1): a reverse
 * domain name (com.example.app:/callback), or a single word no browser or system handles itself
 * (cursor://..., vscode://..., as MCP clients register). Never a fragment or a user name.
 */
export function redirectUriProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `${value} is not an absolute URI`;
  }
  if (url.hash || value.includes('#')) return `${value} has a fragment`;
  if (url.username || url.password) return `${value} carries a user name or password`;
  const scheme = url.protocol.replace(/:$/, '');
  if (scheme === 'https') return undefined;
  if (scheme === 'http') return LOOPBACK_HOSTS.has(url.hostname) ? undefined : `${value} is plain http off this machine; use https, or http on localhost / 127.0.0.1 / [::1]`;
  if (HANDLED_BY_THE_BROWSER_OR_SYSTEM.has(scheme) || scheme.endsWith('-extension')) {
    return `${value} uses the ${scheme}: scheme, which the browser or the system handles itself; use https, loopback http, or your app's own scheme (com.example.app:/callback)`;
  }
  return undefined;
}

/**
 * The redirect URI an authorization request may use, or undefined when it names none the client
 * registered. Exact string match (OAuth 2.1), except that a loopback http URI may carry any port
 * (RFC 8252 section 7.3: a native app listens on whatever port it is given); the URI asked for, with its
 * port, is the one used. One registered URI may be implied.
 */
export function allowedRedirectUri(client: OAuthClient, given: string | null): string | undefined {
  if (given === null) return client.redirectUris.length === 1 ? client.redirectUris[0] : undefined;
  if (client.redirectUris.includes(given)) return given;
  const asked = withoutLoopbackPort(given);
  return asked !== undefined && client.redirectUris.some((registered) => withoutLoopbackPort(registered) === asked) ? given : undefined;
}

/** A loopback http URI with its port removed; undefined for any other URI. */
function withoutLoopbackPort(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' || !LOOPBACK_HOSTS.has(url.hostname) || url.username || url.password || url.hash || value.includes('#')) return undefined;
  url.port = '';
  return url.href;
}

const RedirectUris = z
  .array(z.string().max(2000))
  .min(1, 'At least one redirect URI.')
  .max(20)
  .superRefine((uris, context) => {
    for (const [index, uri] of uris.entries()) {
      const problem = redirectUriProblem(uri);
      if (problem) context.addIssue({ code: 'custom', path: [index], message: problem });
    }
  });

/** The client's home page: a web page (https, or http), never a javascript: or data: URI a page could be tricked into opening. */
const ClientUri = z.url({ protocol: /^https?$/, error: 'client_uri must be an http(s) URL.' }).max(2000);

/**
 * How a registering client may ask to authenticate at the token endpoint. Every client is registered public
 * (`none`: PKCE protects the code), and the answer says so: RFC 7591 section 2 lets a server replace what a
 * client asked for, and Claude's connectors ask for `client_secret_post`, then read the method from the answer.
 * A client that asks for a key-based method (`private_key_jwt`, `tls_client_auth`) would then sign requests
 * nobody checks, so it is told at once.
 */
const TOKEN_ENDPOINT_AUTH_METHODS = ['none', 'client_secret_post', 'client_secret_basic'] as const;

/** RFC 7591 registration metadata this server honours; other members are ignored, as the RFC asks. */
const Registration = z.object({
  redirect_uris: RedirectUris,
  client_name: humanName(200).optional(),
  client_uri: ClientUri.optional(),
  token_endpoint_auth_method: z
    .enum(TOKEN_ENDPOINT_AUTH_METHODS, { error: 'Only public clients are registered (PKCE protects the code): token_endpoint_auth_method "none"; client_secret_post and client_secret_basic are registered as "none".' })
    .optional(),
  grant_types: z.array(z.enum(['authorization_code', 'refresh_token'], { error: 'Grant types: authorization_code and refresh_token.' })).optional(),
  response_types: z.array(z.literal('code', { error: 'The only response type is "code".' })).optional(),
  scope: z.string().max(1000).optional(),
});

/**
 * POST /oauth/register (RFC 7591): a public client, answered with its client_id and what was stored.
 *
 * A registration whose name, redirect URIs and home page are those of an earlier registration gets that client
 * back, its registration time renewed: a hosted MCP client (Claude's connectors, ChatGPT's) registers once per
 * person who connects, from its own few addresses, always with the same metadata. Two public clients with the
 * same redirect URIs are the same client to this server (no secret tells them apart; PKCE and the redirect URI
 * protect each authorization), as one metadata document's client_id serves every user of an app. Only a
 * registration that adds a client is counted (`countNew`, the per-address throttle), so those hosts are not
 * refused from their twenty-first user in an hour, and a script still cannot file new clients by the thousand.
 */
export async function registerClient(db: D1Database, body: unknown, countNew: () => Promise<void>): Promise<Record<string, unknown>> {
  const parsed = Registration.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path[0];
    throw new OAuthError(field === 'redirect_uris' ? 'invalid_redirect_uri' : 'invalid_client_metadata', `${issue.path.join('.') || 'body'}: ${issue.message}`);
  }
  const metadata = parsed.data;
  const name = metadata.client_name ?? 'Unnamed MCP client';
  const clientUri = metadata.client_uri ?? null;
  const metadataHash = await sha256Hex(JSON.stringify([name, metadata.redirect_uris, clientUri]));
  const createdAt = new Date(clock.now()).toISOString();
  const renew = db.prepare('UPDATE oauth_clients SET created_at = ? WHERE metadata_hash = ? RETURNING id').bind(createdAt, metadataHash);
  let id = (await renew.first<{ id: string }>())?.id;
  if (id === undefined) {
    await countNew();
    // Two identical registrations at once: the second renews the row the first wrote.
    id = (await db
      .prepare(
        `INSERT INTO oauth_clients (id, name, redirect_uris, client_uri, from_document, created_at, metadata_hash) VALUES (?, ?, ?, ?, 0, ?, ?)
         ON CONFLICT (metadata_hash) WHERE metadata_hash IS NOT NULL DO UPDATE SET created_at = excluded.created_at RETURNING id`,
      )
      .bind(newId('oac'), name, JSON.stringify(metadata.redirect_uris), clientUri, createdAt, metadataHash)
      .first<{ id: string }>())!.id;
  }
  return {
    client_id: id,
    client_id_issued_at: Math.floor(Date.parse(createdAt) / 1000),
    client_name: name,
    redirect_uris: metadata.redirect_uris,
    ...(clientUri ? { client_uri: clientUri } : {}),
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}

/** A client ID metadata document's URL: https with a path beyond "/" (draft-ietf-oauth-client-id-metadata-document). */
export function isMetadataDocumentUrl(clientId: string): boolean {
  try {
    const url = new URL(clientId);
    return url.protocol === 'https:' && url.pathname !== '/' && !url.hash && !url.username && !url.password;
  } catch {
    return false;
  }
}

interface ClientRow {
  id: string;
  name: string;
  redirectUris: string;
  clientUri: string | null;
  fromDocument: number;
  expiresAt: number | null;
}

/** The client a client_id names: a registration, or the (cached) metadata document at that URL. Undefined when unknown. */
export async function findClient(env: OAuthEnv, clientId: string): Promise<OAuthClient | undefined> {
  const row = await env.DB.prepare(
    `SELECT id, name, redirect_uris AS redirectUris, client_uri AS clientUri, from_document AS fromDocument, expires_at AS expiresAt
       FROM oauth_clients WHERE id = ?`,
  )
    .bind(clientId)
    .first<ClientRow>();
  const fresh = row && (row.expiresAt === null || row.expiresAt > clock.now());
  if (row && fresh) return { id: row.id, name: row.name, redirectUris: JSON.parse(row.redirectUris), clientUri: row.clientUri, fromDocument: row.fromDocument === 1 };
  if (!isMetadataDocumentUrl(clientId)) return undefined;
  return fetchMetadataDocument(env, clientId);
}

const MAX_DOCUMENT_BYTES = 5 * 1024;

const MetadataDocument = z.object({
  client_id: z.string(),
  client_name: humanName(200),
  redirect_uris: RedirectUris,
  client_uri: ClientUri.optional(),
  token_endpoint_auth_method: z.literal('none', { error: 'This server serves public clients only (token_endpoint_auth_method "none").' }).optional(),
});

/**
 * Fetches a client ID metadata document through the built-in web provider's safe fetch (public
 * addresses only, or those of OAUTH_CLIENT_ALLOW_PRIVATE_HOSTS, never the scraper's allowance; every redirect hop
 * checked, 5 KB at most), validates it and keeps it for as long as its Cache-Control allows, a day at most.
 */
async function fetchMetadataDocument(env: OAuthEnv, clientId: string): Promise<OAuthClient> {
  const fetcher = new SafeFetcher({ settings: builtinWebSettings(env as unknown as Env, 'OAUTH_CLIENT_ALLOW_PRIVATE_HOSTS'), signal: AbortSignal.timeout(5_000) });
  const refuse = (why: string) => new OAuthError('invalid_client', `The client's metadata document at ${clientId} ${why}.`);
  let fetched;
  try {
    fetched = await fetcher.fetch(clientId, { headers: { accept: 'application/json' }, maxBytes: MAX_DOCUMENT_BYTES, field: 'client_id' });
  } catch (error) {
    throw refuse(`could not be fetched (${error instanceof ApiError ? error.message : 'network error'})`);
  }
  if (fetched.status !== 200) throw refuse(`answered HTTP ${fetched.status}`);
  if (fetched.url !== clientId) throw refuse(`redirects to ${fetched.url}`);
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(fetched.body));
  } catch {
    throw refuse('is not JSON');
  }
  const parsed = MetadataDocument.safeParse(json);
  if (!parsed.success) throw refuse(`is not valid: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`);
  if (parsed.data.client_id !== clientId) throw refuse(`names another client_id (${parsed.data.client_id})`);

  const maxAge = Number(/max-age=(\d+)/.exec(fetched.headers.get('cache-control') ?? '')?.[1] ?? 3600) * 1000;
  const noStore = /no-store|no-cache/.test(fetched.headers.get('cache-control') ?? '');
  const expiresAt = clock.now() + (noStore ? 0 : Math.min(maxAge, LIFETIMES.clientDocument));
  const client: OAuthClient = { id: clientId, name: parsed.data.client_name, redirectUris: parsed.data.redirect_uris, clientUri: parsed.data.client_uri ?? null, fromDocument: true };
  await env.DB.prepare(
    `INSERT INTO oauth_clients (id, name, redirect_uris, client_uri, from_document, created_at, expires_at) VALUES (?, ?, ?, ?, 1, ?, ?)
     ON CONFLICT (id) DO UPDATE SET name = excluded.name, redirect_uris = excluded.redirect_uris, client_uri = excluded.client_uri, expires_at = excluded.expires_at`,
  )
    .bind(client.id, client.name, JSON.stringify(client.redirectUris), client.clientUri, new Date(clock.now()).toISOString(), expiresAt)
    .run();
  return client;
}
