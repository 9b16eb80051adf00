import { clock } from '../../core/clock';
import { ApiError } from '../../core/errors';
import { assertRoomFor, type OrganizationTerms } from '../plan-caps';

/** The UTC calendar month an event is counted in, '2026-11': the same months as billing periods. */
export function monthOf(at: number): string {
  return new Date(at).toISOString().slice(0, 7);
}

/**
 * Counts one webhook event (one event sent to one endpoint) against the organization's monthly cap, in
 * one statement so two events can never take the last unit: answers null when counted, else the 402 to
 * show (PLAN_LIMIT_REACHED with used/limit, or SUBSCRIPTION_REQUIRED without a plan). Retries of a
 * delivery are not counted again.
 */
export async function countWebhookEvent(db: D1Database, organizationId: string, terms: OrganizationTerms): Promise<ApiError | null> {
  const month = monthOf(clock.now());
  const limit = terms.caps?.webhookEvents ?? 0;
  const counted = await db
    .prepare(
      `INSERT INTO webhook_event_counts (organization_id, month, events) SELECT ?, ?, 1 WHERE ? > 0
       ON CONFLICT (organization_id, month) DO UPDATE SET events = events + 1 WHERE events < ?
       RETURNING events`,
    )
    .bind(organizationId, month, terms.caps ? limit : 0, limit)
    .first<{ events: number }>();
  if (counted) return null;
  const used = (await webhookEventsUsed(db, organizationId)) ?? 0;
  try {
    assertRoomFor(terms, 'webhookEvents', used);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  // Unreachable while the statement above and assertRoomFor agree; said plainly if they ever do not.
  return new ApiError('PLAN_LIMIT_REACHED', `This organization has used ${used} of ${limit} webhook events this month.`);
}

/** Webhook events counted this month. */
export async function webhookEventsUsed(db: D1Database, organizationId: string): Promise<number> {
  const row = await db.prepare('SELECT events FROM webhook_event_counts WHERE organization_id = ? AND month = ?').bind(organizationId, monthOf(clock.now())).first<{ events: number }>();
  return row?.events ?? 0;
}
