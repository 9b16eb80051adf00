import type { Context } from 'hono';
import type { FC } from 'hono/jsx';
import type { Env } from '../../core/config';
import { PLAN_TABLE } from '../../core/plans';
import { describeAuthorization, type PendingAuthorization } from '../../services/oauth/authorization';
import { readSession } from '../auth/sessions';
import type { DashboardEnv } from '../context';
import { canManage, type MembershipSummary, membershipsOf } from '../members';
import { TRIAL, trialState } from '../trial';
import { CardPage, formatCents } from './layout';
import { NO_STORE, sitePage } from './page';
import { TrialStart } from './trial-start';
import type { SessionUser } from '../context';

const CONSENT_PATH = '/oauth/consent';

/** Who is waiting on a consent request: what the sign-in and sign-up pages say when they lead to one. */
export interface ConsentRequest {
  clientName: string;
  redirectHost: string;
}

/** The pending request a path of this site names, when the path is this page's; undefined otherwise, or once the request is gone. */
export async function consentRequestAt(env: Env, path: string): Promise<ConsentRequest | undefined> {
  const url = new URL(path, 'https://dashboard.invalid');
  if (url.pathname !== CONSENT_PATH) return undefined;
  const pending = await describeAuthorization(env, url.searchParams.get('request') ?? '');
  return pending && { clientName: pending.client.name, redirectHost: pending.redirectHost };
}

function expired(c: Context<DashboardEnv>) {
  return c.html(
    <CardPage title="Request expired">
      <div class="card">
        <h1>This request has expired</h1>
        <p class="lede">Authorization requests last ten minutes and can be answered once. Start connecting again from your app.</p>
      </div>
    </CardPage>,
    404,
    NO_STORE,
  );
}

type WorkspaceChoice = MembershipSummary['workspaces'][number] & { organizationName: string; hasPlan: boolean };

/** An organization on offer here without a plan: the client could connect, but every tool call would answer 402. */
type Unplanned = MembershipSummary & { workspaceId: string; trialAvailable: boolean };

const NoPlanNotice: FC<{ organization: Unplanned; named: boolean; user: SessionUser }> = ({ organization, named, user }) => {
  const trial = PLAN_TABLE[TRIAL.plan];
  const canStart = organization.trialAvailable && canManage(organization.role);
  return (
    <div class="notice warn small" role="status">
      <strong>{named ? `${organization.name} has no plan yet` : 'This organization has no plan yet'}</strong>
      {canStart ? (
        <>
          : start the free trial, the {trial.name} plan with {formatCents(trial.allowanceCents)} of credit for {TRIAL.days} days.
        </>
      ) : (
        <>
          : see{' '}
          <a href={`/w/${organization.workspaceId}/plans`} target="_blank" rel="noopener">
            Plans
          </a>{' '}
          (in a new tab){organization.trialAvailable ? '; owners and admins can start the free trial.' : '; its free trial was used.'}
        </>
      )}{' '}
      You can allow now, but until it has a plan every metered tool call is refused.{' '}
      {canStart ? <TrialStart organizationId={organization.id} user={user} small /> : null}
    </div>
  );
};

/** An organization left off the choice because it requires two-factor sign-in of its members and this person lacks it. */
type ShutOut = MembershipSummary & { workspaceId: string | undefined };

const TwoFactorNotice: FC<{ organization: ShutOut }> = ({ organization }) => (
  <div class="notice warn small" role="status">
    <strong>{organization.name} requires two-factor sign-in</strong> of its members, and yours is off, so its workspaces are not offered here. Turn it on in{' '}
    {organization.workspaceId ? (
      <a href={`/w/${organization.workspaceId}/settings`} target="_blank" rel="noopener">
        Settings
      </a>
    ) : (
      'Settings'
    )}{' '}
    (in a new tab), then reload this page.
  </div>
);

const ConsentPage: FC<{ pending: PendingAuthorization; handle: string; workspaces: WorkspaceChoice[]; unplanned: Unplanned[]; shutOut: ShutOut[]; user: SessionUser }> = ({
  pending,
  handle,
  workspaces,
  unplanned,
  shutOut,
  user,
}) => {
  const { client } = pending;
  const { email } = user;
  const single = workspaces.length === 1 ? workspaces[0] : undefined;
  const oneOrganization = new Set(workspaces.map((workspace) => workspace.organizationId)).size === 1;
  return (
    <CardPage title={`Connect ${client.name}`}>
      <div class="card">
        <h1>Connect {client.name}?</h1>
        <p class="lede">
          {client.fromDocument ? (
            <>
              Published by <strong>{new URL(client.id).host}</strong>.
            </>
          ) : (
            <>This app registered itself: its name is not verified.</>
          )}{' '}
          It asks to use Sluice's MCP tools as you ({email}); its calls are billed to the workspace's organization.
        </p>
        <dl class="facts">
          <dt>Access goes to</dt>
          <dd>
            <code>{pending.redirectHost}</code>
          </dd>
          <dt>MCP endpoint</dt>
          <dd>
            <code>{pending.resource}</code>
          </dd>
        </dl>
        {pending.redirectIsLocal ? (
          <p class="notice warn small">This sends access to a program on your computer. Continue only if you just started connecting from it.</p>
        ) : null}
        {shutOut.map((organization) => (
          <TwoFactorNotice organization={organization} />
        ))}
        {workspaces.length === 0 && shutOut.length === 0 ? (
          <p class="notice warn">You are not a member of the workspace this MCP server belongs to, so you cannot connect it.</p>
        ) : null}
        {unplanned.map((organization) => (
          <NoPlanNotice organization={organization} named={!oneOrganization || shutOut.length > 0} user={user} />
        ))}
        <form class="stack" data-api="/api/oauth/consent" data-then="oauth-redirect">
          <input type="hidden" name="request" value={handle} />
          {single ? (
            <p class="small">
              Workspace: <strong>{single.name}</strong> <span class="muted">({single.organizationName})</span>
              <input type="hidden" name="workspaceId" value={single.id} />
            </p>
          ) : workspaces.length > 1 ? (
            <div class="field">
              <label for="field-workspaceId">Workspace it acts for</label>
              <select id="field-workspaceId" name="workspaceId">
                {workspaces.map((workspace) => (
                  <option value={workspace.id}>{`${workspace.name} (${workspace.organizationName}${workspace.hasPlan ? '' : ', no plan'})`}</option>
                ))}
              </select>
              <span class="field-error" data-field-error="workspaceId"></span>
            </div>
          ) : null}
          <p class="form-error" role="alert"></p>
          <div class="buttons">
            <button type="submit" name="decision" value="deny" class="secondary">
              Deny
            </button>
            <button type="submit" name="decision" value="allow" disabled={workspaces.length === 0}>
              Allow
            </button>
          </div>
        </form>
      </div>
    </CardPage>
  );
};

/**
 * The consent page an MCP client's /oauth/authorize leads to: who is asking (and whether its name is
 * verified), where the code will go, which endpoint it will reach and for which workspace, with Allow and
 * Deny. The decision goes to POST /api/oauth/consent, which answers where the browser goes next.
 */
export const consentPage = sitePage({
  path: CONSENT_PATH,
  load: async (c) => {
    const session = await readSession(c);
    const handle = c.req.query('request') ?? '';
    if (!session) return c.redirect(`/signin?next=${encodeURIComponent(`${CONSENT_PATH}?request=${handle}`)}`, 303);
    const pending = await describeAuthorization(c.env, handle);
    if (!pending) return expired(c);
    const memberships = await membershipsOf(c.env.DB, session.user.id);
    const offered = (organization: MembershipSummary) => pending.serverWorkspaceId === null || organization.workspaces.some((workspace) => workspace.id === pending.serverWorkspaceId);
    // An organization that shuts this person out until they turn on two-factor sign-in is not on offer: its
    // workspaces would refuse the consent (403), and then every call of the client. The page says why instead.
    const shutOut = memberships.filter((organization) => organization.twoFactorRequired && offered(organization)).map((organization) => ({ ...organization, workspaceId: organization.workspaces[0]?.id }));
    const organizations = memberships.filter((organization) => !organization.twoFactorRequired);
    const workspaces = organizations.flatMap((organization) =>
      organization.workspaces.map((workspace) => ({ ...workspace, organizationName: organization.name, hasPlan: organization.plan !== null })),
    );
    const allowed = pending.serverWorkspaceId === null ? workspaces : workspaces.filter((workspace) => workspace.id === pending.serverWorkspaceId);
    const unplanned = await Promise.all(
      organizations
        .filter((organization) => organization.plan === null && allowed.some((workspace) => workspace.organizationId === organization.id))
        .map(async (organization) => ({
          ...organization,
          workspaceId: allowed.find((workspace) => workspace.organizationId === organization.id)!.id,
          trialAvailable: (await trialState(c.env.DB, organization.id)).available,
        })),
    );
    return { pending, handle, workspaces: allowed, unplanned, shutOut, user: session.user };
  },
  view: ConsentPage,
});
