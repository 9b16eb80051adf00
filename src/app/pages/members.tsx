import type { FC } from 'hono/jsx';
import type { Invitation } from '../invitations';
import { canManage, listMembers, type Member, ROLE_LABELS, ROLES } from '../members';
import { ApiForm, ConfirmButton, DateTime, Field, PageHead } from './layout';
import { ConfirmEmailFirst } from './trial-start';
import { DataTable } from './table';
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
      {manager && !user.emailVerifiedAt ? (
        <section class="card">
          <h2>Invite someone</h2>
          <p class="notice warn">
            <ConfirmEmailFirst user={user} before="to invite people" />
          </p>
        </section>
      ) : manager ? (
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
                <option value="member">{ROLE_LABELS.member}</option>
                <option value="admin">{ROLE_LABELS.admin}</option>
              </select>
            </div>
            <button type="submit">Send invitation</button>
          </ApiForm>
        </section>
      ) : null}
      <section class="card">
        <h2>Members</h2>
        <DataTable
          rows={members}
          empty="No member."
          rowAttributes={(member) => ({ 'data-member': member.email })}
          columns={[
            {
              label: 'Name',
              cell: (member) => (
                <>
                  {member.name}
                  {member.userId === user.id ? <span class="muted small"> (you)</span> : null}
                </>
              ),
            },
            { label: 'Email', class: 'wide', cell: (member) => member.email },
            {
              label: 'Role',
              cell: (member) =>
                manager && member.userId !== user.id ? (
                  <ApiForm class="inline" api={`/api/organizations/${organizationId}/members/${member.userId}`} method="PATCH" then="reload">
                    <select name="role" aria-label={`Role of ${member.name}`}>
                      {ROLES.map((role) => (
                        <option value={role} selected={role === member.role}>
                          {ROLE_LABELS[role]}
                        </option>
                      ))}
                    </select>
                    <button type="submit" class="secondary small">
                      Save
                    </button>
                  </ApiForm>
                ) : (
                  <span class="badge plain">{ROLE_LABELS[member.role]}</span>
                ),
            },
            { label: 'Joined', cell: (member) => <DateTime iso={member.joinedAt} /> },
            ...(manager
              ? [
                  {
                    label: 'Two-factor',
                    cell: (member: Member) =>
                      member.twoFactor ? <span class="badge ok">On</span> : <span class={`badge ${access.twoFactorRequiredAt ? 'warn' : 'plain'}`}>Off</span>,
                  },
                ]
              : []),
          ]}
          actions={(member) =>
            manager && member.userId !== user.id ? (
              <ConfirmButton
                api={`/api/organizations/${organizationId}/members/${member.userId}`}
                method="DELETE"
                confirm={`Remove ${member.name} from ${access.organization.name}? They lose access at once, and so do the MCP tokens, sandbox keys and connected MCP clients they made, and the invitations they sent; the API keys they made keep working until revoked.`}
                confirmLabel="Remove member"
              >
                Remove
              </ConfirmButton>
            ) : null
          }
        />
      </section>
      <section class="card">
        <h2>Invitations</h2>
        <DataTable
          rows={invitations}
          empty="No invitations yet."
          rowAttributes={(invitation) => ({ 'data-invitation': invitation.email })}
          columns={[
            { label: 'Email', cell: (invitation) => invitation.email },
            { label: 'Role', cell: (invitation) => ROLE_LABELS[invitation.role] },
            { label: 'Sent', cell: (invitation) => <DateTime iso={invitation.createdAt} /> },
            {
              label: 'Status',
              cell: (invitation) => <span class={`badge ${invitation.status === 'pending' ? 'ok' : invitation.status === 'accepted' ? 'plain' : 'off'}`}>{invitation.status}</span>,
            },
          ]}
          actions={(invitation) =>
            manager && invitation.status === 'pending' ? (
              <ConfirmButton api={`/api/organizations/${organizationId}/invitations/${invitation.id}/revoke`} confirm={`Withdraw the invitation to ${invitation.email}?`} confirmLabel="Withdraw">
                Withdraw
              </ConfirmButton>
            ) : null
          }
        />
        {pending.length > 0 && !manager ? <p class="muted small">Owners and admins manage invitations.</p> : null}
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
      listMembers(c.env.DB, access.organization.id, canManage(access.role)),
      listInvitations(c.env.DB, access.organization.id),
      occupiedSeats(c.env.DB, access.organization.id),
      termsOf(c.env.DB, access.organization.id),
    ]);
    return { members, invitations, seats: { used, limit: terms.caps?.seats ?? null } };
  },
  view: MembersPage,
});
