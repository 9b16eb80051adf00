import type { FC } from 'hono/jsx';
import { type ApiKeyRecord, hasExpired } from '../../core/records';
import { CredentialTable, ExpiresField, ExpiryCard } from './credentials';
import { ApiForm, CodeBlock, Field, PageHead } from './layout';
import { listKeys } from '../../services/accounts';
import { type WorkspaceProps, workspacePage } from './page';

export interface McpPageProps extends WorkspaceProps {
  tokens: ApiKeyRecord[];
  mcpUrl: string;
  catalogUrl: string;
}

export const McpPage: FC<McpPageProps> = (props) => {
  const { tokens, access, user, mcpUrl, catalogUrl } = props;
  const base = `/api/workspaces/${access.workspace.id}/mcp-tokens`;
  const active = tokens.filter((token) => !token.revokedAt && !hasExpired(token));
  // ${SLUICE_MCP_TOKEN} is expanded by the client from its environment, so the secret stays out of the file.
  const config = JSON.stringify({ mcpServers: { sluice: { type: 'http', url: mcpUrl, headers: { Authorization: 'Bearer ${SLUICE_MCP_TOKEN}' } } } }, null, 2);
  const claude = `claude mcp add --transport http sluice ${mcpUrl} --header "Authorization: Bearer \${SLUICE_MCP_TOKEN}"`;
  return (
    <>
      <PageHead title="MCP" lede={<>Connect an AI agent to every Sluice tool over the Model Context Protocol, billed to {access.organization.name}.</>} />
      <section class="card">
        <h2>Endpoint</h2>
        <div class="secret">
          <code id="mcp-url">{mcpUrl}</code>
          <button type="button" class="secondary small" data-copy="#mcp-url">
            Copy
          </button>
        </div>
        <p class="muted small">
          Streamable HTTP, every tool. A server with one group's tools only is at <code>{`${mcpUrl}/<group>`}</code>, e.g. <code>{`${mcpUrl}/web`}</code>; the
          groups are in the <a href={catalogUrl}>catalog</a>.
        </p>
      </section>
      <section class="card">
        <h2>Create a token</h2>
        <p class="muted small">
          Clients that speak MCP OAuth (Claude and ChatGPT connectors, Claude Code, VS Code) need only the endpoint URL: they open this dashboard to sign in
          and ask you to allow them. For the others, a token: it works on the MCP endpoint only (REST calls need an API key) and is shown once.
        </p>
        <ApiForm class="row" api={base} then="secret" secretTitle="Your new MCP token" secretNote="Copy it now: it is shown only this once. Put it in SLUICE_MCP_TOKEN.">
          <Field name="name" label="Name" placeholder="e.g. Claude Code, Cursor" maxlength={100} />
          <ExpiresField />
          <button type="submit">Create token</button>
        </ApiForm>
      </section>
      <section class="card">
        <h2>Add it to your client</h2>
        <p class="small">
          In <code>.mcp.json</code> (Claude Code, Cursor, VS Code and others expand <code>{'${SLUICE_MCP_TOKEN}'}</code> from the environment):
        </p>
        <CodeBlock id="mcp-config">{config}</CodeBlock>
        <p class="small gap-top">Or from a shell:</p>
        <CodeBlock id="mcp-claude">{claude}</CodeBlock>
        <p class="muted small gap-top">
          Check the connection by calling the tool <code>sluice_tools_list_enabled</code>.
        </p>
      </section>
      <section class="card">
        <h2>Tokens</h2>
        <CredentialTable
          noun="token"
          credentials={tokens}
          base={base}
          access={access}
          user={user}
          revealable={false}
          revokeWarning="Clients using it are refused from the very next request."
        />
      </section>
      {active.length > 0 ? (
        <ExpiryCard
          noun="token"
          credentials={active}
          base={base}
          access={access}
          user={user}
          lede="A token that expires is refused by the MCP endpoint from that instant. A new expiry counts from today, and can be shorter or longer than the old one. An expired token stays expired: make a new one."
        />
      ) : null}
    </>
  );
};

export const mcpPage = workspacePage({
  id: 'mcp',
  title: 'MCP',
  icon: 'M4 6h16v4H4zM4 14h16v4H4zM8 8h.01M8 16h.01',
  load: async (c, { access, urls }) => ({
    tokens: await listKeys(c.env.DB, access.workspace.id, 'workspace_mcp'),
    mcpUrl: urls.mcp,
    catalogUrl: `${urls.base}/v1/platforms`,
  }),
  view: McpPage,
});
