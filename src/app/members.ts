import { nowIso } from '../core/clock';
import { lacksRequiredSecondFactorSql, type Organization, planInForceSql, secondFactorOnSql, type Workspace } from '../core/records';
import { ApiError } from '../core/errors';
import type { Env } from '../core/config';
import { revokeKey } from '../services/accounts';
import { revokeGrant } from '../services/oauth/tokens';
import { isTwoFactorEnabled } from './two-factor';

export const ROLES = ['owner', 'admin', 'member'] as const;
export type Role = (typeof ROLES)[number];
/** A role as the dashboard's pages name it; the API and the database keep the lowercase value. */
export const ROLE_LABELS: Record<Role, string> = { owner: 'Owner', admin: 'Admin', member: 'Member' };

export interface OrganizationAccess {
  organization: Organization;
  role: Role;
  /** When the organization began to require two-factor sign-in of its members; null: it does not. */
  twoFactorRequiredAt: string | null;
}

export interface WorkspaceAccess extends OrganizationAccess {
  workspace: Workspace;
}

const ORGANIZATION_COLUMNS = `o.id, o.name, ${planInForceSql('o')} AS plan, o.rpm_override AS rpmOverride, o.created_at AS createdAt`;
/** Whether the member lacks a second factor the organization requires: then they are let in to Settings only. */
const LACKS_TWO_FACTOR = `${lacksRequiredSecondFactorSql('o', 'm.user_id')} AS lacksTwoFactor`;

type AccessRow = Organization & { role: Role; twoFactorRequiredAt: string | null; lacksTwoFactor: number };

/** The 403 of a member whose organization requires the two-factor sign-in they have not turned on. */
export function twoFactorRequiredError(organizationName: string): ApiError {
  return ApiError.forbidden(`${organizationName} requires two-factor sign-in of its members. Turn it on in Settings (Two-factor sign-in), then come back.`);
}

/**
 * The organization as this user may see it. Not a member reads exactly like no such organization: another
 * organization's records are missing, not forbidden (spec, NOT_FOUND). A member it requires two-factor sign-in of,
 * without it, is refused with 403 saying so, unless `evenWithoutTwoFactor` (the person leaving it, or deleting their
 * account: going needs no second factor).
 */
export async function organizationAccess(db: D1Database, userId: string, organizationId: string, options: { evenWithoutTwoFactor?: boolean } = {}): Promise<OrganizationAccess> {
  const row = await db
    .prepare(
      `SELECT ${ORGANIZATION_COLUMNS}, m.role, o.two_factor_required_at AS twoFactorRequiredAt, ${LACKS_TWO_FACTOR}
         FROM memberships m JOIN organizations o ON o.id = m.organization_id WHERE m.user_id = ? AND o.id = ?`,
    )
    .bind(nowIso(), userId, organizationId)
    .first<AccessRow>();
  if (!row) throw ApiError.notFound(`No organization ${organizationId}.`);
  const { role, twoFactorRequiredAt, lacksTwoFactor, ...organization } = row;
  if (lacksTwoFactor && !options.evenWithoutTwoFactor) throw twoFactorRequiredError(organization.name);
  return { organization, role, twoFactorRequiredAt };
}

/** The workspace, its organization and this user's role there; another organization's workspace reads as missing. */
export async function workspaceAccess(db: D1Database, userId: string, workspaceId: string): Promise<WorkspaceAccess> {
  const { access, lacksTwoFactor } = await workspaceMembership(db, userId, workspaceId);
  if (lacksTwoFactor) throw twoFactorRequiredError(access.organization.name);
  return access;
}

/**
 * A workspace as `workspaceAccess` finds it, with whether its organization requires a second factor this member
 * lacks: for the dashboard's pages, which then show Settings only (where it is turned on), not for any API route.
 */
export async function workspaceMembership(db: D1Database, userId: string, workspaceId: string): Promise<{ access: WorkspaceAccess; lacksTwoFactor: boolean }> {
  const row = await db
    .prepare(
      `SELECT ${ORGANIZATION_COLUMNS}, m.role, o.two_factor_required_at AS twoFactorRequiredAt, ${LACKS_TWO_FACTOR},
              w.id AS workspaceId, w.name AS workspaceName, w.created_at AS workspaceCreatedAt
         FROM workspaces w
         JOIN organizations o ON o.id = w.organization_id
         JOIN memberships m ON m.organization_id = o.id AND m.user_id = ?
        WHERE w.id = ? AND w.deleted_at IS NULL`,
    )
    .bind(nowIso(), userId, workspaceId)
    .first<AccessRow & { workspaceId: string; workspaceName: string; workspaceCreatedAt: string }>();
  if (!row) throw ApiError.notFound(`No workspace ${workspaceId}.`);
  const { role, twoFactorRequiredAt, lacksTwoFactor, workspaceId: id, workspaceName, workspaceCreatedAt, ...organization } = row;
  return {
    access: { organization, role, twoFactorRequiredAt, workspace: { id, organizationId: organization.id, name: workspaceName, createdAt: workspaceCreatedAt } },
    lacksTwoFactor: lacksTwoFactor === 1,
  };
}

/** The organizations of this person that require two-factor sign-in of their members. */
export async function organizationsRequiringTwoFactor(db: D1Database, userId: string): Promise<{ id: string; name: string }[]> {
  const { results } = await db
    .prepare('SELECT o.id, o.name FROM memberships m JOIN organizations o ON o.id = m.organization_id WHERE m.user_id = ? AND o.two_factor_required_at IS NOT NULL ORDER BY o.name')
    .bind(userId)
    .all<{ id: string; name: string }>();
  return results;
}

/**
 * Makes the organization require two-factor sign-in of its members, or stop (owners only). The owner who requires it
 * must have it on: an organization whose owners are all shut out could only be reopened by an operator. Answers how
 * many members are without it, who are shut out of its workspaces from the next request until they turn it on.
 */
export async function setTwoFactorRequirement(
  db: D1Database,
  access: OrganizationAccess,
  userId: string,
  required: boolean,
): Promise<{ required: boolean; membersWithout: number; changed: boolean }> {
  if (access.role !== 'owner') throw ApiError.forbidden(`Only owners can change what ${access.organization.name} requires of its members; your role is ${access.role}.`);
  if (required && !(await isTwoFactorEnabled(db, userId))) {
    throw ApiError.conflict('Turn on two-factor sign-in for your own account first (Settings, Two-factor sign-in): requiring it would shut you out too.');
  }
  const written = await db
    .prepare(required ? 'UPDATE organizations SET two_factor_required_at = ? WHERE id = ? AND two_factor_required_at IS NULL' : 'UPDATE organizations SET two_factor_required_at = NULL WHERE id = ? AND two_factor_required_at IS NOT NULL')
    .bind(...(required ? [nowIso()] : []), access.organization.id)
    .run();
  return { required, membersWithout: await membersWithoutTwoFactor(db, access.organization.id), changed: written.meta.changes === 1 };
}

/** How many of the organization's members have not turned two-factor sign-in on. */
export async function membersWithoutTwoFactor(db: D1Database, organizationId: string): Promise<number> {
  const row = await db
    .prepare(`SELECT COUNT(*) AS n FROM memberships m WHERE m.organization_id = ? AND NOT ${secondFactorOnSql('m.user_id')}`)
    .bind(organizationId)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

/** Owners and admins manage the organization (workspaces, others' keys); members use it. */
export function canManage(role: Role): boolean {
  return role === 'owner' || role === 'admin';
}

export function requireManager(access: OrganizationAccess, action: string): void {
  if (!canManage(access.role)) throw ApiError.forbidden(`Only owners and admins can ${action}; your role in ${access.organization.name} is ${access.role}.`);
}

export interface MembershipSummary {
  id: string;
  name: string;
  plan: Organization['plan'];
  role: Role;
  /** The organization requires a second factor this person has not turned on: its workspaces refuse them (403) until they do. */
  twoFactorRequired: boolean;
  workspaces: Workspace[];
}

/**
 * Every organization this user belongs to, with its workspaces: what the switcher, /api/me and the consent page show.
 * One that shuts them out until they turn on two-factor sign-in is still listed (they are a member, and its Settings
 * page is where they turn it on), marked `twoFactorRequired`.
 */
export async function membershipsOf(db: D1Database, userId: string): Promise<MembershipSummary[]> {
  const [organizations, workspaces] = await db.batch<Record<string, unknown>>([
    db
      .prepare(
        `SELECT o.id, o.name, ${planInForceSql('o')} AS plan, m.role, ${LACKS_TWO_FACTOR}
           FROM memberships m JOIN organizations o ON o.id = m.organization_id WHERE m.user_id = ? ORDER BY m.created_at, o.id`,
      )
      .bind(nowIso(), userId),
    db
      .prepare(
        `SELECT w.id, w.organization_id AS organizationId, w.name, w.created_at AS createdAt
           FROM workspaces w JOIN memberships m ON m.organization_id = w.organization_id
          WHERE m.user_id = ? AND w.deleted_at IS NULL ORDER BY w.created_at, w.id`,
      )
      .bind(userId),
  ]);
  const all = workspaces!.results as unknown as Workspace[];
  return (organizations!.results as unknown as (Omit<MembershipSummary, 'workspaces' | 'twoFactorRequired'> & { lacksTwoFactor: number })[]).map(({ lacksTwoFactor, ...organization }) => ({
    ...organization,
    twoFactorRequired: lacksTwoFactor === 1,
    workspaces: all.filter((workspace) => workspace.organizationId === organization.id),
  }));
}

export interface Member {
  userId: string;
  email: string;
  name: string;
  role: Role;
  joinedAt: string;
  /** Whether they sign in with a second factor: shown to owners and admins only (absent for others). */
  twoFactor?: boolean;
}

export async function listMembers(db: D1Database, organizationId: string, withTwoFactor = false): Promise<Member[]> {
  const { results } = await db
    .prepare(
      `SELECT u.id AS userId, u.email, u.name, m.role, m.created_at AS joinedAt,
              ${secondFactorOnSql('u.id')} AS twoFactor
         FROM memberships m JOIN users u ON u.id = m.user_id
        WHERE m.organization_id = ? ORDER BY m.created_at, u.email`,
    )
    .bind(organizationId)
    .all<Omit<Member, 'twoFactor'> & { twoFactor: number }>();
  return results.map(({ twoFactor, ...member }) => (withTwoFactor ? { ...member, twoFactor: twoFactor === 1 } : member));
}

export type MemberChange = { role: Role } | 'remove';

/**
 * Changes a member's role or removes them (`actorId` removing themselves is leaving). Owners and admins
 * manage members; only an owner may touch an owner or make one; anyone may leave; the last owner stays (an
 * organization always has someone who can manage it). The rules are checked on a fresh read for a precise
 * refusal, then again by the write itself, so two owners demoting, removing each other or leaving at once
 * cannot both succeed: the one whose statement runs second changes nothing and is told why.
 */
export async function changeMember(db: D1Database, access: OrganizationAccess, actorId: string, userId: string, change: MemberChange): Promise<Member | null> {
  const { organization } = access;
  const members = await listMembers(db, organization.id);
  const refused = refusal(organization, access.role, members, actorId, userId, change);
  if (refused) throw refused;
  if (await writeIfAllowed(db, organization.id, actorId, userId, change)) {
    if (change === 'remove' || change.role === 'member') await withdrawInvitationsSentBy(db, organization.id, userId);
    return change === 'remove' ? null : { ...members.find((member) => member.userId === userId)!, role: change.role };
  }
  throw lostRace(organization, await listMembers(db, organization.id), actorId, userId, change);
}

/**
 * The invitations a person sent that nobody has accepted end when they can no longer invite (removed, leaving, made a
 * member): a link they kept would otherwise let them, or whomever they chose, back in afterwards. Acceptance checks
 * the sender's standing too (invitations.ts), for an invitation accepted while this runs.
 */
async function withdrawInvitationsSentBy(db: D1Database, organizationId: string, userId: string): Promise<void> {
  await db
    .prepare('UPDATE invitations SET revoked_at = ? WHERE organization_id = ? AND invited_by = ? AND accepted_at IS NULL AND revoked_at IS NULL')
    .bind(nowIso(), organizationId, userId)
    .run();
}

/** Why this change is refused when the organization's members are `members` and the actor's role is `actorRole`; null if it is not. */
function refusal(organization: Organization, actorRole: Role, members: Member[], actorId: string, userId: string, change: MemberChange): ApiError | null {
  const leaving = change === 'remove' && userId === actorId;
  if (!leaving && !canManage(actorRole)) return ApiError.forbidden(`Only owners and admins can manage members; your role in ${organization.name} is ${actorRole}.`);
  const target = members.find((member) => member.userId === userId);
  if (!target) return ApiError.notFound(`No member ${userId} in ${organization.name}.`);
  const touchesOwner = target.role === 'owner' || (change !== 'remove' && change.role === 'owner');
  if (!leaving && touchesOwner && actorRole !== 'owner') return ApiError.forbidden(`Only owners can change an owner or make someone owner; your role is ${actorRole}.`);
  if (leavesNoOwner(members, target, change)) return lastOwner(organization, target);
  return null;
}

function leavesNoOwner(members: Member[], target: Member, change: MemberChange): boolean {
  const demotesOwner = target.role === 'owner' && (change === 'remove' || change.role !== 'owner');
  return demotesOwner && !members.some((member) => member.role === 'owner' && member.userId !== target.userId);
}

function lastOwner(organization: Organization, target: Member): ApiError {
  return ApiError.conflict(`${target.name} is the last owner of ${organization.name}; make someone else owner first.`);
}

/**
 * The refusal for a change whose write found the organization changed since the check: the last owner
 * first (the usual loser of two owners demoting each other), then whatever the rules say now.
 */
function lostRace(organization: Organization, members: Member[], actorId: string, userId: string, change: MemberChange): ApiError {
  const target = members.find((member) => member.userId === userId);
  if (target && leavesNoOwner(members, target, change)) return lastOwner(organization, target);
  const actor = members.find((member) => member.userId === actorId);
  if (!actor) return ApiError.notFound(`No organization ${organization.id}.`);
  return (
    refusal(organization, actor.role, members, actorId, userId, change) ??
    ApiError.conflict(`The members of ${organization.name} changed while this was being done; look again and retry.`)
  );
}

/**
 * The same rules as `refusal`, as the WHERE of the one statement that writes: the actor still holds the
 * authority (?3 the actor, ?4 the new role, NULL for a removal) and, when an owner stops being one, another
 * owner remains. D1 runs each statement alone, so a check here cannot be overtaken by another request.
 */
const ALLOWED = `
  EXISTS (SELECT 1 FROM memberships actor
           WHERE actor.organization_id = ?1 AND actor.user_id = ?3
             AND (actor.role = 'owner'
                  OR (actor.role = 'admin' AND memberships.role <> 'owner' AND ifnull(?4, '') <> 'owner')
                  OR (?4 IS NULL AND actor.user_id = memberships.user_id)))
  AND (memberships.role <> 'owner' OR ?4 = 'owner'
       OR EXISTS (SELECT 1 FROM memberships other WHERE other.organization_id = ?1 AND other.role = 'owner' AND other.user_id <> memberships.user_id))`;

async function writeIfAllowed(db: D1Database, organizationId: string, actorId: string, userId: string, change: MemberChange): Promise<boolean> {
  const statement =
    change === 'remove'
      ? db.prepare(`DELETE FROM memberships WHERE organization_id = ?1 AND user_id = ?2 AND ${ALLOWED}`).bind(organizationId, userId, actorId, null)
      : db.prepare(`UPDATE memberships SET role = ?4 WHERE organization_id = ?1 AND user_id = ?2 AND ${ALLOWED}`).bind(organizationId, userId, actorId, change.role);
  return (await statement.run()).meta.changes === 1;
}

/**
 * What a person made for their own use in the organization's workspaces ends with their membership: MCP tokens (an MCP
 * client of theirs), sandbox keys (their dry runs) and the OAuth grants of the clients they connected. Each is revoked
 * through its workspace's gate first, so the very next call with it is refused; an expired one is refused
 * already, and left as it is. The workspace API keys they made run the organization's programs and keep
 * working; the remove button's confirmation says so.
 */
export async function revokePersonalCredentials(env: Env, organizationId: string, userId: string): Promise<string[]> {
  const { results } = await env.DB.prepare(
    `SELECT k.id FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
      WHERE w.organization_id = ? AND k.created_by = ? AND k.revoked_at IS NULL AND k.scope IN ('workspace_mcp', 'workspace_dryrun')
        AND (k.expires_at IS NULL OR k.expires_at > ?)`,
  )
    .bind(organizationId, userId, nowIso())
    .all<{ id: string }>();
  for (const { id } of results) await revokeKey(env, id);
  // Their OAuth grants end too, rather than waiting, refreshable, for a membership that may come back.
  const { results: grants } = await env.DB.prepare(
    'SELECT g.id FROM oauth_grants g JOIN workspaces w ON w.id = g.workspace_id WHERE w.organization_id = ? AND g.user_id = ? AND g.revoked_at IS NULL',
  )
    .bind(organizationId, userId)
    .all<{ id: string }>();
  for (const { id } of grants) await revokeGrant(env.DB, id, 'the person who authorized it left the organization');
  return results.map(({ id }) => id);
}
