import type { FC } from 'hono/jsx';
import { PLAN_TABLE } from '../../core/plans';
import { CONNECTABLE_VENDORS } from '../../services/connections-vendors';
import { type Connection, listConnections } from '../../services/connections';
import { canManage } from '../members';
import { ApiForm, ConfirmButton, DateTime, Field, formatCents, PageHead } from './layout';
import { DataTable } from './table';
import { type WorkspaceProps, workspacePage } from './page';

export interface VendorConnectionsPageProps extends WorkspaceProps {
  connections: Connection[];
  apiUrl: string;
}

const STATUS_BADGE: Record<Connection['status'], string> = { ok: 'badge ok', rejected: 'badge off', unreachable: 'badge plain' };
const labelOf = (slug: string) => CONNECTABLE_VENDORS.find((vendor) => vendor.slug === slug)?.label ?? slug;

/**
 * The workspace's own vendor accounts (issue 33): add one with the vendor's fields (checked with the vendor
 * before it is kept), check it again, remove it. Only the hint of a secret is ever shown.
 */
export const VendorConnectionsPage: FC<VendorConnectionsPageProps> = ({ connections, access, apiUrl }) => {
  const base = `/api/workspaces/${access.workspace.id}/vendor-connections`;
  const manager = canManage(access.role);
  const plan = access.organization.plan;
  return (
    <>
      <PageHead
        title="Vendor accounts"
        lede={
          <>
            Bring {access.workspace.name}'s own accounts of the vendors Sluice uses. A call to <code>{apiUrl}/v1/connections/&lt;id&gt;/data/&lt;slug&gt;/&lt;operation&gt;</code> (or to a root tool
            through it, as <code>{apiUrl}/v1/connections/&lt;id&gt;/serp</code>), or an MCP tool call with its <code>connection</code> argument, is sent with that account's credentials and charged {plan ? `${formatCents(PLAN_TABLE[plan].connectionFeeCents)} per successful call (your plan's fee)` : "your plan's platform fee"}{' '}
            instead of the operation's price.
          </>
        }
      />
      <section class="card" aria-labelledby="connections-title">
        <h2 id="connections-title">Accounts</h2>
        <DataTable
          rows={connections}
          empty="No vendor account yet."
          rowAttributes={(connection) => ({ 'data-connection-id': connection.id })}
          columns={[
            { label: 'Name', cell: (connection) => connection.name },
            { label: 'Vendor', cell: (connection) => labelOf(connection.vendor) },
            { label: 'Secret', cell: (connection) => <code>{connection.hint}</code> },
            { label: 'Status', cell: (connection) => <span class={STATUS_BADGE[connection.status]}>{connection.status}</span> },
            { label: 'Last checked', cell: (connection) => <DateTime iso={connection.lastCheckedAt} /> },
            { label: 'Id', cell: (connection) => <code class="small breaks">{connection.id}</code> },
          ]}
          actions={(connection) => (
            <>
              <button type="button" class="secondary small" data-api={`${base}/${connection.id}/check`} data-then="reload" aria-label={`Check ${connection.name} with the vendor`}>
                Check
              </button>
              {manager ? (
                <ConfirmButton
                  api={`${base}/${connection.id}`}
                  method="DELETE"
                  confirm={`Remove "${connection.name}"? Its credentials are deleted and calls through it answer 404.`}
                  confirmLabel="Remove account"
                  ariaLabel={`Remove ${connection.name}`}
                >
                  Remove
                </ConfirmButton>
              ) : null}
            </>
          )}
        />
      </section>
      {manager ? (
        <section class="card" aria-labelledby="add-connection-title">
          <h2 id="add-connection-title">Add an account</h2>
          <ApiForm class="stack" api={base} then="reload">
            <div class="field grow">
              <label for="field-vendor">Vendor</label>
              <select id="field-vendor" name="vendor">
                {CONNECTABLE_VENDORS.map((vendor) => (
                  <option value={vendor.slug}>{vendor.label}</option>
                ))}
              </select>
              <span class="field-error" data-field-error="vendor"></span>
            </div>
            <Field name="name" label="Name" required={false} placeholder="e.g. our Hunter plan" maxlength={100} />
            <Field name="login" label="Login (DataForSEO only)" required={false} autocomplete="off" maxlength={500} />
            <Field name="secret" label="API key (DataForSEO: the API password)" type="password" autocomplete="off" maxlength={500} hint="Checked with the vendor now; kept encrypted and never shown again." />
            <button type="submit">Add account</button>
          </ApiForm>
        </section>
      ) : (
        <p class="muted small">Owners and admins add and remove vendor accounts.</p>
      )}
    </>
  );
};

export const vendorConnectionsPage = workspacePage({
  id: 'vendor-accounts',
  title: 'Vendor accounts',
  icon: 'M4 7h16v10H4zM8 11h8M8 14h5',
  load: async (c, { access, urls }) => ({ connections: await listConnections(c.env.DB, access.workspace.id), apiUrl: urls.base }),
  view: VendorConnectionsPage,
});
