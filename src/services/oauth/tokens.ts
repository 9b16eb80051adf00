import { type KeyPrincipal, lacksRequiredSecondFactorSql } from '../../core/records';
import { clock } from '../../core/clock';
import { sha256Hex } from '../../core/digest';
import { randomHex } from '../../core/ids';
import { OAuthError } from './errors';
import { LIFETIMES, TOKEN_PREFIX } from './settings';

/**
 * The token endpoint's two grants and the revocation endpoint. Every single-use rule is one conditional
 * statement in D1 (a code's `used_at` set only if still empty, a refresh token's likewise), so two racing
 * requests cannot both spend the same one. A code presented a second time is taken as stolen: the grant ends,
 * with every token it issued (RFC 9700 section 4.14.2). So is a refresh token presented again, with one
 * exception: by the client it was issued to, within REFRESH_REUSE_GRACE_MS of its first use.
 *
 * A grant's refresh tokens all carry a secret of the grant's own, its family (`sluice_ort_<family>_<secret>`;
 * the grant keeps the family's hash). A grant keeps its newest REFRESH_TOKENS_PER_GRANT refresh tokens, spent
 * or not, and at most ACCESS_TOKENS_PER_GRANT access tokens, however often it is refreshed (it used to keep
 * every refresh token it had spent for its thirty days: at one refresh a second, 2.6 million rows). A spent
 * token let go of is presented again: it is not found, its family is, and the grant ends. Grants made before
 * families had no family: their next refresh gives them one.
 */

/**
 * How long a spent refresh token still refreshes for the client it was issued to. The MCP SDK's client sends
 * its requests in parallel and, when they all meet an expired access token, each refreshes with the one refresh
 * token it holds: the first spends it, and the others, refused as replays, used to end the grant under the
 * first one's new tokens, so the person had to consent again. Within the grace each gets tokens of its own
 * (RFC 9700 section 4.14.2 leaves the rule to the server; Okta and Auth0 allow the same). Past it, a replay
 * ends the grant as before.
 */
export const REFRESH_REUSE_GRACE_MS = 60_000;

/** Refresh tokens a grant keeps, spent or not, newest first: a spent one within its grace, and the ones a burst of refreshes handed out. */
export const REFRESH_TOKENS_PER_GRANT = 8;

interface GrantRow {
  id: string;
  clientId: string;
  resource: string;
  scope: string;
  redirectUri: string;
  codeChallenge: string;
  codeExpiresAt: number;
  expiresAt: number;
  revokedAt: string | null;
  createdAt: string;
}

/** The access tokens a grant keeps, newest first: a client uses the last one it was given, so older ones go. */
export const ACCESS_TOKENS_PER_GRANT = 5;

const FAMILY_HEX = 32;
const REFRESH_SHAPE = new RegExp(`^${TOKEN_PREFIX.refresh}([0-9a-f]{${FAMILY_HEX}})_[0-9a-f]{64}$`);

/** The family a refresh token names, or null for a token of another shape (a grant's from before families). */
function familyOf(token: string): string | null {
  return REFRESH_SHAPE.exec(token)?.[1] ?? null;
}

/** The grant of a refresh token's family: a spent token of it was deleted, so that is how it is recognised. */
async function grantOfFamily(db: D1Database, token: string): Promise<{ id: string; clientId: string } | null> {
  const family = familyOf(token);
  if (!family) return null;
  return db.prepare('SELECT id, client_id AS clientId FROM oauth_grants WHERE refresh_family_hash = ?').bind(await sha256Hex(family)).first<{ id: string; clientId: string }>();
}

const grantColumns = (table: string) =>
  `${table}.id, ${table}.client_id AS clientId, ${table}.resource, ${table}.scope, ${table}.redirect_uri AS redirectUri,
   ${table}.code_challenge AS codeChallenge, ${table}.code_expires_at AS codeExpiresAt, ${table}.expires_at AS expiresAt, ${table}.revoked_at AS revokedAt,
   ${table}.created_at AS createdAt`;

export async function exchangeToken(db: D1Database, form: URLSearchParams): Promise<Record<string, unknown>> {
  // A request without a grant type misses a required parameter (RFC 6749 section 5.2): invalid_request, not unsupported.
  const grantType = required(form, 'grant_type');
  if (grantType === 'authorization_code') return exchangeCode(db, form);
  if (grantType === 'refresh_token') return refresh(db, form);
  throw new OAuthError('unsupported_grant_type', 'Grant types: authorization_code and refresh_token.');
}

function required(form: URLSearchParams, name: string): string {
  const value = form.get(name);
  if (!value) throw new OAuthError('invalid_request', `${name} is required.`);
  return value;
}

async function exchangeCode(db: D1Database, form: URLSearchParams): Promise<Record<string, unknown>> {
  const code = required(form, 'code');
  const clientId = required(form, 'client_id');
  const verifier = required(form, 'code_verifier');
  const codeHash = await sha256Hex(code);
  const now = clock.now();

  const grant = await db
    .prepare(`UPDATE oauth_grants SET code_used_at = ? WHERE code_hash = ? AND code_used_at IS NULL RETURNING ${grantColumns('oauth_grants')}`)
    .bind(now, codeHash)
    .first<GrantRow>();
  if (!grant) {
    const replayed = await db.prepare('SELECT id FROM oauth_grants WHERE code_hash = ?').bind(codeHash).first<{ id: string }>();
    if (replayed) {
      await revokeGrant(db, replayed.id, 'authorization code used twice');
      throw new OAuthError('invalid_grant', 'This authorization code was already used; the grant it made is revoked.');
    }
    throw new OAuthError('invalid_grant', 'Unknown authorization code.');
  }
  if (grant.revokedAt) throw new OAuthError('invalid_grant', 'This authorization was revoked.');
  try {
    if (grant.codeExpiresAt <= now) throw new OAuthError('invalid_grant', 'This authorization code has expired; codes live one minute.');
    if (grant.clientId !== clientId) throw new OAuthError('invalid_grant', 'This code was issued to another client.');
    const redirectUri = form.get('redirect_uri');
    if (redirectUri !== null && redirectUri !== grant.redirectUri) throw new OAuthError('invalid_grant', 'redirect_uri differs from the one of the authorization request.');
    if (!(await verifierMatches(verifier, grant.codeChallenge))) throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge (PKCE S256).');
    assertSameResource(form, grant);
  } catch (error) {
    // The code is spent whatever was wrong (one try, so a verifier cannot be guessed), so its grant will never have a
    // token: it is ended, and no list shows the client connected.
    if (error instanceof OAuthError) await revokeGrant(db, grant.id, `its code's exchange was refused: ${error.description}`);
    throw error;
  }
  return issueTokens(db, grant, now, { family: randomHex(FAMILY_HEX / 2), adopt: true });
}

async function refresh(db: D1Database, form: URLSearchParams): Promise<Record<string, unknown>> {
  const token = required(form, 'refresh_token');
  const clientId = required(form, 'client_id');
  const hash = await sha256Hex(token);
  const now = clock.now();

  const known = await db
    .prepare(`SELECT ${grantColumns('g')}, t.used_at AS usedAt FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id WHERE t.hash = ? AND t.kind = 'refresh'`)
    .bind(hash)
    .first<GrantRow & { usedAt: number | null }>();
  if (!known) {
    const replayed = await grantOfFamily(db, token);
    if (!replayed) throw new OAuthError('invalid_grant', 'Unknown refresh token.');
    await revokeGrant(db, replayed.id, 'refresh token used twice');
    throw alreadyUsed();
  }
  // Checked before the token is spent, so a mistaken request does not cost the client its grant.
  if (known.clientId !== clientId) throw new OAuthError('invalid_grant', 'This refresh token was issued to another client.');
  if (known.revokedAt) throw new OAuthError('invalid_grant', 'This authorization was revoked.');
  if (known.expiresAt <= now) throw new OAuthError('invalid_grant', 'This authorization has expired; authorize again.');
  assertSameResource(form, known);
  // Neither refreshed nor spent while the person is no member, or lacks a second factor the organization requires (checkAccessToken).
  const standing = await grantStanding(db, known.id);
  if (!standing?.member) throw new OAuthError('invalid_grant', 'The person who authorized this client is no longer a member of the organization.');
  if (standing.lacksTwoFactor) throw new OAuthError('invalid_grant', `${standing.organizationName} requires two-factor sign-in; the person who authorized this client has not turned it on.`);

  // A refresh keeps the grant going for LIFETIMES.grant more, within a year of consent.
  const renewed: GrantRow = { ...known, expiresAt: Math.max(known.expiresAt, Math.min(now + LIFETIMES.grant, Date.parse(known.createdAt) + LIFETIMES.grantAtMost)) };
  const family = familyOf(token);
  let usedAt = known.usedAt;
  if (usedAt === null) {
    const spent = await db.prepare('UPDATE oauth_tokens SET used_at = ? WHERE hash = ? AND used_at IS NULL').bind(now, hash).run();
    // A token from before families gets the grant a family with its successor.
    if (spent.meta.changes === 1) return issueTokens(db, renewed, now, family ? { family, adopt: false } : { family: randomHex(FAMILY_HEX / 2), adopt: true });
    usedAt = now; // spent by a request beside this one, just now
  }
  if (family && now - usedAt < REFRESH_REUSE_GRACE_MS) return issueTokens(db, renewed, now, { family, adopt: false });
  await revokeGrant(db, known.id, 'refresh token used twice');
  throw alreadyUsed();
}

function alreadyUsed(): OAuthError {
  return new OAuthError('invalid_grant', 'This refresh token was already used; the grant is revoked. Authorize again.');
}

/** A token request may repeat the resource; it cannot move the grant to another one (RFC 8707). */
function assertSameResource(form: URLSearchParams, grant: GrantRow): void {
  const resources = form.getAll('resource');
  if (resources.length > 1 || (resources.length === 1 && resources[0] !== grant.resource)) {
    throw new OAuthError('invalid_target', `This grant is for ${grant.resource} only.`);
  }
}

/** A new access token and refresh token of `family`; `adopt` gives the grant that family (its first tokens). */
async function issueTokens(db: D1Database, grant: GrantRow, now: number, { family, adopt }: { family: string; adopt: boolean }): Promise<Record<string, unknown>> {
  const accessToken = `${TOKEN_PREFIX.access}${randomHex(32)}`;
  const refreshToken = `${TOKEN_PREFIX.refresh}${family}_${randomHex(32)}`;
  const accessExpiresAt = Math.min(now + LIFETIMES.accessToken, grant.expiresAt);
  await db.batch([
    ...(adopt ? [db.prepare('UPDATE oauth_grants SET refresh_family_hash = ? WHERE id = ?').bind(await sha256Hex(family), grant.id)] : []),
    // A refresh's later end (never an earlier one: two refreshes at once each write theirs).
    db.prepare('UPDATE oauth_grants SET expires_at = ?2 WHERE id = ?1 AND expires_at < ?2').bind(grant.id, grant.expiresAt),
    db.prepare(`INSERT INTO oauth_tokens (hash, grant_id, kind, expires_at) VALUES (?, ?, 'access', ?)`).bind(await sha256Hex(accessToken), grant.id, accessExpiresAt),
    db.prepare(`INSERT INTO oauth_tokens (hash, grant_id, kind, expires_at) VALUES (?, ?, 'refresh', ?)`).bind(await sha256Hex(refreshToken), grant.id, grant.expiresAt),
    // The newest refresh tokens, unspent ones first (the pair a burst's client kept is one of them), then spent
    // ones: one let go of is known by its family if it comes back.
    db
      .prepare(
        `DELETE FROM oauth_tokens WHERE grant_id = ?1 AND kind = 'refresh' AND rowid NOT IN (
           SELECT rowid FROM oauth_tokens WHERE grant_id = ?1 AND kind = 'refresh' ORDER BY used_at IS NULL DESC, rowid DESC LIMIT ?2)`,
      )
      .bind(grant.id, REFRESH_TOKENS_PER_GRANT),
    // Expired access tokens are of no further use, nor are those older than the newest few.
    db
      .prepare(
        `DELETE FROM oauth_tokens WHERE grant_id = ?1 AND kind = 'access' AND (expires_at <= ?2 OR rowid NOT IN (
           SELECT rowid FROM oauth_tokens WHERE grant_id = ?1 AND kind = 'access' ORDER BY expires_at DESC, rowid DESC LIMIT ?3))`,
      )
      .bind(grant.id, now, ACCESS_TOKENS_PER_GRANT),
  ]);
  return {
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: Math.floor((accessExpiresAt - now) / 1000),
    refresh_token: refreshToken,
    scope: grant.scope,
    resource: grant.resource,
  };
}

/** base64url(SHA-256(verifier)) against the stored challenge, in constant time (RFC 7636 section 4.6). */
async function verifierMatches(verifier: string, challenge: string): Promise<boolean> {
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) return false;
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  const computed = new TextEncoder().encode(btoa(String.fromCharCode(...digest)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''));
  const expected = new TextEncoder().encode(challenge);
  return computed.byteLength === expected.byteLength && crypto.subtle.timingSafeEqual(computed, expected);
}

/**
 * RFC 7009: a refresh token ends its whole grant, an access token only itself. The answer is the same
 * whatever the token was (unknown, already revoked, another client's), so it reveals nothing.
 */
export async function revokeToken(db: D1Database, form: URLSearchParams): Promise<void> {
  const token = required(form, 'token');
  const clientId = form.get('client_id');
  const row = await db
    .prepare('SELECT t.kind, t.grant_id AS grantId, g.client_id AS clientId FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id WHERE t.hash = ?')
    .bind(await sha256Hex(token))
    .first<{ kind: 'access' | 'refresh'; grantId: string; clientId: string }>();
  if (!row) {
    // A spent refresh token of a family still names its grant, as a used one kept did before families.
    const grant = await grantOfFamily(db, token);
    if (grant && (clientId === null || clientId === grant.clientId)) await revokeGrant(db, grant.id, 'revoked by the client');
    return;
  }
  if (clientId !== null && clientId !== row.clientId) return;
  if (row.kind === 'refresh') await revokeGrant(db, row.grantId, 'revoked by the client');
  else await db.prepare('DELETE FROM oauth_tokens WHERE hash = ?').bind(await sha256Hex(token)).run();
}

/** Ends a grant: its tokens are refused from the next request (validation reads the grant every time). */
export async function revokeGrant(db: D1Database, grantId: string, reason: string): Promise<void> {
  await db.batch([
    db.prepare('UPDATE oauth_grants SET revoked_at = ?, revoked_reason = ? WHERE id = ? AND revoked_at IS NULL').bind(new Date(clock.now()).toISOString(), reason, grantId),
    db.prepare(`DELETE FROM oauth_tokens WHERE grant_id = ? AND kind = 'access'`).bind(grantId),
  ]);
}

/** A grant as its person's standing has it: revoked or not, until when, whether they are still a member, with the second factor it may require. */
export interface GrantStanding {
  revokedAt: string | null;
  expiresAt: number;
  organizationName: string;
  member: number;
  lacksTwoFactor: number;
}

/** A grant's standing (`checkAccessToken` reads the same with the token it checks); null for no such grant. */
export function grantStanding(db: D1Database, grantId: string): Promise<GrantStanding | null> {
  return db
    .prepare(
      `SELECT g.revoked_at AS revokedAt, g.expires_at AS expiresAt, o.name AS organizationName, m.user_id IS NOT NULL AS member,
              ${lacksRequiredSecondFactorSql('o', 'g.user_id')} AS lacksTwoFactor
         FROM oauth_grants g JOIN workspaces w ON w.id = g.workspace_id JOIN organizations o ON o.id = w.organization_id
         LEFT JOIN memberships m ON m.organization_id = o.id AND m.user_id = g.user_id
        WHERE g.id = ?`,
    )
    .bind(grantId)
    .first<GrantStanding>();
}

export type AccessTokenCheck = { ok: true; principal: KeyPrincipal; resource: string } | { ok: false; description: string };

export function isAccessToken(token: string): boolean {
  return token.startsWith(TOKEN_PREFIX.access);
}

/**
 * Who an OAuth access token acts for, checked on every request: the token exists and has not expired, its grant is
 * not revoked, the person who consented is still a member of the organization (with the second factor it may
 * require), and the token's audience is the resource called. The principal carries the grant's id where an API
 * key's id would be, so usage rows name the grant that made the call.
 */
export async function checkAccessToken(db: D1Database, token: string, resource: string): Promise<AccessTokenCheck> {
  const row = await db
    .prepare(
      `SELECT t.expires_at AS expiresAt, g.id AS grantId, g.resource, g.revoked_at AS revokedAt, g.workspace_id AS workspaceId,
              o.id AS organizationId, o.name AS organizationName, m.user_id AS member,
              ${lacksRequiredSecondFactorSql('o', 'g.user_id')} AS lacksTwoFactor
         FROM oauth_tokens t
         JOIN oauth_grants g ON g.id = t.grant_id
         JOIN workspaces w ON w.id = g.workspace_id
         JOIN organizations o ON o.id = w.organization_id
         LEFT JOIN memberships m ON m.organization_id = o.id AND m.user_id = g.user_id
        WHERE t.hash = ? AND t.kind = 'access' AND w.deleted_at IS NULL`,
    )
    .bind(await sha256Hex(token))
    .first<{
      expiresAt: number;
      grantId: string;
      resource: string;
      revokedAt: string | null;
      workspaceId: string;
      organizationId: string;
      organizationName: string;
      member: string | null;
      lacksTwoFactor: number;
    }>();
  if (!row) return { ok: false, description: 'Unknown or revoked access token' };
  if (row.revokedAt) return { ok: false, description: 'This authorization was revoked' };
  if (row.expiresAt <= clock.now()) return { ok: false, description: 'The access token has expired; refresh it' };
  if (row.member === null) return { ok: false, description: 'The person who authorized this client is no longer a member of the organization' };
  if (row.lacksTwoFactor) return { ok: false, description: `${row.organizationName} requires two-factor sign-in; the person who authorized this client has not turned it on` };
  if (row.resource !== resource) return { ok: false, description: `This access token was issued for ${row.resource}, not ${resource}` };
  return {
    ok: true,
    resource: row.resource,
    principal: {
      keyId: row.grantId,
      scope: 'workspace_mcp',
      revoked: false,
      workspaceId: row.workspaceId,
      organizationId: row.organizationId,
      grant: true,
    },
  };
}
