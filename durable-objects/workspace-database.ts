import { DurableObject } from 'cloudflare:workers';
import { clock } from '../src/core/clock';
import { DATABASE_LIMITS, screenStatement } from '../src/core/database-limits';
import type { ObjectBindings } from '../src/core/object-bindings';
import type { DatabaseOwner, QueryAnswer, QueryRefusal, SqlParam, SqlValue, StatementsRun, WorkspaceDatabaseProtocol } from '../src/core/protocols/database';

/** Who a database belongs to, kept in the object's key-value storage (the `_cf_KV` table), out of SQL's reach. */
class Refused extends Error {
  constructor(readonly refusal: QueryRefusal) {
    super(refusal.message);
  }
}

/**
 * One workspace database: a Durable Object whose own SQLite storage is the user's database. The user's
 * SQL runs as sent (parameterized) inside one transaction per request, so a request is all or nothing:
 * an error or a bound passed anywhere rolls every statement of it back. workerd itself refuses access to
 * `_cf_*` tables, ATTACH, and pragmas outside its list; screenStatement refuses what it lets through that
 * would describe them (ANALYZE and its sqlite_stat1) or never end. Our one piece of bookkeeping (the
 * owner) lives in the key-value storage, which is such a table. An object that was never opened, or was deleted, has no
 * owner and answers as missing to everyone.
 */
export class WorkspaceDatabase extends DurableObject<ObjectBindings> implements WorkspaceDatabaseProtocol {
  /** Records the owner; the D1 row naming this database is written first, so a listing never shows an unopened one for long. */
  open(owner: DatabaseOwner): void {
    this.ctx.storage.kv.put('owner', owner);
  }

  /** Size and tables, for the owner only. */
  describe(workspaceId: string): { sizeBytes: number; tables: string[] } | null {
    if (!this.ownedBy(workspaceId)) return null;
    const tables = this.ctx.storage.sql
      // By prefix, not LIKE, whose `_` matches any character: `acfg` or `sqlite1` are the owner's tables.
      .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND lower(substr(name, 1, 7)) <> 'sqlite_' AND lower(substr(name, 1, 4)) <> '_cf_' ORDER BY name")
      .toArray()
      .map((row) => row.name);
    return { sizeBytes: this.ctx.storage.sql.databaseSize, tables };
  }

  /**
   * Runs the request's SQL with its parameters and answers the rows of its last statement. Several
   * statements separated by `;` run in order (the platform's rule: only the last may take parameters).
   */
  query(workspaceId: string, sql: string, params: SqlParam[]): QueryAnswer {
    if (!this.ownedBy(workspaceId)) return { kind: 'not_found' };
    const screened = screenStatement(sql);
    if (screened) return screened;
    const started = clock.now();
    const storage = this.ctx.storage;
    try {
      const result = storage.transactionSync((): StatementsRun => {
        const cursor = storage.sql.exec(sql, ...params.map((param) => (typeof param === 'boolean' ? Number(param) : param)));
        const columns = cursor.columnNames;
        const rows: SqlValue[][] = [];
        let bytes = 0;
        for (const row of cursor.raw()) {
          if (rows.length === DATABASE_LIMITS.resultRows) {
            throw limit('resultRows', `The statement answers more than ${DATABASE_LIMITS.resultRows.toLocaleString('en-US')} rows; add a LIMIT and page through them.`);
          }
          const values = row.map(jsonValue);
          bytes += JSON.stringify(values).length;
          if (bytes > DATABASE_LIMITS.resultBytes) {
            throw limit('resultBytes', `The statement answers more than ${megabytes(DATABASE_LIMITS.resultBytes)} of rows; select fewer columns or rows.`);
          }
          rows.push(values);
          checkTime(started);
        }
        checkTime(started);
        if (storage.sql.databaseSize > DATABASE_LIMITS.databaseBytes) {
          throw limit('databaseBytes', `The statement would grow the database past its ${megabytes(DATABASE_LIMITS.databaseBytes)} limit; it was rolled back. Delete rows or use another database.`);
        }
        return { columns, rows, rowsRead: cursor.rowsRead, rowsWritten: cursor.rowsWritten, sizeBytes: storage.sql.databaseSize };
      });
      return { kind: 'ok', result };
    } catch (error) {
      if (error instanceof Refused) return error.refusal;
      // Anything else the platform threw is SQLite's (or workerd's) refusal of this SQL: its message is the answer.
      return { kind: 'refused', message: error instanceof Error ? error.message : String(error) };
    }
  }

  /** Deletes every table and the owner; the object then answers as missing. */
  async destroy(workspaceId: string): Promise<boolean> {
    if (!this.ownedBy(workspaceId)) return false;
    await this.ctx.storage.deleteAll();
    return true;
  }

  private ownedBy(workspaceId: string): boolean {
    return this.ctx.storage.kv.get<DatabaseOwner>('owner')?.workspaceId === workspaceId;
  }
}

function limit(name: keyof typeof DATABASE_LIMITS, message: string): Refused {
  return new Refused({ kind: 'limit', limit: name, message });
}

/**
 * Between rows and after the last. A statement that computes long before its first row (an aggregate over
 * a cross join) cannot be stopped from here: the DO SQL API has no progress handler or interrupt. The
 * platform stops it (see DATABASE_LIMITS.statementMs) and the caller answers with this same bound.
 * Deployed, this check never fires: the clock stands still while code runs without I/O, and the statements run
 * in one synchronous transaction, so there Cloudflare's CPU limit is the bound of every statement. Locally
 * (workerd's clock moves) it stops a statement that yields rows at the bound.
 */
function checkTime(started: number): void {
  if (clock.now() - started > DATABASE_LIMITS.statementMs) {
    throw limit('statementMs', `The statement ran longer than ${DATABASE_LIMITS.statementMs / 1000} s and was stopped and rolled back; add an index or a LIMIT.`);
  }
}

function jsonValue(value: SqlStorageValue): SqlValue {
  if (!(value instanceof ArrayBuffer)) return value as SqlValue;
  const bytes = new Uint8Array(value);
  let text = '';
  for (let offset = 0; offset < bytes.length; offset += 8192) text += String.fromCharCode(...bytes.subarray(offset, offset + 8192));
  return { base64: btoa(text) };
}

function megabytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${bytes / (1024 * 1024)} MB` : `${bytes / 1024} KB`;
}
