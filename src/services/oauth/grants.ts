import { clock } from '../../core/clock';

/** A client a person connected to a workspace, as the dashboard lists it. */
export interface ConnectedClient {
  grantId: string;
  clientId: string;
  clientName: string;
  /** True when the client's name comes from a metadata document at its own https URL (its domain is verified). */
  verified: boolean;
  redirectHost: string;
  resource: string;
  userId: string;
  userName: string | null;
  createdAt: string;
  lastUsedAt: string | null;
}

/** The workspace's grants still in force (not revoked, not expired), newest first. */
export async function listConnectedClients(db: D1Database, workspaceId: string): Promise<ConnectedClient[]> {
  const { results } = await db
    .prepare(
      `SELECT g.id AS grantId, g.client_id AS clientId, COALESCE(c.name, g.client_id) AS clientName, COALESCE(c.from_document, 0) AS verified,
              g.redirect_uri AS redirectUri, g.resource, g.user_id AS userId, u.name AS userName, g.created_at AS createdAt, g.last_used_at AS lastUsedAt
         FROM oauth_grants g
         LEFT JOIN oauth_clients c ON c.id = g.client_id
         LEFT JOIN users u ON u.id = g.user_id
        WHERE g.workspace_id = ? AND g.revoked_at IS NULL AND g.code_used_at IS NOT NULL AND g.expires_at > ?
        ORDER BY g.created_at DESC, g.id DESC`,
    )
    .bind(workspaceId, clock.now())
    .all<Omit<ConnectedClient, 'verified' | 'redirectHost'> & { verified: number; redirectUri: string }>();
  return results.map(({ redirectUri, verified, ...row }) => ({ ...row, verified: verified === 1, redirectHost: hostOf(redirectUri) }));
}

export async function findGrant(db: D1Database, grantId: string): Promise<{ id: string; workspaceId: string; userId: string; revokedAt: string | null } | undefined> {
  const row = await db
    .prepare('SELECT id, workspace_id AS workspaceId, user_id AS userId, revoked_at AS revokedAt FROM oauth_grants WHERE id = ?')
    .bind(grantId)
    .first<{ id: string; workspaceId: string; userId: string; revokedAt: string | null }>();
  return row ?? undefined;
}

/** Stamps a grant's last use at most once a minute per isolate: a busy client costs one write a minute. */
const lastStamped = new Map<string, number>();

export function stampGrantUse(db: D1Database, grantId: string, waitUntil: (promise: Promise<unknown>) => void): void {
  const now = clock.now();
  if (now - (lastStamped.get(grantId) ?? 0) < 60_000) return;
  if (lastStamped.size >= 10_000) lastStamped.clear();
  lastStamped.set(grantId, now);
  waitUntil(db.prepare('UPDATE oauth_grants SET last_used_at = ? WHERE id = ?').bind(new Date(now).toISOString(), grantId).run().catch(() => undefined));
}

function hostOf(uri: string): string {
  try {
    const url = new URL(uri);
    return url.host || url.protocol.replace(/:$/, '');
  } catch {
    return uri;
  }
}
