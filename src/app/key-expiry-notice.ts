import { clock, nowIso } from '../core/clock';
import { type Env, publicUrls } from '../core/config';
import type { ApiKeyRecord } from '../core/records';
import { getKey } from '../services/accounts';
import { announceKey } from '../services/webhooks/announce';
import { sendEmailOrLog } from './email';

/** How long before its expiry a key is noticed, and the shortest life a key needs to be noticed at all. */
export const NOTICE_DAYS = 7;
/** Keys noticed by one run at most: the rest, still within their seven days, the next day's run. */
const KEYS_A_RUN = 500;
const DAY_MS = 86_400_000;

interface Expiring {
  id: string;
  name: string;
  expiresAt: string;
  createdBy: string | null;
  workspaceId: string;
  workspaceName: string;
  organizationId: string;
  organizationName: string;
}

/**
 * The dashboard's daily run: each API key that expires within seven days, given longer than that when its expiry was
 * set (at its making, or since), and not noticed for this expiry yet, is told to its maker by email (or, when the maker
 * no longer belongs to the organization or the operator made it, to its owners and admins) and announced as
 * `key.expiring` to the workspace's webhook endpoints. A key is claimed before it is told, so two runs never tell one key
 * twice; a run that dies in between leaves that key untold. Answers how many keys were told.
 */
export async function noticeExpiringKeys(env: Env): Promise<number> {
  const now = clock.now();
  const { results } = await env.DB.prepare(
    `SELECT k.id, k.name, k.expires_at AS expiresAt, k.created_by AS createdBy, k.workspace_id AS workspaceId, w.name AS workspaceName,
            o.id AS organizationId, o.name AS organizationName
       FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id JOIN organizations o ON o.id = w.organization_id
      WHERE k.scope = 'workspace' AND k.revoked_at IS NULL AND k.expires_at IS NOT NULL AND k.expires_at > ?1 AND k.expires_at <= ?2
        AND k.expiry_noticed_at IS NULL AND julianday(k.expires_at) - julianday(COALESCE(k.expiry_set_at, k.created_at)) > ?3
        AND w.deleted_at IS NULL AND o.closed_at IS NULL
      ORDER BY k.expires_at LIMIT ?4`,
  )
    .bind(new Date(now).toISOString(), new Date(now + NOTICE_DAYS * DAY_MS).toISOString(), NOTICE_DAYS, KEYS_A_RUN)
    .all<Expiring>();
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
  const page = `${publicUrls(env).app}/w/${key.workspaceId}/keys`;
  for (const person of people) {
    const why = person.maker
      ? 'You get this once for this expiry, because you made the key.'
      : `You get this once for this expiry, as an owner or admin of ${key.organizationName}: ${key.createdBy === null ? 'the key was made by the operator of this installation, not by a member' : 'whoever made the key no longer belongs to it'}.`;
    await sendEmailOrLog(
      env,
      {
        to: person.email,
        subject: `Your Sluice API key "${key.name}" expires on ${key.expiresAt.slice(0, 10)}`,
        text: `Hello,\n\nThe API key "${key.name}" (${record.hint}) of the workspace ${key.workspaceName} expires at ${when} UTC, in ${days} day${days === 1 ? '' : 's'}. From then on every call with it is refused with 401.\n\nTo keep it working, give it a new expiry on the keys page: ${page}\nOr make a new key there and move to it before then.\n\n${why}`,
      },
      { note: 'key expiry notice not sent', keyId: key.id, userId: person.id },
    );
  }
  await announceKey(env, 'key.expiring', { ...record, expiresAt: key.expiresAt });
}
