import type { FC } from 'hono/jsx';
import { activityOf, type ActivityEvent } from '../activity';
import { canManage } from '../members';
import { DateTime, PageHead } from './layout';
import { DataTable } from './table';
import { type WorkspaceProps, workspacePage } from './page';

/** The events shown on the page: the newest; the API pages further back. */
const SHOWN = 100;

/** `mcp_token.revoked` as a person reads it: "MCP token revoked". */
export function describeAction(action: string): string {
  const [object = '', verb = ''] = action.split('.');
  const words = `${object === 'key' ? 'API key' : object} ${verb}`.replaceAll('_', ' ');
  const said = words.replace(/\bmcp\b/g, 'MCP').replace(/\boauth\b/g, 'OAuth');
  return said.charAt(0).toUpperCase() + said.slice(1);
}

export const ActivityPage: FC<WorkspaceProps & { events: ActivityEvent[] | null; nextBefore: number | null; paged: boolean }> = ({ access, events, nextBefore, paged }) => (
  <>
    <PageHead title="Activity" lede={<>What the people of <strong>{access.organization.name}</strong> changed here (keys, tokens, members, workspaces, the plan) and what its payments did, kept 400 days.</>} />
    <section class="card">
      <h2>Latest changes</h2>
      {events === null ? (
        <p class="muted">Owners and admins see the organization's activity.</p>
      ) : (
        <DataTable
          rows={events}
          empty="Nothing changed yet."
          columns={[
            { label: 'When', cell: (event) => <DateTime iso={event.at} /> },
            {
              label: 'Who',
              cell: (event) =>
                event.actor ? (
                  <span title={event.actor.email}>{event.actor.name || event.actor.email}</span>
                ) : (
                  <span class="muted">{event.action.startsWith('billing.') ? 'Stripe (billing)' : 'a deleted account'}</span>
                ),
            },
            {
              label: 'What',
              cell: (event) => (
                <>
                  {describeAction(event.action)}
                  {event.detail ? <span class="muted breaks"> · {event.detail}</span> : null}
                </>
              ),
            },
            { label: 'Workspace', cell: (event) => event.workspace?.name ?? <span class="muted">—</span> },
            { label: 'Id', cell: (event) => (event.target ? <code class="small muted breaks">{event.target}</code> : null) },
          ]}
        />
      )}
      {nextBefore !== null || paged ? (
        <p class="row">
          {paged ? <a href={`/w/${access.workspace.id}/activity`}>Newest</a> : null}
          {nextBefore !== null ? <a href={`/w/${access.workspace.id}/activity?before=${nextBefore}`}>Older changes</a> : null}
        </p>
      ) : null}
    </section>
  </>
);

export const activityPage = workspacePage({
  id: 'activity',
  title: 'Activity',
  icon: 'M12 8v4l3 2M21 12a9 9 0 1 1-18 0 9 9 0 0 1 18 0z',
  load: async (c, { access }) => {
    const before = Number(c.req.query('before'));
    const paged = Number.isSafeInteger(before) && before > 0;
    if (!canManage(access.role)) return { events: null, nextBefore: null, paged: false };
    const page = await activityOf(c.env.DB, access.organization.id, { limit: SHOWN, ...(paged ? { before } : {}) });
    return { events: page.events, nextBefore: page.nextBefore, paged };
  },
  view: ActivityPage,
});
