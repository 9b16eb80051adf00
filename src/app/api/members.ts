import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { emailAddress, errorResponses, jsonContent, successEnvelope } from '../../core/schemas';
import { publicUrls } from '../../core/config';
import { success } from '../../core/envelope';
import { termsOf } from '../../services/plan-caps';
import type { DashboardEnv } from '../context';
import { sendEmailOrLog } from '../../services/email';
import { acceptInvitation, invite, listInvitations, occupiedSeats, revokeInvitation } from '../invitations';
import { canManage, changeMember, listMembers, organizationAccess, requireManager, revokePersonalCredentials, ROLES } from '../members';
import { requireVerifiedEmail } from '../email-verification';
import { Emailed, jsonBody, organizationIdParam } from './schemas';

const Member = z
  .object({
    userId: z.string(),
    email: z.string(),
    name: z.string(),
    role: z.enum(ROLES),
    joinedAt: z.string(),
    twoFactor: z.boolean().optional().openapi({ description: 'Whether they sign in with a second factor; answered to owners and admins only.' }),
  })
  .openapi('Member');
const Invitation = z
  .object({
    id: z.string(),
    organizationId: z.string(),
    email: z.string(),
    role: z.enum(['admin', 'member']),
    invitedBy: z.string(),
    createdAt: z.string(),
    expiresAt: z.string(),
    acceptedAt: z.string().nullable(),
    revokedAt: z.string().nullable(),
    status: z.enum(['pending', 'accepted', 'revoked', 'expired']),
  })
  .openapi('Invitation');
const NewInvitation = Invitation.extend({
  token: z.string().openapi({ description: 'The secret of the accept link; shown once.' }),
  acceptUrl: z.string().openapi({ description: 'The link to send the invitee (the inviter can copy it).' }),
  emailed: Emailed.openapi({ description: 'Where the invitation email went: the email provider, the development outbox, or nowhere (no provider configured).' }),
}).openapi('NewInvitation');

const InviteBody = z
  .strictObject({ email: emailAddress, role: z.enum(['admin', 'member']).default('member') })
  .openapi('InviteBody');
const userIdParam = organizationIdParam.extend({ userId: z.string().regex(/^usr_[0-9a-f]{24}$/, 'Expected a user id (usr_ and 24 hex characters).').openapi({ param: { name: 'userId', in: 'path' } }) });
const invitationIdParam = organizationIdParam.extend({
  invitationId: z.string().regex(/^inv_[0-9a-f]{24}$/, 'Expected an invitation id (inv_ and 24 hex characters).').openapi({ param: { name: 'invitationId', in: 'path' } }),
});
const tokenParam = z.object({ token: z.string().regex(/^[0-9a-f]{64}$/, 'Expected the token of an invitation link.').openapi({ param: { name: 'token', in: 'path' } }) });

const routes = {
  list: createRoute({
    method: 'get',
    path: '/api/organizations/{organizationId}/members',
    tags: ['Members'],
    summary: 'Members, invitations and seats of an organization',
    operationId: 'listMembers',
    request: { params: organizationIdParam },
    responses: {
      200: jsonContent(successEnvelope(z.object({ members: z.array(Member), invitations: z.array(Invitation), seats: z.object({ used: z.number().int(), limit: z.number().int().nullable() }) })), 'Who is in.'),
      ...errorResponses(400, 401, 404),
    },
  }),
  invite: createRoute({
    method: 'post',
    path: '/api/organizations/{organizationId}/invitations',
    tags: ['Members'],
    summary: 'Invite someone by email (owners and admins); seats are members plus pending invitations',
    operationId: 'createInvitation',
    request: { params: organizationIdParam, body: jsonBody(InviteBody) },
    responses: { 201: jsonContent(successEnvelope(NewInvitation), 'The invitation, with its link.'), ...errorResponses(400, 401, 402, 403, 404, 409) },
  }),
  revokeInvitation: createRoute({
    method: 'post',
    path: '/api/organizations/{organizationId}/invitations/{invitationId}/revoke',
    tags: ['Members'],
    summary: 'Withdraw a pending invitation; its link stops working',
    operationId: 'revokeInvitation',
    request: { params: invitationIdParam },
    responses: { 200: jsonContent(successEnvelope(Invitation), 'The invitation.'), ...errorResponses(400, 401, 403, 404, 409) },
  }),
  changeRole: createRoute({
    method: 'patch',
    path: '/api/organizations/{organizationId}/members/{userId}',
    tags: ['Members'],
    summary: "Change a member's role (owners and admins; owners only for owners)",
    operationId: 'changeMemberRole',
    request: { params: userIdParam, body: jsonBody(z.strictObject({ role: z.enum(ROLES) })) },
    responses: { 200: jsonContent(successEnvelope(Member), 'The member.'), ...errorResponses(400, 401, 403, 404, 409) },
  }),
  remove: createRoute({
    method: 'delete',
    path: '/api/organizations/{organizationId}/members/{userId}',
    tags: ['Members'],
    summary: 'Remove a member (owners and admins), or leave (anyone, their own user id); the last owner stays',
    description: "The MCP tokens and sandbox keys the person made in the organization's workspaces are revoked with the membership (`revokedKeyIds`); the workspace API keys they made keep working until revoked.",
    operationId: 'removeMember',
    request: { params: userIdParam },
    responses: {
      200: jsonContent(successEnvelope(z.object({ removed: z.literal(true), revokedKeyIds: z.array(z.string()) })), 'Removed.'),
      ...errorResponses(400, 401, 403, 404, 409),
    },
  }),
  accept: createRoute({
    method: 'post',
    path: '/api/invitations/{token}/accept',
    tags: ['Members'],
    summary: 'Accept an invitation as the signed-in person (only the invited address, once)',
    operationId: 'acceptInvitation',
    request: { params: tokenParam },
    responses: {
      200: jsonContent(successEnvelope(z.object({ organizationId: z.string(), organizationName: z.string(), role: z.enum(['admin', 'member']) })), 'Joined.'),
      ...errorResponses(400, 401, 403, 404, 409),
    },
  }),
};

export function registerMembers(app: OpenAPIHono<DashboardEnv>) {
  const access = (c: { env: DashboardEnv['Bindings']; get(key: 'session'): DashboardEnv['Variables']['session'] }, organizationId: string) =>
    organizationAccess(c.env.DB, c.get('session').user.id, organizationId);

  app.openapi(routes.list, async (c) => {
    const { organization, role } = await access(c, c.req.valid('param').organizationId);
    const [members, invitations, used, terms] = await Promise.all([
      listMembers(c.env.DB, organization.id, canManage(role)),
      listInvitations(c.env.DB, organization.id),
      occupiedSeats(c.env.DB, organization.id),
      termsOf(c.env.DB, organization.id),
    ]);
    return c.json(success({ members, invitations, seats: { used, limit: terms.caps?.seats ?? null } }), 200);
  });

  app.openapi(routes.invite, async (c) => {
    const organization = await access(c, c.req.valid('param').organizationId);
    requireManager(organization, 'invite members');
    const { email: address, role } = c.req.valid('json');
    const { user } = c.get('session');
    // An invitation is an email from Sluice naming its sender and organization: not sent for an address nobody has
    // shown is theirs (whoever signs up first holds an address until it is confirmed).
    requireVerifiedEmail(user, 'invite people');
    const { invitation, token } = await invite(c.env.DB, await termsOf(c.env.DB, organization.organization.id), {
      organizationId: organization.organization.id,
      email: address,
      role,
      invitedBy: user.id,
    });
    const acceptUrl = `${publicUrls(c.env).app}/invitations/${token}`;
    // The invitation stands whether or not the email goes: its link can be copied.
    const delivery = await sendEmailOrLog(
      c.env,
      {
        to: address,
        subject: `${user.name} invited you to ${organization.organization.name} on Sluice`,
        text: `${user.name} (${user.email}) invited you to join ${organization.organization.name} on Sluice as ${role}.\n\nAccept: ${acceptUrl}\n\nThe link works for 7 days, for ${address} only.`,
      },
      { note: 'invitation email not sent', invitationId: invitation.id },
    );
    return c.json(success({ ...invitation, token, acceptUrl, emailed: delivery.sent }), 201);
  });

  app.openapi(routes.revokeInvitation, async (c) => {
    const { organizationId, invitationId } = c.req.valid('param');
    const organization = await access(c, organizationId);
    requireManager(organization, 'withdraw invitations');
    const invitation = await revokeInvitation(c.env.DB, organization.organization.id, invitationId);
    if (!invitation.changed) c.set('unchanged', true);
    return c.json(success(invitation.invitation), 200);
  });

  app.openapi(routes.changeRole, async (c) => {
    const { organizationId, userId } = c.req.valid('param');
    const changed = await changeMember(c.env.DB, await access(c, organizationId), c.get('session').user.id, userId, { role: c.req.valid('json').role });
    return c.json(success(changed!), 200);
  });

  app.openapi(routes.remove, async (c) => {
    const { organizationId, userId } = c.req.valid('param');
    const self = c.get('session').user.id;
    // Leaving needs no second factor the organization requires; removing someone else does.
    const organization = await organizationAccess(c.env.DB, self, organizationId, { evenWithoutTwoFactor: userId === self });
    await changeMember(c.env.DB, organization, self, userId, 'remove');
    const revokedKeyIds = await revokePersonalCredentials(c.env, organization.organization.id, userId);
    return c.json(success({ removed: true as const, revokedKeyIds }), 200);
  });

  app.openapi(routes.accept, async (c) => {
    const accepted = await acceptInvitation(c.env.DB, c.req.valid('param').token, c.get('session').user);
    return c.json(success({ organizationId: accepted.organizationId, organizationName: accepted.organizationName, role: accepted.role }), 200);
  });
}
