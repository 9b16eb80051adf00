import type { Child, FC } from 'hono/jsx';
import { PLAN_TABLE } from '../../core/plans';
import { canManage, type MembershipSummary, membersWithoutTwoFactor, organizationsRequiringTwoFactor, ROLE_LABELS } from '../members';
import { ApiForm, ConfirmButton, DateTime, Field, PageHead } from './layout';
import { DataTable } from './table';
import { type Belonging, belongingsOf, fatesOf } from '../account-deletion';
import { type SignedInBrowser, signedInBrowsers } from '../signed-in-browsers';
import { RECOVERY_CODES, type TwoFactorState, twoFactorState } from '../two-factor';
import { type WorkspaceProps, workspacePage } from './page';

export interface SettingsProps extends WorkspaceProps {
  belongings: Belonging[];
  browsers: SignedInBrowser[];
  twoFactor: TwoFactorState;
  /** The person's organizations that require two-factor sign-in, by name. */
  requiring: string[];
  /** Members of this organization without two-factor sign-in, for its owners; null for others. */
  membersWithout: number | null;
}

export const SettingsPage: FC<SettingsProps> = (props) => {
  const { user, access, memberships, belongings, browsers, twoFactor, requiring, membersWithout } = props;
  const organization = memberships.find((membership) => membership.id === access.organization.id) as MembershipSummary;
  return (
    <>
      <PageHead title="Settings" />
      <section class="card">
        <h2>Organization</h2>
        <dl class="facts">
          <Fact label="Name" value={access.organization.name} />
          <Fact label="Id" value={<code>{access.organization.id}</code>} />
          <Fact label="Plan" value={access.organization.plan ? PLAN_TABLE[access.organization.plan].name : 'None yet'} />
          <Fact label="Your role" value={ROLE_LABELS[access.role]} />
          <Fact
            label="Two-factor sign-in"
            value={access.twoFactorRequiredAt ? <>Required of every member since <DateTime iso={access.twoFactorRequiredAt} /></> : 'Up to each member'}
          />
        </dl>
        {canManage(access.role) ? (
          <ApiForm class="row" api={`/api/organizations/${access.organization.id}`} method="PATCH" then="reload">
            <Field name="name" id="organization-name" label="Organization name" value={access.organization.name} maxlength={100} />
            <button type="submit">Rename organization</button>
          </ApiForm>
        ) : null}
        {membersWithout !== null ? <TwoFactorRequirement organizationId={access.organization.id} required={access.twoFactorRequiredAt !== null} membersWithout={membersWithout} mine={twoFactor.enabled} /> : null}
      </section>
      <section class="card">
        <h2>Workspaces</h2>
        <p class="muted small">Each workspace has its own keys, MCP tokens, rate window and usage; all of them spend from the organization's credits.</p>
        <DataTable
          rows={organization.workspaces}
          empty="No workspace."
          columns={[
            {
              label: 'Name',
              cell: (workspace) => (
                <>
                  <a href={`/w/${workspace.id}/keys`}>{workspace.name}</a>{' '}
                  {workspace.id === access.workspace.id ? <span class="badge plain">current</span> : null}
                </>
              ),
            },
            { label: 'Id', cell: (workspace) => <code>{workspace.id}</code> },
            { label: 'Created', cell: (workspace) => <DateTime iso={workspace.createdAt} /> },
          ]}
          actions={(workspace) =>
            canManage(access.role) && organization.workspaces.length > 1 ? (
              <ConfirmButton
                api={`/api/workspaces/${workspace.id}`}
                method="DELETE"
                confirm={`Delete ${workspace.name}? Its keys, MCP tokens and connected apps stop working at once, its data jobs are cancelled, its agents stopped, and its databases, vendor accounts, webhook endpoints and MCP servers deleted. Its usage stays on the organization's bill. This cannot be undone.`}
                confirmLabel="Delete workspace"
                ariaLabel={`Delete ${workspace.name}`}
                // Off a deleted workspace's page, to the first one left; from another's, back here.
                then={workspace.id === access.workspace.id ? 'go:/' : `go:/w/${access.workspace.id}/settings`}
              >
                Delete
              </ConfirmButton>
            ) : null
          }
        />
        {canManage(access.role) ? (
          <div class="stack">
            <ApiForm class="row" api={`/api/workspaces/${access.workspace.id}`} method="PATCH" then="reload">
              <Field name="name" id="workspace-name" label="This workspace's name" value={access.workspace.name} maxlength={100} />
              <button type="submit">Rename workspace</button>
            </ApiForm>
            <ApiForm class="row" api={`/api/organizations/${access.organization.id}/workspaces`} then="reload">
              <Field name="name" label="New workspace" placeholder="e.g. Staging" maxlength={100} />
              <button type="submit">Create workspace</button>
            </ApiForm>
            {organization.workspaces.length > 1 ? null : <p class="muted small">An organization keeps at least one workspace: create another to delete this one.</p>}
          </div>
        ) : (
          <p class="muted small">Owners and admins create, rename and delete workspaces.</p>
        )}
      </section>
      <section class="card">
        <h2>Your account</h2>
        <dl class="facts">
          <Fact label="Name" value={user.name} />
          <Fact label="Email" value={user.email} />
          <Fact label="Member since" value={<DateTime iso={user.createdAt} />} />
        </dl>
        <ApiForm class="row" api="/api/me/email" then="verification-sent">
          <Field name="email" id="new-email" label="New email address" type="email" autocomplete="email" />
          <Field name="currentPassword" id="email-change-password" label="Your password" type="password" autocomplete="current-password" />
          <button type="submit">Change email</button>
        </ApiForm>
        <p class="muted small">The change waits for the link we send to the new address; the old one is told when it is done.</p>
      </section>
      <section class="card">
        <h2>Password</h2>
        <p class="muted small">
          {user.passwordChangedAt ? (
            <>
              Last changed <DateTime iso={user.passwordChangedAt} />.
            </>
          ) : (
            'The one you chose at sign-up.'
          )}{' '}
          Changing it signs out every other browser signed in to your account, and we email you that it changed.
        </p>
        <div class="stack">
          <ApiForm class="stack" api="/api/me/password" then="reload">
            <CurrentPassword email={user.email} label="Current password" />
            <Field name="newPassword" label="New password" type="password" autocomplete="new-password" minlength={10} hint="At least 10 characters." />
            <div>
              <button type="submit">Change password</button>
            </div>
          </ApiForm>
          <p class="muted small">
            Forgot it? <a href="/forgot-password">Set a new one by email</a>.
          </p>
        </div>
      </section>
      <TwoFactor state={twoFactor} email={user.email} confirmed={user.emailVerifiedAt !== null} requiring={requiring} />
      <SignedInBrowsers browsers={browsers} />
      <DeleteAccount belongings={belongings} email={user.email} />
    </>
  );
};

/**
 * What an owner sees of the organization's two-factor requirement: who lacks it, and the one button that changes it
 * (requiring it needs it on for the owner themselves first).
 */
const TwoFactorRequirement: FC<{ organizationId: string; required: boolean; membersWithout: number; mine: boolean }> = ({ organizationId, required, membersWithout, mine }) => {
  const without = membersWithout === 0 ? 'Every member has it on.' : `${membersWithout} member${membersWithout === 1 ? ' has' : 's have'} not turned it on${required ? ': they see only Settings of its workspaces until they do.' : '.'}`;
  return (
    <div class="stack requirement" data-two-factor-requirement>
      <p class="muted small">
        {without} {required ? 'While' : 'Once'} it is required, a member without it sees only Settings of this organization's workspaces, its API answers them 403 and the
        MCP clients they connected are refused, until they turn it on; the API keys and MCP tokens they made keep working, as they are the workspace's.
      </p>
      {required || mine ? (
        <ApiForm
          class="row"
          api={`/api/organizations/${organizationId}/two-factor-requirement`}
          method="PUT"
          then="reload"
          {...(required || membersWithout === 0 ? {} : { confirm: `Require two-factor sign-in? ${without}`, confirmLabel: 'Require it' })}
        >
          <input type="hidden" name="required" value={required ? 'false' : 'true'} data-json />
          <button type="submit" class={required ? 'secondary' : undefined}>
            {required ? 'Stop requiring two-factor sign-in' : 'Require two-factor sign-in'}
          </button>
        </ApiForm>
      ) : (
        <p class="notice info small">To require it of every member, turn it on for your own account first (below).</p>
      )}
    </div>
  );
};

/**
 * Two-factor sign-in (app/two-factor.ts). Off: the password, then a QR code and the app's first code turn it on. On:
 * new recovery codes, or off, each with the password. Recovery codes are shown once, in place, by settings.browser.ts.
 */
const TwoFactor: FC<{ state: TwoFactorState; email: string; confirmed: boolean; requiring: string[] }> = ({ state, email, confirmed, requiring }) => (
  <section class="card" data-two-factor>
    <h2>Two-factor sign-in</h2>
    {requiring.length ? (
      <p class={`notice small ${state.enabled ? 'info' : 'warn'}`} role="status">
        Required by {requiring.join(', ')}:{' '}
        {state.enabled ? 'it stays on while you belong.' : `${requiring.length === 1 ? 'its' : 'their'} workspaces show you only this page until you turn it on.`}
      </p>
    ) : null}
    {state.enabled ? (
      <>
        <p class="small">
          <span class="badge ok">On</span> since <DateTime iso={state.enabledAt!} />. Signing in takes a code from your authenticator app after the password.{' '}
          <strong>
            {state.recoveryCodesLeft} of {RECOVERY_CODES}
          </strong>{' '}
          recovery codes left. A browser you chose to remember at sign-in skips the code for 30 days; new recovery codes or a new password forget
          them all.
        </p>
        <details class="fold">
          <summary>Make new recovery codes</summary>
          <p class="muted small">The codes you have now stop working.</p>
          <ApiForm class="row" api="/api/me/two-factor/recovery-codes" then="two-factor-codes">
            <CurrentPassword email={email} id="recovery-codes-password" />
            <button type="submit" class="secondary">
              New recovery codes
            </button>
          </ApiForm>
        </details>
        <details class="fold">
          <summary>Turn off two-factor sign-in</summary>
          <ApiForm
            class="row"
            api="/api/me/two-factor"
            method="DELETE"
            then="reload"
            confirm="Turn two-factor sign-in off? The password alone will sign in to your account again."
            confirmLabel="Turn off"
          >
            <CurrentPassword email={email} id="two-factor-off-password" />
            <button type="submit" class="danger">
              Turn off
            </button>
          </ApiForm>
        </details>
      </>
    ) : (
      <>
        <p class="muted small">
          Off. With it on, signing in takes a code from an authenticator app (1Password, Google Authenticator, Authy and the like) after the password, so a
          password that leaks is not enough.
        </p>
        {confirmed ? (
          <ApiForm class="row" api="/api/me/two-factor/setup" then="two-factor-setup">
            <CurrentPassword email={email} id="two-factor-password" />
            <button type="submit">Set up</button>
          </ApiForm>
        ) : (
          <p class="notice info small">Confirm your email address first, by the link we sent to {email} (or a new one from Plans): then set it up here.</p>
        )}
        <div class="two-factor-setup" data-two-factor-setup hidden>
          <div class="qr" data-qr role="img" aria-label="QR code to scan with your authenticator app"></div>
          <div class="stack">
            <p class="small">
              Scan the code with your authenticator app, or type this key into it: <code class="secret-key" data-secret-key></code>
            </p>
            <ApiForm class="row" api="/api/me/two-factor/confirm" then="two-factor-codes">
              <Field name="code" id="two-factor-code" label="Code from the app" autocomplete="one-time-code" inputmode="numeric" maxlength={7} />
              <button type="submit">Turn on</button>
            </ApiForm>
          </div>
        </div>
      </>
    )}
    <div class="stack" data-recovery-codes hidden>
      <p class="notice warn small" role="status">
        Save these recovery codes somewhere safe, now: they are shown this once. Each signs in once if you lose the app.
      </p>
      <pre class="recovery-codes" id="recovery-codes"></pre>
      <p class="row">
        <button type="button" class="secondary" data-copy="#recovery-codes">
          Copy codes
        </button>
        <button type="button" data-two-factor-done>
          I have saved them
        </button>
      </p>
    </div>
  </section>
);

/** The browsers signed in to the account: one left signed in somewhere is signed out from here. */
const SignedInBrowsers: FC<{ browsers: SignedInBrowser[] }> = ({ browsers }) => (
  <section class="card">
    <h2>Signed-in browsers</h2>
    <DataTable
      rows={browsers}
      empty="No browser is signed in."
      columns={[
        {
          label: 'Browser',
          cell: (browser) => (
            <>
              {browser.browser} {browser.current ? <span class="badge plain">this browser</span> : null}
            </>
          ),
        },
        { label: 'Signed in', cell: (browser) => <DateTime iso={browser.signedInAt} /> },
        { label: 'Last active', cell: (browser) => (browser.lastSeenAt ? <DateTime iso={browser.lastSeenAt} /> : '—') },
      ]}
      actions={(browser) =>
        browser.current ? null : (
          <ConfirmButton
            api={`/api/me/sessions/${browser.id}`}
            method="DELETE"
            confirm={`Sign out ${browser.browser}, signed in since ${browser.signedInAt.slice(0, 10)}? Its next request asks for the password again.`}
            confirmLabel="Sign out"
            ariaLabel={`Sign out ${browser.browser}, signed in ${browser.signedInAt.slice(0, 16).replace('T', ' ')}`}
          >
            Sign out
          </ConfirmButton>
        )
      }
    />
    {browsers.length > 1 ? (
      <p>
        <button
          type="button"
          class="secondary"
          data-api="/api/me/sessions/sign-out-others"
          data-confirm="Sign out every other browser signed in to your account? This one stays signed in; a change of email address still waiting for its link is cancelled."
          data-confirm-label="Sign out the others"
        >
          Sign out every other browser
        </button>
      </p>
    ) : null}
    <p class="muted small">Changing the password signs out every other browser too. Seen something you do not know? Change the password.</p>
  </section>
);

/**
 * Deleting the account, with what goes with it said beforehand: the organizations the person is alone in close, the
 * others go on without them. The API refuses the last owner of an organization others belong to (409), said here too.
 */
const DeleteAccount: FC<{ belongings: Belonging[]; email: string }> = ({ belongings, email }) => {
  const { closing, leaving, stuck } = fatesOf(belongings);
  const consequences = [
    closing.length ? `${names(closing)} close${closing.length === 1 ? 's' : ''} with it: every workspace deleted, every key refused, any subscription cancelled, and credit bought not refunded.` : '',
    leaving.length ? `${names(leaving)} go${leaving.length === 1 ? 'es' : ''} on without you; the API keys you made there keep working.` : '',
  ].filter(Boolean);
  return (
    <section class="card">
      <h2>Delete account</h2>
      <p class="muted small">
        {consequences.join(' ')} Your name and address are erased, and you are signed out everywhere. This cannot be undone.
      </p>
      {stuck.length ? (
        <p class="notice warn small">
          You are the only owner of {names(stuck)}, which others belong to: make one of them owner on its Members page, or remove them, first.
        </p>
      ) : null}
      <ApiForm
        class="row"
        api="/api/me"
        method="DELETE"
        then="go:/account-deleted"
        confirm={`Delete the account of ${email}? ${consequences.join(' ')} This cannot be undone.`}
        confirmLabel="Delete account"
      >
        <CurrentPassword email={email} id="delete-account-password" />
        <button type="submit" class="danger">
          Delete account
        </button>
      </ApiForm>
    </section>
  );
};

const names = (organizations: Belonging[]) => organizations.map((organization) => organization.name).join(', ');

/**
 * The account's current password, which a change of the account asks for again: with the address beside it, hidden, so
 * a password manager knows whose password it fills in (not sent: no name).
 */
const CurrentPassword: FC<{ email: string; id?: string; label?: string }> = ({ email, id, label = 'Your password' }) => (
  <>
    <input type="hidden" autocomplete="username" value={email} />
    <Field name="currentPassword" id={id} label={label} type="password" autocomplete="current-password" />
  </>
);

/** One term and its value: a list, not a table, so a long id wraps inside its card on a phone. */
const Fact: FC<{ label: string; value: Child }> = ({ label, value }) => (
  <>
    <dt>{label}</dt>
    <dd>{value}</dd>
  </>
);

export const settingsPage = workspacePage({
  id: 'settings',
  title: 'Settings',
  icon: 'M12 15a3 3 0 1 0 0-6 3 3 0 0 0 0 6zM19 12l2-1-1-3-2 .5-1.5-1.5.5-2-3-1-1 2h-2l-1-2-3 1 .5 2L6 7.5 4 7 3 10l2 1v2l-2 1 1 3 2-.5 1.5 1.5-.5 2 3 1 1-2h2l1 2 3-1-.5-2 1.5-1.5 2 .5 1-3-2-1z',
  load: async (c, { user, access, sessionIdHash }) => {
    const [belongings, browsers, twoFactor, requiring, membersWithout] = await Promise.all([
      belongingsOf(c.env.DB, user.id),
      signedInBrowsers(c.env.DB, user.id, sessionIdHash),
      twoFactorState(c.env.DB, user.id),
      organizationsRequiringTwoFactor(c.env.DB, user.id).then((organizations) => organizations.map((organization) => organization.name)),
      access.role === 'owner' ? membersWithoutTwoFactor(c.env.DB, access.organization.id) : null,
    ]);
    return { belongings, browsers, twoFactor, requiring, membersWithout };
  },
  view: SettingsPage,
});
