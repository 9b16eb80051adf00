import type { DATABASE_LIMITS } from '../database-limits';

export interface DatabaseOwner {
  databaseId: string;
  workspaceId: string;
}

export type SqlParam = string | number | boolean | null;
/** A value of a result row as JSON carries it: a blob becomes `{base64}`. */
export type SqlValue = string | number | null | { base64: string };

export interface QueryResult {
  columns: string[];
  rows: SqlValue[][];
  rowsRead: number;
  rowsWritten: number;
  durationMs: number;
  sizeBytes: number;
}

/** Why a statement was not answered: SQLite refused it, or it went past a bound (and was rolled back). */
export type QueryRefusal = { kind: 'refused'; message: string } | { kind: 'limit'; limit: keyof typeof DATABASE_LIMITS; message: string };

/**
 * What the object answers of statements it ran: the result without its duration, which the caller measures. Deployed,
 * an isolate's clock stands still while its code runs without I/O (Cloudflare's timer rule), so the object, running the
 * statements in one synchronous transaction, would always read 0.
 */
export type StatementsRun = Omit<QueryResult, 'durationMs'>;

export type QueryAnswer = { kind: 'ok'; result: StatementsRun } | { kind: 'not_found' } | QueryRefusal;

/** What the rest of Sluice may ask a workspace database (durable-objects/workspace-database.ts): one per database. */
export interface WorkspaceDatabaseProtocol extends Rpc.DurableObjectBranded {
  /** Binds the object to its database and workspace, once. */
  open(owner: DatabaseOwner): void;
  describe(workspaceId: string): { sizeBytes: number; tables: string[] } | null;
  query(workspaceId: string, sql: string, params: SqlParam[]): QueryAnswer;
  destroy(workspaceId: string): Promise<boolean>;
}
