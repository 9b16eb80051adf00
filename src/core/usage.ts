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
}

export function insertUsage(db: D1Database, row: UsageRow): D1PreparedStatement {
  return db
    .prepare(
      `INSERT OR IGNORE INTO usage (id, request_id, organization_id, workspace_id, key_id, operation, status, error_code, cost_units, cached, latency_ms, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(
      row.id,
      row.requestId,
      row.organizationId,
      row.workspaceId,
      row.keyId,
      row.operation,
      row.status,
      row.errorCode,
      row.costUnits,
      row.cached ? 1 : 0,
      row.latencyMs,
      row.createdAt,
    );
}
