import type { FC } from 'hono/jsx';
import type { Database } from '../../services/databases';
import { DATABASE_LIMITS } from '../../core/database-limits';
import { canManage } from '../members';
import { ApiForm, ConfirmButton, DateTime, Field, PageHead } from './layout';
import { DataTable } from './table';
import { getDatabase, listDatabases } from '../../services/databases';
import { termsOf } from '../../services/plan-caps';
import { type WorkspaceProps, workspacePage } from './page';

export interface DatabasesPageProps extends WorkspaceProps {
  databases: Database[];
  /** How many the organization may have, null without a plan. */
  limit: number | null;
  apiUrl: string;
}

function formatBytes(bytes: number | undefined): string {
  if (bytes === undefined) return '—';
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MB` : `${Math.ceil(bytes / 1024)} KB`;
}

/** The workspace's SQLite databases, and a box to run SQL in one of them. */
export const DatabasesPage: FC<DatabasesPageProps> = (props) => {
  const { databases, access, limit, apiUrl } = props;
  const base = `/api/workspaces/${access.workspace.id}/databases`;
  return (
    <>
      <PageHead
        title="Databases"
        lede={
          <>
            SQLite databases where {access.workspace.name}'s agents keep what they collect between runs, through <code>{apiUrl}/v1/db</code> or the MCP tools{' '}
            <code>sluice_db_query</code> and <code>sluice_db_list</code>.
          </>
        }
      />
      <section class="card">
        <h2>Databases {limit === null ? null : <span class="muted small">(the plan allows {limit} in the organization)</span>}</h2>
        <DataTable
          rows={databases}
          empty="No database yet."
          rowAttributes={(database) => ({ 'data-database-id': database.id })}
          columns={[
            { label: 'Name', cell: (database) => database.name },
            { label: 'Id', cell: (database) => <code>{database.id}</code> },
            { label: 'Tables', cell: (database) => (database.tables && database.tables.length > 0 ? database.tables.join(', ') : <span class="muted">none</span>) },
            { label: 'Size', cell: (database) => formatBytes(database.sizeBytes) },
            { label: 'Created', cell: (database) => <DateTime iso={database.createdAt} /> },
          ]}
          actions={(database) =>
            canManage(access.role) ? (
              <ConfirmButton api={`${base}/${database.id}`} method="DELETE" confirm={`Delete ${database.name} and every table in it? This cannot be undone.`} confirmLabel="Delete database" ariaLabel={`Delete ${database.name}`}>
                Delete
              </ConfirmButton>
            ) : null
          }
        />
      </section>
      <section class="card">
        <h2>Create a database</h2>
        <ApiForm class="stack" api={base}>
          <Field name="name" label="Database name" placeholder="e.g. leads" maxlength={64} hint="Letters, digits, dots, dashes and underscores." />
          <button type="submit">Create database</button>
        </ApiForm>
      </section>
      {databases.length > 0 ? (
        <section class="card">
          <h2>Query</h2>
          <ApiForm class="stack" api={`${base}/query`} then="rows">
            <div class="field">
              <label for="field-databaseId">Database</label>
              <select id="field-databaseId" name="databaseId">
                {databases.map((database) => (
                  <option value={database.id}>{database.name}</option>
                ))}
              </select>
              <span class="field-error" data-field-error="databaseId"></span>
            </div>
            <div class="field">
              <label for="field-sql">SQL</label>
              <textarea id="field-sql" name="sql" rows={6} required maxlength={DATABASE_LIMITS.sqlCharacters} spellcheck={false} class="mono" placeholder="SELECT name FROM sqlite_master WHERE type = 'table'"></textarea>
              <span class="hint">Statements separated by ";" run in one transaction; only the last one's rows are shown (at most {DATABASE_LIMITS.resultRows.toLocaleString('en-US')}).</span>
              <span class="field-error" data-field-error="sql"></span>
            </div>
            <div class="field">
              <label for="field-params">Parameters</label>
              <input id="field-params" name="params" data-json placeholder='e.g. ["acme.example", 100]' class="mono" />
              <span class="hint">A JSON array, one value per ? in order. Optional.</span>
              <span class="field-error" data-field-error="params"></span>
            </div>
            <button type="submit">Run</button>
            <div class="query-result" data-query-result aria-live="polite"></div>
          </ApiForm>
        </section>
      ) : null}
    </>
  );
};

export const databasesPage = workspacePage({
  id: 'databases',
  title: 'Databases',
  icon: 'M4 6c0-1.7 3.6-3 8-3s8 1.3 8 3-3.6 3-8 3-8-1.3-8-3zM4 6v12c0 1.7 3.6 3 8 3s8-1.3 8-3V6M4 12c0 1.7 3.6 3 8 3s8-1.3 8-3',
  load: async (c, { access, urls }) => {
    const [listed, terms] = await Promise.all([listDatabases(c.env.DB, access.workspace.id), termsOf(c.env.DB, access.organization.id)]);
    const databases = await Promise.all(listed.map((database) => getDatabase(c.env, access.workspace.id, database.id)));
    return { databases, limit: terms.caps?.databases ?? null, apiUrl: urls.base };
  },
  view: DatabasesPage,
});
