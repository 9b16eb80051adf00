import type { FC } from 'hono/jsx';
import { clock } from '../../core/clock';
import { SANDBOX_KEY_DAYS, type SandboxKey } from '../../services/sandbox-keys';
import type { SessionUser } from '../context';
import { canManage, type WorkspaceAccess } from '../members';
import { ApiForm, ConfirmButton, DateTime } from './layout';
import { DataTable } from './table';

/**
 * The keys page's sandbox section (issue 33): mint a sandbox key (scope workspace_dryrun), listed apart from
 * live keys. On /runtime/data it answers each operation's documented example at no cost; it expires after
 * SANDBOX_KEY_DAYS and can be revoked before.
 */
export const SandboxKeysSection: FC<{ keys: SandboxKey[]; access: WorkspaceAccess; user: SessionUser; apiUrl: string }> = ({ keys, access, user, apiUrl }) => {
  const base = `/api/workspaces/${access.workspace.id}/sandbox-keys`;
  const now = clock.now();
  const expired = (key: SandboxKey) => Date.parse(key.expiresAt) <= now;
  return (
    <section class="card" aria-labelledby="sandbox-title" data-sandbox-keys>
      <h2 id="sandbox-title">Sandbox keys</h2>
      <p class="muted small">
        Build and test an agent or a job without spending: a sandbox key calls <code>{apiUrl}/runtime/data/&lt;slug&gt;/&lt;operation&gt;</code> with the same
        validation and rate window as a live key, and is answered with the operation's documented example, <code>meta.sandbox: true</code>, a cost of 0 and{' '}
        <code>meta.quotedCents</code> (the most the live call would cost: its quote). No vendor is called and nothing is charged, with or without a plan. It works for{' '}
        {SANDBOX_KEY_DAYS} days and never on <code>/v1</code>.
      </p>
      <ApiForm class="row" api={base} then="secret" secretTitle="Your new sandbox key" secretNote={`Copy it now: it is shown this once, and works for ${SANDBOX_KEY_DAYS} days.`}>
        {/* Not <Field>: the live key form above has a field named `name` too, and ids must stay unique. */}
        <div class="field grow">
          <label for="field-sandbox-name">Sandbox key name</label>
          <input id="field-sandbox-name" name="name" type="text" required maxlength={100} placeholder="e.g. agent builder, CI dry run" aria-describedby="error-sandbox-name" />
          <span class="field-error" id="error-sandbox-name" data-field-error="name"></span>
        </div>
        <button type="submit">Create sandbox key</button>
      </ApiForm>
      <DataTable
        rows={keys}
        empty="No sandbox keys yet."
        rowAttributes={(key) => ({ class: key.revokedAt || expired(key) ? 'revoked' : undefined, 'data-sandbox-key-id': key.id })}
        columns={[
          { label: 'Name', cell: (key) => key.name },
          { label: 'Key', cell: (key) => <code>{key.hint}</code> },
          { label: 'Created', cell: (key) => <DateTime iso={key.createdAt} /> },
          { label: 'Expires', cell: (key) => <DateTime iso={key.expiresAt} /> },
          {
            label: 'Status',
            cell: (key) => (key.revokedAt ? <span class="badge off">Revoked</span> : expired(key) ? <span class="badge off">Expired</span> : <span class="badge ok">Active</span>),
          },
        ]}
        actions={(key) =>
          !key.revokedAt && !expired(key) && (key.createdBy === user.id || canManage(access.role)) ? (
            <ConfirmButton
              api={`${base}/${key.id}/revoke`}
              confirm={`Revoke "${key.name}"? Calls with it are refused from the very next request.`}
              confirmLabel="Revoke sandbox key"
              ariaLabel={`Revoke sandbox key ${key.name}`}
            >
              Revoke
            </ConfirmButton>
          ) : null
        }
      />
    </section>
  );
};
