import { clock } from '../core/clock';
import { sha256Hex } from '../core/digest';
import { ApiError } from '../core/errors';
import { newId, randomHex } from '../core/ids';
import { countAttempt, type ThrottleRule } from '../core/throttle';
import { assertRoomFor, type OrganizationTerms, refuseFull } from '../services/plan-caps';
import type { Role } from './members';

/**
 * Invitations an organization sends a day, and an inbox receives from all of Sluice. Each is an email from
 * Sluice's domain with a subject the sender writes (their name and the organization's), and withdrawing one
 * frees its seat: without a count, revoking and inviting again sent mail without end, at the sender's choice of
 * inbox and at the cost of the domain every account's confirmation mail goes out from. A team sends a few.
 */
export const INVITATIONS_PER_ORGANIZATION: ThrottleRule = { limit: 50, windowMs: 24 * 60 * 60_000, what: 'invitations sent by this organization today' };
/** Counted per organization and inbox, so one organization cannot use up an address's day for every other. */
export const INVITATIONS_PER_INBOX: ThrottleRule = { limit: 5, windowMs: 24 * 60 * 60_000, what: 'invitations this organization sent to this address today' };
/** And from all of Sluice, higher: five organizations' worth. */
export const INVITATIONS_PER_INBOX_IN_ALL: ThrottleRule = { limit: 25, windowMs: 24 * 60 * 60_000, what: 'invitations sent to this address today' };

/** An invitation link works for a week. */
export const INVITATION_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000;

export interface Invitation {
  id: string;
  organizationId: string;
  email: string;
  role: Exclude<Role, 'owner'>;
  invitedBy: string;
  createdAt: string;
  expiresAt: string;
  acceptedAt: string | null;
  revokedAt: string | null;
  status: 'pending' | 'accepted' | 'revoked' | 'expired';
}

const columns = (table = 'invitations') =>
  `${table}.id, ${table}.organization_id AS organizationId, ${table}.email, ${table}.role, ${table}.invited_by AS invitedBy,
   ${table}.created_at AS createdAt, ${table}.expires_at AS expiresAt, ${table}.accepted_at AS acceptedAt, ${table}.revoked_at AS revokedAt`;

function withStatus(row: Omit<Invitation, 'status'>): Invitation {
  const status = row.acceptedAt ? 'accepted' : row.revokedAt ? 'revoked' : Date.parse(row.expiresAt) <= clock.now() ? 'expired' : 'pending';
  return { ...row, status };
}

/** Seats in use: members, and invitations still waiting for an answer. */
export async function occupiedSeats(db: D1Database, organizationId: string): Promise<number> {
  const row = await db
    .prepare(
      `SELECT (SELECT COUNT(*) FROM memberships WHERE organization_id = ?1)
            + (SELECT COUNT(*) FROM invitations WHERE organization_id = ?1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ?2) AS seats`,
    )
    .bind(organizationId, new Date(clock.now()).toISOString())
    .first<{ seats: number }>();
  return row?.seats ?? 0;
}

/**
 * Invites an address into an organization. The seat check and the insert are one statement, so two
 * invitations sent at once cannot both take the last seat.
 */
export async function invite(
  db: D1Database,
  terms: OrganizationTerms,
  input: { organizationId: string; email: string; role: Exclude<Role, 'owner'>; invitedBy: string },
): Promise<{ invitation: Invitation; token: string }> {
  const member = await db
    .prepare('SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.organization_id = ? AND u.email = ?')
    .bind(input.organizationId, input.email)
    .first();
  if (member) throw ApiError.conflict(`${input.email} is already a member of this organization.`);
  const now = clock.now();
  const pendingOne = () =>
    db
      .prepare('SELECT id FROM invitations WHERE organization_id = ? AND email = ? AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ?')
      .bind(input.organizationId, input.email, new Date(now).toISOString())
      .first<{ id: string }>();
  const alreadyInvited = (pending: { id: string }) => ApiError.conflict(`${input.email} already has a pending invitation (${pending.id}); revoke it to send a new one.`);
  const pending = await pendingOne();
  if (pending) throw alreadyInvited(pending);

  const used = await occupiedSeats(db, input.organizationId);
  assertRoomFor(terms, 'seats', used, 'SEAT_LIMIT_REACHED');
  // Counted once the invitation could be sent, so a duplicate or a full organization costs no count; the inbox's
  // first, so an invitation it refuses costs the organization none of its day.
  await countAttempt(db, `invite-to:${input.organizationId}:${input.email}`, INVITATIONS_PER_INBOX);
  await countAttempt(db, `invite-to:${input.email}`, INVITATIONS_PER_INBOX_IN_ALL);
  await countAttempt(db, `invite-org:${input.organizationId}`, INVITATIONS_PER_ORGANIZATION);
  const token = randomHex(32);
  const id = newId('inv');
  const createdAt = new Date(now).toISOString();
  const expiresAt = new Date(now + INVITATION_LIFETIME_MS).toISOString();
  const inserted = await db
    .prepare(
      `INSERT INTO invitations (id, organization_id, email, role, token_hash, invited_by, created_at, expires_at)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8
        WHERE (SELECT COUNT(*) FROM memberships WHERE organization_id = ?2)
            + (SELECT COUNT(*) FROM invitations WHERE organization_id = ?2 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ?7) < ?9
          AND NOT EXISTS (SELECT 1 FROM invitations WHERE organization_id = ?2 AND email = ?3 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ?7)`,
    )
    .bind(id, input.organizationId, input.email, input.role, await sha256Hex(token), input.invitedBy, createdAt, expiresAt, terms.caps!.seats)
    .run();
  // Nothing written: the same address was invited a moment before (two invitations at once), or the seats are full.
  if (inserted.meta.changes !== 1) {
    const sent = await pendingOne();
    if (sent) throw alreadyInvited(sent);
    refuseFull(terms, 'seats', await occupiedSeats(db, input.organizationId), 'SEAT_LIMIT_REACHED');
  }
  return { invitation: withStatus({ id, organizationId: input.organizationId, email: input.email, role: input.role, invitedBy: input.invitedBy, createdAt, expiresAt, acceptedAt: null, revokedAt: null }), token };
}

export async function listInvitations(db: D1Database, organizationId: string): Promise<Invitation[]> {
  const { results } = await db.prepare(`SELECT ${columns()} FROM invitations WHERE organization_id = ? ORDER BY created_at DESC, id DESC`).bind(organizationId).all<Omit<Invitation, 'status'>>();
  return results.map(withStatus);
}

export async function invitationByToken(db: D1Database, token: string): Promise<(Invitation & { organizationName: string }) | null> {
  if (!/^[0-9a-f]{64}$/.test(token)) return null;
  const row = await db
    .prepare(`SELECT ${columns('i')}, o.name AS organizationName FROM invitations i JOIN organizations o ON o.id = i.organization_id WHERE i.token_hash = ?`)
    .bind(await sha256Hex(token))
    .first<Omit<Invitation, 'status'> & { organizationName: string }>();
  return row ? { ...withStatus(row), organizationName: row.organizationName } : null;
}

export async function revokeInvitation(db: D1Database, organizationId: string, invitationId: string): Promise<{ invitation: Invitation; changed: boolean }> {
  const row = await db.prepare(`SELECT ${columns()} FROM invitations WHERE id = ? AND organization_id = ?`).bind(invitationId, organizationId).first<Omit<Invitation, 'status'>>();
  if (!row) throw ApiError.notFound(`No invitation ${invitationId}.`);
  const invitation = withStatus(row);
  if (invitation.status === 'accepted') throw ApiError.conflict(`Invitation ${invitationId} was already accepted; remove the member instead.`);
  if (invitation.status === 'pending') {
    const revokedAt = new Date(clock.now()).toISOString();
    const revoked = await db.prepare('UPDATE invitations SET revoked_at = ? WHERE id = ? AND accepted_at IS NULL AND revoked_at IS NULL').bind(revokedAt, invitationId).run();
    return { invitation: { ...invitation, revokedAt, status: 'revoked' }, changed: revoked.meta.changes === 1 };
  }
  return { invitation, changed: false };
}

/** How long an organization marked closing refuses invitations (account-deletion.ts): a deletion that failed and was not asked again lets go. */
const CLOSING_HOLDS_MS = 10 * 60_000;

/** The invitation's sender is still an owner or admin of its organization (members.ts withdraws theirs when they stop being one). */
const SENDER_MAY_INVITE = `EXISTS (SELECT 1 FROM memberships sender WHERE sender.organization_id = invitations.organization_id AND sender.user_id = invitations.invited_by AND sender.role IN ('owner', 'admin'))`;

/**
 * Accepts an invitation for the signed-in person: only the invited address may, and only once, while it
 * is pending. Marking it accepted and adding the membership is one batch; the mark is conditional, so two
 * accepts at once add one member.
 */
export async function acceptInvitation(db: D1Database, token: string, user: { id: string; email: string }): Promise<Invitation & { organizationName: string }> {
  const invitation = await invitationByToken(db, token);
  if (!invitation) throw ApiError.notFound('No such invitation. Ask for a new link.');
  if (invitation.status !== 'pending') throw ApiError.conflict(`This invitation was ${invitation.status}${invitation.status === 'expired' ? '' : ' already'}; it cannot be used again. Ask for a new one.`);
  if (invitation.email !== user.email) {
    throw new ApiError('INVITATION_EMAIL_MISMATCH', `This invitation is for ${invitation.email}, but you are signed in as ${user.email}. Sign in as the invited address.`);
  }
  const member = await db.prepare('SELECT 1 FROM memberships WHERE organization_id = ? AND user_id = ?').bind(invitation.organizationId, user.id).first();
  if (member) throw ApiError.conflict('You are already a member of this organization.');
  const now = new Date(clock.now()).toISOString();
  // Not into an organization its last member is closing with their account (account-deletion.ts): one check, in the
  // same statement as the mark, so the deletion's own mark and this one cannot both pass.
  const closingSince = new Date(clock.now() - CLOSING_HOLDS_MS).toISOString();
  const [marked] = await db.batch([
    db
      .prepare(
        `UPDATE invitations SET accepted_at = ?1, accepted_by = ?2 WHERE id = ?3 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ?1
            AND NOT EXISTS (SELECT 1 FROM organizations o WHERE o.id = invitations.organization_id AND (o.closed_at IS NOT NULL OR o.closing_at > ?4))
            AND ${SENDER_MAY_INVITE}`,
      )
      .bind(now, user.id, invitation.id, closingSince),
    db
      .prepare('INSERT OR IGNORE INTO memberships (organization_id, user_id, role, created_at) SELECT ?, ?, ?, ? WHERE changes() = 1')
      .bind(invitation.organizationId, user.id, invitation.role, now),
  ]);
  if (marked!.meta.changes !== 1) {
    const closing = await db.prepare('SELECT 1 FROM organizations WHERE id = ? AND (closed_at IS NOT NULL OR closing_at > ?)').bind(invitation.organizationId, closingSince).first();
    if (closing) throw ApiError.conflict(`${invitation.organizationName} is closing: its last member is deleting their account. Ask them, or for an invitation elsewhere.`);
    const senderMayInvite = await db.prepare(`SELECT 1 FROM invitations WHERE id = ? AND ${SENDER_MAY_INVITE}`).bind(invitation.id).first();
    throw ApiError.conflict(
      senderMayInvite ? 'This invitation was used a moment ago; it cannot be used again.' : `Whoever sent this invitation can no longer invite to ${invitation.organizationName}. Ask one of its owners or admins for a new one.`,
    );
  }
  return { ...invitation, acceptedAt: now, status: 'accepted' };
}
