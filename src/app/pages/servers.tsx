import type { FC } from 'hono/jsx';
import type { CustomServer } from '../../services/custom-mcp-servers';
import { DATA_TOOLS } from '../../operations/tools';
import { PLATFORMS } from '../../operations/platforms';
import { canManage } from '../members';
import { ApiForm, ConfirmButton, DateTime, Field, PageHead } from './layout';
import { DataTable } from './table';
import { listServers } from '../../services/custom-mcp-servers';
import { resourceUrl } from '../../services/oauth/resources';
import { type WorkspaceProps, workspacePage } from './page';

export interface ServersPageProps extends WorkspaceProps {
  servers: (CustomServer & { url: string })[];
  mcpUrl: string;
}

/** The catalog's tools by source (the platform an operation reads), in the catalog's order of sources. */
const SOURCES = Object.entries(PLATFORMS)
  .map(([slug, platform]) => ({ slug, platform, tools: DATA_TOOLS.filter((tool) => tool.group === slug) }))
  .filter((source) => source.tools.length > 0);

/** A workspace's own MCP servers: a name and a chosen set of tools each, one of them the default of /mcp. */
export const ServersPage: FC<ServersPageProps> = (props) => {
  const { servers, access, mcpUrl } = props;
  const base = `/api/workspaces/${access.workspace.id}/mcp-servers`;
  const manager = canManage(access.role);
  return (
    <>
      <PageHead
        title="MCP servers"
        lede={
          <>
            Servers with only the tools you choose. Each has its own URL; the default one is what <code>{mcpUrl}</code> serves to {access.workspace.name}.
          </>
        }
      />
      <section class="card">
        <h2>Servers</h2>
        <DataTable
          rows={servers}
          empty="No server yet: /mcp serves every tool."
          rowAttributes={(server) => ({ 'data-server-id': server.id })}
          columns={[
            {
              label: 'Name',
              cell: (server) => (
                <>
                  {server.name} {server.isDefault ? <span class="badge ok">default</span> : null}
                </>
              ),
            },
            { label: 'URL', class: 'wide', cell: (server) => <code class="breaks">{server.url}</code> },
            { label: 'Tools', cell: (server) => server.tools.length },
            { label: 'Created', cell: (server) => <DateTime iso={server.createdAt} /> },
          ]}
          actions={(server) => (
            <>
              {manager && !server.isDefault ? (
                <button type="button" class="secondary small" data-api={`${base}/${server.id}/default`} aria-label={`Make default: ${server.name}`}>
                  Make default
                </button>
              ) : null}
              {manager ? (
                <ConfirmButton api={`${base}/${server.id}`} method="DELETE" confirm={`Delete ${server.name}? Apps connected to it are disconnected.`} confirmLabel="Delete server" ariaLabel={`Delete ${server.name}`}>
                  Delete
                </ConfirmButton>
              ) : null}
            </>
          )}
        />
      </section>
      {manager ? (
        <section class="card">
          <h2>Create a server</h2>
          <ApiForm class="stack" api={base}>
            <Field name="name" label="Name" placeholder="e.g. SEO research" maxlength={100} />
            <ToolPicker />
          </ApiForm>
        </section>
      ) : (
        <p class="muted small">Owners and admins create servers.</p>
      )}
    </>
  );
};

/**
 * The catalog's tools to choose from, by source: each source with a box that chooses all its tools (those
 * the filter shows, while one is typed) and a count of those chosen, its tools folded away until opened,
 * each tool with its one-line summary and price. The filter box opens the sources that have a match.
 */
const ToolPicker: FC = () => (
  <div class="stack" id="tool-picker">
    <div class="field">
      <label for="tool-filter">Find tools</label>
      <input id="tool-filter" type="search" placeholder="e.g. backlinks, linkedin company, transcript" autocomplete="off" data-filter="#tool-sources" aria-describedby="tool-filter-status" />
      <span class="hint" id="tool-filter-status" data-filter-status="tool" aria-live="polite">
        {`${DATA_TOOLS.length} tools from ${SOURCES.length} sources.`}
      </span>
    </div>
    <div id="tool-sources" class="stack">
      {SOURCES.map(({ slug, platform, tools }) => (
        <fieldset class="tool-source" data-filter-group={`${platform.name} ${slug} ${platform.category}`} data-choice-group>
          <legend class="visually-hidden">{`${platform.name} tools`}</legend>
          <div class="tool-source-head">
            <label>
              <input type="checkbox" data-choose-all aria-label={`All ${platform.name} tools`} /> <strong>{platform.name}</strong>
            </label>
            <span class="muted small" data-chosen-count>{`0 of ${tools.length} chosen`}</span>
          </div>
          <p class="muted small">{platform.description}</p>
          <details>
            <summary>{`The ${tools.length} ${platform.name} tools`}</summary>
            <ul class="tool-list">
              {tools.map((tool) => (
                <li data-filter-item>
                  <label>
                    <input type="checkbox" name="tools" value={tool.name} data-list />
                    <span>
                      <code>{tool.name}</code>
                      <span class="tool-summary">{`${tool.operation.summary} · ${tool.price}`}</span>
                    </span>
                  </label>
                </li>
              ))}
            </ul>
          </details>
        </fieldset>
      ))}
    </div>
    <p class="muted small" data-filter-empty hidden>
      No tool matches. Try fewer words, or a source's name.
    </p>
    <span class="field-error" data-field-error="tools"></span>
    <div>
      <button type="submit">Create server</button>
    </div>
  </div>
);

export const serversPage = workspacePage({
  id: 'servers',
  title: 'MCP servers',
  icon: 'M3 5h18v6H3zM3 13h18v6H3zM7 8h.01M7 16h.01M11 8h6M11 16h6',
  load: async (c, { access, urls }) => {
    const origin = new URL(urls.mcp).origin;
    const servers = (await listServers(c.env.DB, access.workspace.id)).map((server) => ({ ...server, url: resourceUrl(origin, { kind: 'server', serverId: server.id }) }));
    return { servers, mcpUrl: urls.mcp };
  },
  view: ServersPage,
});
