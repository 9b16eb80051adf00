import type { Child, FC } from 'hono/jsx';
import { canManage, type MembershipSummary } from '../members';
import { ApiForm, Field, formatDate, PageHead, Shell, type ShellProps, TableHead } from './layout';

export const SettingsPage: FC<Omit<ShellProps, 'title' | 'tab' | 'children'>> = (props) => {
  const { user, access, memberships } = props;
  const organization = memberships.find((membership) => membership.id === access.organization.id) as MembershipSummary;
  return (
    <Shell {...props} title="Settings" tab="settings">
      <PageHead title="Settings" />
      <section class="card">
        <h2>Organization</h2>
        <dl class="facts">
          <Fact label="Name" value={access.organization.name} />
          <Fact label="Id" value={<code>{access.organization.id}</code>} />
          <Fact label="Plan" value={access.organization.plan ?? 'None yet'} />
          <Fact label="Your role" value={access.role} />
        </dl>
      </section>
      <section class="card">
        <h2>Workspaces</h2>
        <p class="muted small">Each workspace has its own keys, MCP tokens, rate window and usage; all of them spend from the organization's credits.</p>
        <div class="table-wrap">
          <table>
            <TableHead columns={['Name', 'Id', 'Created']} />
            <tbody>
              {organization.workspaces.map((workspace) => (
                <tr>
                  <td>
                    <a href={`/w/${workspace.id}/keys`}>{workspace.name}</a>
                    {workspace.id === access.workspace.id ? <span class="badge plain"> current</span> : null}
                  </td>
                  <td>
                    <code>{workspace.id}</code>
                  </td>
                  <td>{formatDate(workspace.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {canManage(access.role) ? (
          <ApiForm class="row gap-top" api={`/api/organizations/${access.organization.id}/workspaces`} then="reload">
            <Field name="name" label="New workspace" placeholder="e.g. Staging" maxlength={100} />
            <button type="submit">Create workspace</button>
          </ApiForm>
        ) : (
          <p class="muted small gap-top">Owners and admins create workspaces.</p>
        )}
      </section>
      <section class="card">
        <h2>Your account</h2>
        <dl class="facts">
          <Fact label="Name" value={user.name} />
          <Fact label="Email" value={user.email} />
          <Fact label="Member since" value={formatDate(user.createdAt)} />
        </dl>
      </section>
    </Shell>
  );
};

/** One term and its value: a list, not a table, so a long id wraps inside its card on a phone. */
const Fact: FC<{ label: string; value: Child }> = ({ label, value }) => (
  <>
    <dt>{label}</dt>
    <dd>{value}</dd>
  </>
);
