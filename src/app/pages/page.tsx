import type { Context } from 'hono';
import type { Child, FC } from 'hono/jsx';
import type { PublicUrls } from '../../core/config';
import type { DashboardEnv, SessionUser } from '../context';
import type { MembershipSummary, WorkspaceAccess } from '../members';

/**
 * What a page of the dashboard is: its route, its loader and its view, declared in its own module
 * (src/app/pages/<name>.tsx) and registered by one line in PAGES (src/app/pages/index.ts). Its browser code,
 * if it has any, is the module beside it, <name>.browser.ts, which the build bundles into the one script.
 */
export type Page = WorkspacePage | SitePage;

/** Who is looking at which workspace: what every workspace page's view is given beside its own data. */
export interface WorkspaceProps {
  user: SessionUser;
  memberships: MembershipSummary[];
  access: WorkspaceAccess;
  docsUrl: string;
}

/** A workspace page's loader gets the request, the workspace, the installation's public URLs and which session asks. */
export interface WorkspaceRequest extends WorkspaceProps {
  urls: PublicUrls;
  /** The asking browser's session (its hash), as Settings marks it among the account's. */
  sessionIdHash: string;
}

/**
 * A page of a workspace, at /w/:workspaceId/<id>: a tab of the sidebar, shown in the shell to members of
 * the workspace only (others, and unknown workspaces, get the not-found page; visitors, the sign-in page).
 */
export interface WorkspacePage {
  kind: 'workspace';
  /** The last segment of its path, and its tab's id. */
  id: string;
  /** Its tab's label and its document's title. */
  title: string;
  /** Its tab's icon: an SVG path on a 24 × 24 grid, stroked. */
  icon: string;
  render(c: Context<DashboardEnv>, request: WorkspaceRequest): Promise<Child>;
}

/** A page outside any workspace (signing in, consenting, an invitation): it answers its path itself. */
export interface SitePage {
  kind: 'site';
  path: string;
  answer(c: Context<DashboardEnv>): Promise<Response>;
}

/** A workspace page whose view takes Props: its loader gives the props beyond the workspace's own. */
export function workspacePage<Props extends WorkspaceProps>(page: {
  id: string;
  title: string;
  icon: string;
  load(c: Context<DashboardEnv>, request: WorkspaceRequest): Promise<NoInfer<Omit<Props, keyof WorkspaceProps>>>;
  view: FC<Props>;
}): WorkspacePage {
  const View = page.view;
  return {
    kind: 'workspace',
    id: page.id,
    title: page.title,
    icon: page.icon,
    render: async (c, request) => {
      const { urls: _urls, sessionIdHash: _session, ...workspace } = request;
      // The workspace's props and the loader's are the view's, which TypeScript cannot see through Omit.
      const props = { ...workspace, ...(await page.load(c, request)) } as Props;
      return <View {...props} />;
    },
  };
}

/**
 * A site page's loader answers with its view's data, or with a response of its own (a redirect, an error
 * page); the view is answered 200, or with the status the page gives its data.
 */
export function sitePage<Data extends object>(page: {
  path: string;
  load(c: Context<DashboardEnv>): Promise<Data | Response>;
  view: FC<Data>;
  status?(data: Data): 200 | 404;
}): SitePage {
  const View = page.view;
  return {
    kind: 'site',
    path: page.path,
    answer: async (c) => {
      const data = await page.load(c);
      if (data instanceof Response) return data;
      return c.html(<View {...data} />, page.status?.(data) ?? 200, NO_STORE);
    },
  };
}

/** Pages show one person's account: never stored by a shared cache. */
export const NO_STORE = { 'cache-control': 'no-store' } as const;

/**
 * The token of an emailed link's page (`?token=`, 64 hex digits), or null for anything else. The token is in the
 * page's address, so the page sends no Referer at all.
 */
export function emailLinkToken(c: Context<DashboardEnv>): string | null {
  c.header('Referrer-Policy', 'no-referrer');
  const token = c.req.query('token') ?? '';
  return /^[0-9a-f]{64}$/.test(token) ? token : null;
}
