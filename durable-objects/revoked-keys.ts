import { clock } from '../src/core/clock';
import { PRINCIPAL_USABLE_MS } from '../src/core/keys';

/**
 * How long a workspace gate remembers a revoked key: a day, far past the ten minutes an isolate may go on
 * serving a key's principal from memory (`PRINCIPAL_USABLE_MS`) before it reads D1 again, where the key is
 * marked revoked for good. Past that no isolate can bring the key to the gate, so the gate need not know it.
 */
export const REVOKED_KEYS_KEPT_MS = Math.max(24 * 60 * 60_000, 2 * PRINCIPAL_USABLE_MS);

/**
 * A workspace gate's revoked keys of the last REVOKED_KEYS_KEPT_MS, in its SQLite with when each was revoked,
 * and in memory for the check every request makes. Every data job and agent deploy mints a key that is revoked
 * when it ends, so a workspace revokes keys without end: until 2026-11-30 the gate kept them all, as one stored
 * value rewritten whole at each revocation and read whole at each start (a metered call's, after 10 s idle).
 * A revocation now writes one row and deletes those past the day; a start reads the day's.
 */
export class RevokedKeys {
  private readonly recent = new Set<string>();
  /** The workspace was deleted: every key of it is refused, for good (`revokeAll`). */
  private all: boolean;

  constructor(private readonly sql: SqlStorage) {
    sql.exec(`
      CREATE TABLE IF NOT EXISTS revoked_keys (key_id TEXT PRIMARY KEY, revoked_at INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS revoked_keys_by_time ON revoked_keys (revoked_at);
      CREATE TABLE IF NOT EXISTS workspace_deleted (deleted_at INTEGER NOT NULL);
    `);
    this.all = sql.exec('SELECT 1 FROM workspace_deleted LIMIT 1').toArray().length > 0;
    const since = clock.now() - REVOKED_KEYS_KEPT_MS;
    for (const row of sql.exec<{ key_id: string }>('SELECT key_id FROM revoked_keys WHERE revoked_at > ?', since)) this.recent.add(row.key_id);
  }

  /**
   * The list a gate from before kept as one stored value (`revoked`): its keys are taken as revoked now, so
   * they are kept a day from here like any other.
   */
  adoptStored(keyIds: string[]): void {
    const now = clock.now();
    for (const keyId of keyIds) this.remember(keyId, now);
  }

  has(keyId: string): boolean {
    return this.all || this.recent.has(keyId);
  }

  /**
   * Every key of the workspace, those made after this too: the workspace was deleted. Stored, with no end, so no key
   * an isolate still remembers is ever served again. There is no undoing it: a workspace is deleted in D1 first.
   */
  revokeAll(): void {
    if (!this.all) this.sql.exec('INSERT INTO workspace_deleted (deleted_at) VALUES (?)', clock.now());
    this.all = true;
  }

  /** Stores a revocation, and lets go of those past REVOKED_KEYS_KEPT_MS (here and in memory). */
  add(keyId: string): void {
    const now = clock.now();
    this.remember(keyId, now);
    for (const row of this.sql.exec<{ key_id: string }>('DELETE FROM revoked_keys WHERE revoked_at <= ? RETURNING key_id', now - REVOKED_KEYS_KEPT_MS)) {
      this.recent.delete(row.key_id);
    }
  }

  private remember(keyId: string, now: number): void {
    this.sql.exec('INSERT OR IGNORE INTO revoked_keys (key_id, revoked_at) VALUES (?, ?)', keyId, now);
    this.recent.add(keyId);
  }
}
