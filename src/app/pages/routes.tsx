import type { Context, Hono } from 'hono';
import { listKeys } from '../../services/accounts';
import { publicUrls } from '../../core/config';
import { listKeysWithSpend } from '../../services/key-spend';
import { ASSETS } from '../assets';
import { readSession } from '../auth/sessions';
import { type Session } from '../context';
import type { DashboardEnv } from '../context';
import { termsOf } from '../../services/plan-caps';
import { stripeOf } from '../billing';
import { outbox } from '../email';
import { trialState } from '../trial';
import { invitationByToken, listInvitations, occupiedSeats } from '../invitations';
import { listMembers, membershipsOf, workspaceAccess } from '../members';
import { InvitationPage, OutboxPage } from './invitation';
import { MembersPage } from './members';
import { PlansPage } from './plans';
import { listServers } from '../../services/custom-mcp-servers';
import { listConnectedClients } from '../../services/oauth/grants';
import { resourceUrl } from '../../services/oauth/resources';
import { NotFoundPage, registerAuthPages } from './auth';
import { ConnectionsPage } from './connections';
import { DatabasesPage } from './databases';
import { getDatabase, listDatabases } from '../../services/databases';
import { registerConsentPage } from './consent';
import { KeysPage, workspaceHasCalled } from './keys';
import { AgentsPage } from './agents';
import { agentAllowance, listAgents } from '../../services/agents';
import { TABS, type Tab } from './layout';
import { McpPage } from './mcp';
import { ServersPage } from './servers';
import { SettingsPage } from './settings';
import { loadUsage, UsagePage } from './usage';
import { WebhooksPage } from './webhooks';
import { listEndpointsWithDeliveries } from '../../services/webhooks/endpoints';
import { webhookEventsUsed } from '../../services/webhooks/event-cap';

const TAB_IDS = new Set<string>(TABS.map((tab) => tab.id));

/** The pages: rendered on the server from the same functions the JSON API uses. */
export function registerPages(app: Hono<DashboardEnv>) {
  for (const asset of Object.values(ASSETS)) {
    // Each version has its own URL (a fingerprint of its content), so browsers may keep it for a year.
    app.get(asset.path, (c) => c.body(asset.body, 200, { 'content-type': asset.type, 'cache-control': 'public, max-age=31536000, immutable' }));
  }
  app.get('/favicon.ico', (c) => c.redirect(ASSETS.favicon.path, 301));

  app.get('/', async (c) => {
    const session = await readSession(c);
    if (!session) return c.redirect('/signin', 303);
    const first = (await membershipsOf(c.env.DB, session.user.id)).flatMap((organization) => organization.workspaces)[0];
    return first ? c.redirect(`/w/${first.id}/keys`, 303) : c.html(<NotFoundPage signedIn />, 404);
  });

  registerAuthPages(app);
  registerConsentPage(app);

  app.get('/w/:workspaceId/:tab', async (c) => {
    const tab = c.req.param('tab') as Tab;
    const session = await readSession(c);
    if (!session) return c.redirect(`/signin?next=${encodeURIComponent(c.req.path)}`, 303);
    if (!TAB_IDS.has(tab)) return notFound(c, session);
    const access = await workspaceAccess(c.env.DB, session.user.id, c.req.param('workspaceId')).catch(() => undefined);
    if (!access) return notFound(c, session);

    const urls = publicUrls(c.env);
    const shell = { user: session.user, memberships: await membershipsOf(c.env.DB, session.user.id), access, docsUrl: urls.docs };
    switch (tab) {
      case 'keys': {
        const [keys, trial, called] = await Promise.all([listKeysWithSpend(c.env, access.workspace.id), trialState(c.env.DB, access.organization.id), workspaceHasCalled(c.env.DB, access.workspace.id)]);
        return page(c, <KeysPage {...shell} keys={keys} apiUrl={urls.base} trial={trial} called={called} />);
      }
      case 'mcp':
        return page(c, <McpPage {...shell} tokens={await listKeys(c.env.DB, access.workspace.id, 'workspace_mcp')} mcpUrl={urls.mcp} catalogUrl={`${urls.base}/v1/platforms`} />);
      case 'servers': {
        const origin = new URL(urls.mcp).origin;
        const servers = (await listServers(c.env.DB, access.workspace.id)).map((server) => ({ ...server, url: resourceUrl(origin, { kind: 'server', serverId: server.id }) }));
        return page(c, <ServersPage {...shell} servers={servers} mcpUrl={urls.mcp} />);
      }
      case 'apps':
        return page(c, <ConnectionsPage {...shell} clients={await listConnectedClients(c.env.DB, access.workspace.id)} mcpUrl={urls.mcp} />);
      case 'agents': {
        const [agents, allowance, trial] = await Promise.all([listAgents(c.env.DB, access.workspace.id), agentAllowance(c.env.DB, access.organization.id), trialState(c.env.DB, access.organization.id)]);
        return page(c, <AgentsPage {...shell} agents={agents} allowance={allowance} apiUrl={urls.base} trial={trial} />);
      }
      case 'webhooks': {
        const [endpoints, used, terms] = await Promise.all([
          listEndpointsWithDeliveries(c.env, access.workspace.id),
          webhookEventsUsed(c.env.DB, access.organization.id),
          termsOf(c.env.DB, access.organization.id),
        ]);
        return page(c, <WebhooksPage {...shell} endpoints={endpoints} events={{ used, limit: terms.caps?.webhookEvents ?? null }} />);
      }
      case 'usage':
        return page(c, <UsagePage {...shell} {...await loadUsage(c.env, access)} />);
      case 'databases': {
        const [listed, terms] = await Promise.all([listDatabases(c.env.DB, access.workspace.id), termsOf(c.env.DB, access.organization.id)]);
        const databases = await Promise.all(listed.map((database) => getDatabase(c.env, access.workspace.id, database.id)));
        return page(c, <DatabasesPage {...shell} databases={databases} limit={terms.caps?.databases ?? null} apiUrl={urls.base} />);
      }
      case 'members': {
        const [members, invitations, used, terms] = await Promise.all([
          listMembers(c.env.DB, access.organization.id),
          listInvitations(c.env.DB, access.organization.id),
          occupiedSeats(c.env.DB, access.organization.id),
          termsOf(c.env.DB, access.organization.id),
        ]);
        return page(c, <MembersPage {...shell} members={members} invitations={invitations} seats={{ used, limit: terms.caps?.seats ?? null }} />);
      }
      case 'plans':
        return page(c, <PlansPage {...shell} caps={(await termsOf(c.env.DB, access.organization.id)).caps} billing={stripeOf(c.env) !== null} />);
      case 'settings':
        return page(c, <SettingsPage {...shell} />);
    }
  });

  app.get('/invitations/:token', async (c) => {
    const [invitation, session] = await Promise.all([invitationByToken(c.env.DB, c.req.param('token')), readSession(c)]);
    return c.html(<InvitationPage invitation={invitation} user={session?.user ?? null} path={c.req.path} />, invitation ? 200 : 404, { 'cache-control': 'no-store' });
  });

  app.get('/dev/outbox', async (c) => {
    if (c.env.DEV_OUTBOX !== '1') return notFound(c, await readSession(c));
    return page(c, <OutboxPage messages={await outbox(c.env.DB)} />);
  });
}

/** Pages show one person's account: never stored by a shared cache. */
function page(c: Context<DashboardEnv>, body: Parameters<Context<DashboardEnv>['html']>[0]) {
  return c.html(body, 200, { 'cache-control': 'no-store' });
}

export function notFound(c: Context<DashboardEnv>, session: Session | null) {
  return c.html(<NotFoundPage signedIn={session !== null} />, 404, { 'cache-control': 'no-store' });
}
