import type { Context, Hono } from 'hono';
import type { FC } from 'hono/jsx';
import { publicUrls } from '../../core/config';
import { ASSETS } from '../assets';
import { readSession } from '../auth/sessions';
import type { DashboardEnv } from '../context';
import { membershipsOf, workspaceMembership } from '../members';
import { PAGES } from '.';
import { PageHead, Shell } from './layout';
import { notFound, NotFoundPage } from './not-found';
import { NO_STORE, type WorkspacePage } from './page';

/** The pages (PAGES): rendered on the server from the same functions the JSON API uses. */
export function registerPages(app: Hono<DashboardEnv>) {
  for (const asset of Object.values(ASSETS)) {
    // Each version has its own URL (a fingerprint of its content), so browsers may keep it for a year.
    app.get(asset.path, (c) => c.body(asset.body, 200, { 'content-type': asset.type, 'cache-control': 'public, max-age=31536000, immutable' }));
  }
  app.get('/favicon.ico', (c) => c.redirect(ASSETS.favicon.path, 301));

  app.get('/', async (c) => {
    const session = await readSession(c);
    if (!session) return c.redirect('/signin', 303);
    const memberships = await membershipsOf(c.env.DB, session.user.id);
    // An organization that requires a second factor this person lacks comes last: it would show them only Settings.
    const first = [...memberships.filter((organization) => !organization.twoFactorRequired), ...memberships.filter((organization) => organization.twoFactorRequired)].flatMap(
      (organization) => organization.workspaces,
    )[0];
    return first ? c.redirect(`/w/${first.id}/keys`, 303) : c.html(<NotFoundPage signedIn />, 404);
  });

  const tabs = PAGES.filter((page): page is WorkspacePage => page.kind === 'workspace');
  for (const page of PAGES) {
    if (page.kind === 'site') app.get(page.path, (c) => page.answer(c));
    else app.get(`/w/:workspaceId/${page.id}`, (c) => answerWorkspacePage(c, page, tabs));
  }
  // A path of a workspace that is no page: a visitor is asked to sign in first, as on a page.
  app.get('/w/:workspaceId/:tab', async (c) => {
    const session = await readSession(c);
    if (!session) return c.redirect(`/signin?next=${encodeURIComponent(c.req.path)}`, 303);
    return notFound(c, session);
  });
}

/** A workspace page in the shell, for a member of the workspace: others see the not-found page, visitors the sign-in page. */
async function answerWorkspacePage(c: Context<DashboardEnv>, page: WorkspacePage, tabs: readonly WorkspacePage[]) {
  const session = await readSession(c);
  if (!session) return c.redirect(`/signin?next=${encodeURIComponent(c.req.path)}`, 303);
  const membership = await workspaceMembership(c.env.DB, session.user.id, c.req.param('workspaceId') ?? '').catch(() => undefined);
  if (!membership) return notFound(c, session);
  const { access, lacksTwoFactor } = membership;
  const urls = publicUrls(c.env);
  const shell = { user: session.user, memberships: await membershipsOf(c.env.DB, session.user.id), access, docsUrl: urls.docs };
  // The organization requires a second factor this member has not turned on: Settings, where it is turned on, and
  // a page that says so in place of every other.
  const shown = lacksTwoFactor && page.id !== SETTINGS ? null : page;
  const content = shown ? await shown.render(c, { ...shell, urls, sessionIdHash: session.idHash }) : <TwoFactorRequired organizationName={access.organization.name} settings={`/w/${access.workspace.id}/${SETTINGS}`} />;
  return c.html(
    <Shell {...shell} title={page.title} tab={page.id} tabs={tabs}>
      {content}
    </Shell>,
    shown ? 200 : 403,
    NO_STORE,
  );
}

const SETTINGS = 'settings';

const TwoFactorRequired: FC<{ organizationName: string; settings: string }> = ({ organizationName, settings }) => (
  <>
    <PageHead title="Two-factor sign-in required" lede={<>{organizationName} requires two-factor sign-in of its members.</>} />
    <section class="card notice warn" role="status">
      <p>
        Until you turn it on for your account, this organization's workspaces show you nothing else, and MCP clients you connected to them are refused. Your
        other organizations are not affected.
      </p>
      <p>
        <a class="button" href={settings}>
          Turn it on in Settings
        </a>
      </p>
    </section>
  </>
);
