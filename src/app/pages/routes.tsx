import type { Context, Hono } from 'hono';
import { publicUrls } from '../../core/config';
import { ASSETS } from '../assets';
import { readSession } from '../auth/sessions';
import type { DashboardEnv } from '../context';
import { membershipsOf, workspaceAccess } from '../members';
import { PAGES } from '.';
import { Shell } from './layout';
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
    const first = (await membershipsOf(c.env.DB, session.user.id)).flatMap((organization) => organization.workspaces)[0];
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
  const access = await workspaceAccess(c.env.DB, session.user.id, c.req.param('workspaceId') ?? '').catch(() => undefined);
  if (!access) return notFound(c, session);
  const urls = publicUrls(c.env);
  const shell = { user: session.user, memberships: await membershipsOf(c.env.DB, session.user.id), access, docsUrl: urls.docs };
  const content = await page.render(c, { ...shell, urls, sessionIdHash: session.idHash });
  return c.html(
    <Shell {...shell} title={page.title} tab={page.id} tabs={tabs}>
      {content}
    </Shell>,
    200,
    NO_STORE,
  );
}
