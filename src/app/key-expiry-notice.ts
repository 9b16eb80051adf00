import { clock, nowIso } from '../core/clock';
import { type Env, publicUrls } from '../core/config';
import type { ApiKeyRecord } from '../core/records';
import { getKey } from '../services/accounts';
import { announceKey } from '../services/webhooks/announce';
import { sendEmailOrLog } from '../services/email';

/** How long before its expiry a key is noticed, and the shortest life a key needs to be noticed at all. */
export const NOTICE_DAYS = 7;
/** Keys (and again MCP tokens) noticed by one run at most: the rest, still within their seven days, the next day's run. */
const KEYS_A_RUN = 500;
const DAY_MS = 86_400_000;

interface Expiring {
  id: string;
  scope: 'workspace' | 'workspace_mcp';
  name: string;
  expiresAt: string;
  createdBy: string | null;
  workspaceId: string;
  workspaceName: string;
  organizationId: string;
  organizationName: string;
}

/** What the notice calls a credential of each scope, and the page where it is given a new expiry. */
const KINDS = {
  workspace: { noun: 'API key', page: 'keys', refused: 'every call with it is refused with 401' },
  workspace_mcp: { noun: 'MCP token', page: 'mcp', refused: 'every MCP client using it is refused with 401' },
} as const;

/**
 * The dashboard's daily run: each API key or MCP token that expires within seven days, given longer than that when its expiry was
 * set (at its making, or since), and not noticed for this expiry yet, is told to its maker by email (or, when the maker
 * no longer belongs to the organization or the operator made it, to its owners and admins) and announced as
 * `key.expiring` to the workspace's webhook endpoints. A key is claimed before it is told, so two runs never tell one key
 * twice; a run that dies in between leaves that key untold. Answers how many keys were told.
 */
export async function noticeExpiringKeys(env: Env): Promise<number> {
  const now = clock.now();
  // One query a scope, so each reads its own partial index of unrevoked keys by expiry (migrations 0049 and 0052).
  const results: Expiring[] = [];
  for (const scope of Object.keys(KINDS)) {
    const { results: expiring } = await env.DB.prepare(
      `SELECT k.id, k.scope, k.name, k.expires_at AS expiresAt, k.created_by AS createdBy, k.workspace_id AS workspaceId, w.name AS workspaceName,
              o.id AS organizationId, o.name AS organizationName
         FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id JOIN organizations o ON o.id = w.organization_id
        WHERE k.scope = '${scope}' AND k.revoked_at IS NULL AND k.expires_at IS NOT NULL AND k.expires_at > ?1 AND k.expires_at <= ?2
          AND k.expiry_noticed_at IS NULL AND julianday(k.expires_at) - julianday(COALESCE(k.expiry_set_at, k.created_at)) > ?3
          AND w.deleted_at IS NULL AND o.closed_at IS NULL
        ORDER BY k.expires_at LIMIT ?4`,
    )
      .bind(new Date(now).toISOString(), new Date(now + NOTICE_DAYS * DAY_MS).toISOString(), NOTICE_DAYS, KEYS_A_RUN)
      .all<Expiring>();
    results.push(...expiring);
  }
  let told = 0;
  for (const key of results) {
    // Still as read: not told meanwhile, nor revoked, nor given another expiry.
    const claimed = await env.DB.prepare('UPDATE api_keys SET expiry_noticed_at = ?1 WHERE id = ?2 AND expiry_noticed_at IS NULL AND revoked_at IS NULL AND expires_at = ?3')
      .bind(nowIso(), key.id, key.expiresAt)
      .run();
    if (claimed.meta.changes !== 1) continue;
    await tell(env, key, await getKey(env.DB, key.id));
    told += 1;
  }
  return told;
}

async function tell(env: Env, key: Expiring, record: ApiKeyRecord): Promise<void> {
  const { results: people } = await env.DB.prepare(
    `SELECT u.id, u.email, u.id = ?2 AS maker FROM memberships m JOIN users u ON u.id = m.user_id
      WHERE m.organization_id = ?1 AND u.deleted_at IS NULL
        AND (u.id = ?2 OR (m.role IN ('owner', 'admin') AND NOT EXISTS (SELECT 1 FROM memberships WHERE organization_id = ?1 AND user_id = ?2)))`,
  )
    .bind(key.organizationId, key.createdBy)
    .all<{ id: string; email: string; maker: number }>();
  const when = key.expiresAt.slice(0, 16).replace('T', ' ');
  const days = Math.max(1, Math.round((Date.parse(key.expiresAt) - clock.now()) / DAY_MS));
  const kind = KINDS[key.scope];
  const page = `${publicUrls(env).app}/w/${key.workspaceId}/${kind.page}`;
  const what = kind.noun.replace('API ', '');
  for (const person of people) {
    const why = person.maker
      ? `You get this once for this expiry, because you made the ${what}.`
      : `You get this once for this expiry, as an owner or admin of ${key.organizationName}: ${key.createdBy === null ? `the ${what} was made by the operator of this installation, not by a member` : `whoever made the ${what} no longer belongs to it`}.`;
    await sendEmailOrLog(
      env,
      {
        to: person.email,
        subject: `Your Sluice ${kind.noun} "${key.name}" expires on ${key.expiresAt.slice(0, 10)}`,
        text: `Hello,\n\nThe ${kind.noun} "${key.name}" (${record.hint}) of the workspace ${key.workspaceName} expires at ${when} UTC, in ${days} day${days === 1 ? '' : 's'}. From then on ${kind.refused}.\n\nTo keep it working, give it a new expiry on this page: ${page}\nOr make a new ${what} there and move to it before then.\n\n${why}`,
      },
      { note: 'key expiry notice not sent', keyId: key.id, userId: person.id },
    );
  }
  await announceKey(env, 'key.expiring', { ...record, expiresAt: key.expiresAt });
}
