import type { FC } from 'hono/jsx';
import type { Invitation } from '../invitations';
import { canManage, listMembers, type Member, ROLES } from '../members';
import { ApiForm, ConfirmButton, Field, formatDate, PageHead, TableHead } from './layout';
import { listInvitations, occupiedSeats } from '../invitations';
import { termsOf } from '../../services/plan-caps';
import { type WorkspaceProps, workspacePage } from './page';

export interface MembersPageProps extends WorkspaceProps {
  members: Member[];
  invitations: Invitation[];
  seats: { used: number; limit: number | null };
}

export const MembersPage: FC<MembersPageProps> = (props) => {
  const { members, invitations, seats, access, user } = props;
  const organizationId = access.organization.id;
  const manager = canManage(access.role);
  const pending = invitations.filter((invitation) => invitation.status === 'pending');
  return (
    <>
      <PageHead
        title="Members"
        lede={
          <>
            People in {access.organization.name}. Seats: <strong>{seats.used}</strong> of {seats.limit ?? 'none (no plan)'} (members and pending invitations).
          </>
        }
      />
      {manager ? (
        <section class="card">
          <h2>Invite someone</h2>
          <ApiForm
            class="row"
            api={`/api/organizations/${organizationId}/invitations`}
            then="secret"
            secretField="acceptUrl"
            secretTitle="Invitation created"
            secretNote="Send this link to the invitee; it works for 7 days, for their address only. (An email went out too when an email provider is configured.)"
          >
            <Field name="email" label="Email" type="email" placeholder="teammate@example.com" />
            <div class="field">
              <label for="field-role">Role</label>
              <select id="field-role" name="role">
                <option value="member">Member</option>
                <option value="admin">Admin</option>
              </select>
            </div>
            <button type="submit">Send invitation</button>
          </ApiForm>
        </section>
      ) : null}
      <section class="card">
        <h2>Members</h2>
        <div class="table-wrap">
          <table>
            <TableHead columns={['Name', 'Email', 'Role', 'Joined']} actions />
            <tbody>
              {members.map((member) => (
                <tr data-member={member.email}>
                  <td>
                    {member.name}
                    {member.userId === user.id ? <span class="muted small"> (you)</span> : null}
                  </td>
                  <td>{member.email}</td>
                  <td>
                    {manager && member.userId !== user.id ? (
                      <ApiForm class="inline" api={`/api/organizations/${organizationId}/members/${member.userId}`} method="PATCH" then="reload">
                        <select name="role" aria-label={`Role of ${member.name}`}>
                          {ROLES.map((role) => (
                            <option value={role} selected={role === member.role}>
                              {role}
                            </option>
                          ))}
                        </select>
                        <button type="submit" class="secondary small">
                          Save
                        </button>
                      </ApiForm>
                    ) : (
                      <span class="badge plain">{member.role}</span>
                    )}
                  </td>
                  <td>{formatDate(member.joinedAt)}</td>
                  <td class="actions">
                    {manager && member.userId !== user.id ? (
                      <ConfirmButton api={`/api/organizations/${organizationId}/members/${member.userId}`} method="DELETE" confirm={`Remove ${member.name} from ${access.organization.name}? They lose access at once, and so do the MCP tokens and sandbox keys they made; the API keys they made keep working until revoked.`} confirmLabel="Remove member">Remove</ConfirmButton>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      <section class="card">
        <h2>Invitations</h2>
        <div class="table-wrap">
          <table>
            <TableHead columns={['Email', 'Role', 'Sent', 'Status']} actions />
            <tbody>
              {invitations.map((invitation) => (
                <tr data-invitation={invitation.email}>
                  <td>{invitation.email}</td>
                  <td>{invitation.role}</td>
                  <td>{formatDate(invitation.createdAt)}</td>
                  <td>
                    <span class={`badge ${invitation.status === 'pending' ? 'ok' : invitation.status === 'accepted' ? 'plain' : 'off'}`}>{invitation.status}</span>
                  </td>
                  <td class="actions">
                    {manager && invitation.status === 'pending' ? (
                      <ConfirmButton api={`/api/organizations/${organizationId}/invitations/${invitation.id}/revoke`} confirm={`Withdraw the invitation to ${invitation.email}?`} confirmLabel="Withdraw">Withdraw</ConfirmButton>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {invitations.length === 0 ? <p class="empty">No invitations yet.</p> : null}
          {pending.length > 0 && !manager ? <p class="muted small">Owners and admins manage invitations.</p> : null}
        </div>
      </section>
    </>
  );
};

export const membersPage = workspacePage({
  id: 'members',
  title: 'Members',
  icon: 'M16 19v-1a4 4 0 0 0-4-4H7a4 4 0 0 0-4 4v1M9.5 10a3 3 0 1 0 0-6 3 3 0 0 0 0 6zM21 19v-1a4 4 0 0 0-3-3.9M16 4.1a3 3 0 0 1 0 5.8',
  load: async (c, { access }) => {
    const [members, invitations, used, terms] = await Promise.all([
      listMembers(c.env.DB, access.organization.id),
      listInvitations(c.env.DB, access.organization.id),
      occupiedSeats(c.env.DB, access.organization.id),
      termsOf(c.env.DB, access.organization.id),
    ]);
    return { members, invitations, seats: { used, limit: terms.caps?.seats ?? null } };
  },
  view: MembersPage,
});
