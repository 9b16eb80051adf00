import type { FC } from 'hono/jsx';
import type { ConnectedClient } from '../../services/oauth/grants';
import { canManage } from '../members';
import { ConfirmButton, DateTime, PageHead } from './layout';
import { DataTable } from './table';
import { listConnectedClients } from '../../services/oauth/grants';
import { type WorkspaceProps, workspacePage } from './page';

export interface ConnectionsPageProps extends WorkspaceProps {
  clients: ConnectedClient[];
  mcpUrl: string;
}

/** MCP clients connected by OAuth (Claude, ChatGPT, VS Code, ...), each with a way to disconnect it. */
export const ConnectionsPage: FC<ConnectionsPageProps> = (props) => {
  const { clients, access, user, mcpUrl } = props;
  return (
    <>
      <PageHead
        title="Connected apps"
        lede={
          <>
            MCP clients that signed in with OAuth to act for {access.workspace.name}. Point a client at <code>{mcpUrl}</code>; it asks you here to allow it.
          </>
        }
      />
      <section class="card">
        <h2>Apps</h2>
        <DataTable
          rows={clients}
          empty="No app is connected yet."
          rowAttributes={(client) => ({ 'data-grant-id': client.grantId })}
          columns={[
            {
              label: 'App',
              cell: (client) => (
                <>
                  {client.clientName} {client.verified ? <span class="badge ok">verified</span> : <span class="badge plain">self-registered</span>}
                  <br />
                  <span class="muted small">allowed by {client.userName ?? client.userId}</span>
                </>
              ),
            },
            { label: 'Sends access to', cell: (client) => <code>{client.redirectHost}</code> },
            { label: 'Endpoint', cell: (client) => <code>{new URL(client.resource).pathname}</code> },
            { label: 'Connected', cell: (client) => <DateTime iso={client.createdAt} /> },
            { label: 'Last used', cell: (client) => <DateTime iso={client.lastUsedAt} /> },
          ]}
          actions={(client) =>
            client.userId === user.id || canManage(access.role) ? (
              <ConfirmButton
                api={`/api/workspaces/${access.workspace.id}/oauth-clients/${client.grantId}/revoke`}
                confirm={`Disconnect ${client.clientName}? Its tokens are refused from the very next request.`}
                confirmLabel="Disconnect"
                ariaLabel={`Disconnect ${client.clientName}`}
              >
                Disconnect
              </ConfirmButton>
            ) : null
          }
        />
      </section>
    </>
  );
};

export const connectionsPage = workspacePage({
  id: 'apps',
  title: 'Connected apps',
  icon: 'M10 14a5 5 0 0 0 7 0l3-3a5 5 0 0 0-7-7l-1 1M14 10a5 5 0 0 0-7 0l-3 3a5 5 0 0 0 7 7l1-1',
  load: async (c, { access, urls }) => ({ clients: await listConnectedClients(c.env.DB, access.workspace.id), mcpUrl: urls.mcp }),
  view: ConnectionsPage,
});
