/** One row of the `usage` table: a call of a workspace, what it cost and how it ended. */
export interface UsageRow {
  id: string;
  requestId: string;
  organizationId: string;
  workspaceId: string;
  keyId: string;
  operation: string;
  status: number;
  errorCode: string | null;
  costUnits: number;
  cached: boolean;
  latencyMs: number;
  createdAt: string;
  /** A sandbox key's call: answered with the registry's example, never billed. */
  sandbox?: boolean;
  /** The workspace's connection the call went through (its own vendor account). */
  connectionId?: string;
}

/**
 * Inserts many usage rows in one statement: `rowsJson` is a JSON array of UsageRow objects (as the outbox
 * stores them, joined), read by SQLite's json_each. One statement and one bound value per batch rather
 * than one statement per row (D1 counts the same rows written; the per-statement work goes). Each row is
 * turned into SQLite's parsed form (JSONB) once, in a materialized CTE, before its fourteen `->>` read it:
 * json_each hands a row back as text, and each `->>` on text parses it again. Counted under valgrind
 * (performance.md, "Instructions"), 100 rows a statement: 171 thousand instructions a row before, 115 after.
 * (`jsonb_each` would hand rows back parsed, but workerd's SQLite does not have it.)
 *
 * A row already there is left as it is (an outbox batch sent again), except a failure's row under a call id
 * whose success comes after it: a retry that took the id over after the failure's row had been sent, which the
 * wallet charges. The success takes the row's outcome and keeps its time, and the trigger of migration 0046 moves
 * the day and hour totals the row counted in from a failure to a success. (`WHERE true` keeps SQLite from reading
 * the upsert's `ON` as a join's.) `OR IGNORE` still drops a row D1 would refuse for another constraint (a NULL where
 * none may be) rather than refuse the whole batch, which the outbox would then send again without end: the upsert
 * takes the id's conflicts, OR IGNORE the rest.
 */
export function insertUsageRows(db: D1Database, rowsJson: string): D1PreparedStatement {
  return db
    .prepare(
      `WITH batch AS MATERIALIZED (SELECT key, jsonb(value) AS value FROM json_each(?))
       INSERT OR IGNORE INTO usage (id, request_id, organization_id, workspace_id, key_id, operation, status, error_code, cost_units, cached, latency_ms, created_at, sandbox, connection_id)
       SELECT value ->> '$.id', value ->> '$.requestId', value ->> '$.organizationId', value ->> '$.workspaceId', value ->> '$.keyId',
              value ->> '$.operation', value ->> '$.status', value ->> '$.errorCode', value ->> '$.costUnits', value ->> '$.cached',
              value ->> '$.latencyMs', value ->> '$.createdAt', coalesce(value ->> '$.sandbox', 0), value ->> '$.connectionId'
         FROM batch WHERE true ORDER BY key
       ON CONFLICT (id) DO UPDATE SET
              request_id = excluded.request_id, key_id = excluded.key_id, connection_id = excluded.connection_id, status = excluded.status,
              error_code = excluded.error_code, cost_units = excluded.cost_units, cached = excluded.cached, latency_ms = excluded.latency_ms
        WHERE usage.status >= 400 AND excluded.status < 400`,
    )
    .bind(rowsJson);
}

/**
 * Stamps many keys' `last_used_at` in one statement: `usesJson` is a JSON array of `[keyId, ISO time]`.
 * A stamp never moves back: a key already stamped later keeps its time. With a thousand workspaces in
 * rotation each batch names a hundred keys, so this is one statement a batch, not one a call.
 */
export function stampKeyUses(db: D1Database, usesJson: string): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE api_keys SET last_used_at = stamp.at
         FROM (SELECT value ->> '$[0]' AS id, value ->> '$[1]' AS at FROM json_each(?)) AS stamp
        WHERE api_keys.id = stamp.id AND (api_keys.last_used_at IS NULL OR api_keys.last_used_at < stamp.at)`,
    )
    .bind(usesJson);
}
