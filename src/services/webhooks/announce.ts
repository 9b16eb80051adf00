import { termsOf } from '../plan-caps';
import type { ApiKeyRecord } from '../../core/records';
import { centsFromUnits } from '../../core/money';
import { senderOf, type WebhookBindings } from './bindings';
import { subscribedEndpoints, type SubscribedEndpoint } from './endpoints';
import { countWebhookEvent } from './event-cap';
import { eventId, type EventType, newEvent, type WebhookEvent } from '../../core/webhook-events';

/**
 * Sends an event to every endpoint subscribed to it: the workspace's own, or for an organization's event
 * (credits) the endpoints of all its workspaces. Each is counted against the monthly cap first; past the
 * cap it is recorded on the endpoint as skipped instead of sent. `eventFor` may tailor the event to an
 * endpoint (its credits.low threshold) or leave that endpoint out (null).
 *
 * An endpoint that cannot be given the event (its sender or the count unreachable) does not keep it from the
 * others: each is tried, and then the failures are thrown together, so the caller retries. A retry reaches only
 * those not reached, since an event an endpoint has is skipped; which is why every caller that may retry
 * announces an event whose id derives from what it says.
 */
export async function announce(
  env: WebhookBindings,
  audience: { workspaceId: string } | { organizationId: string },
  type: EventType,
  eventFor: WebhookEvent | ((endpoint: SubscribedEndpoint) => Promise<WebhookEvent | null>),
): Promise<void> {
  const endpoints = await subscribedEndpoints(env.DB, audience, type);
  if (endpoints.length === 0) return;
  const terms = await termsOf(env.DB, endpoints[0]!.organizationId);
  const failures: unknown[] = [];
  for (const endpoint of endpoints) {
    try {
      const event = typeof eventFor === 'function' ? await eventFor(endpoint) : eventFor;
      if (!event) continue;
      const sender = senderOf(env, endpoint.id);
      // An event the endpoint has already (a usage.daily report retried or handed over twice) is neither counted nor queued again.
      if (await sender.has(event.id)) continue;
      const refusal = await countWebhookEvent(env.DB, endpoint.organizationId, terms);
      if (refusal) await sender.skip(endpoint.id, event, `${refusal.code}: ${refusal.message}`);
      else await sender.enqueue(endpoint.id, event);
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length) throw new AggregateError(failures, `${type} reached ${endpoints.length - failures.length} of ${endpoints.length} endpoints: ${failures.map(String).join('; ')}`);
}

/**
 * key.created and key.revoked, from every place keys are made or revoked (dashboard, operator API), and
 * key.expiring from the dashboard's daily run. Each event's id derives from the key (and the expiry it warns of),
 * as each happens once to a key, so an announcement tried again reaches only the endpoints the first missed, and a
 * daily run again sends nothing twice. It is tried twice; a failure then is logged, never turned into a failure of
 * the key change itself.
 */
export async function announceKey(env: WebhookBindings, type: 'key.created' | 'key.revoked' | 'key.expiring', key: ApiKeyRecord): Promise<void> {
  const data = { workspaceId: key.workspaceId, key: { id: key.id, name: key.name, scope: key.scope, hint: key.hint, createdAt: key.createdAt, revokedAt: key.revokedAt, expiresAt: key.expiresAt } };
  const event = newEvent(type, data, await eventId(type === 'key.expiring' ? `key.expiring:${key.id}:${key.expiresAt}` : `${type}:${key.id}`));
  const tell = () => announce(env, { workspaceId: key.workspaceId }, type, event);
  await tell()
    .catch(tell)
    .catch((error: unknown) => {
      console.error(JSON.stringify({ level: 'error', note: `${type} not announced`, keyId: key.id, error: String(error) }));
    });
}

/** How the organization's available balance moved since the wallet last reported it, in 1/10,000 cents. */
export interface CreditMovement {
  organizationId: string;
  /**
   * Which movement of the balance this is, counted by the wallet: its events' ids derive from it, so an alarm
   * retried partway (some endpoints told, the count not yet moved on) finds them already sent and says nothing twice.
   */
  seq: number;
  fromUnits: number;
  toUnits: number;
  /** The balance reached zero, or a call was refused for want of credit, since the last time this was said. */
  exhausted: boolean;
  purchasedUnits: number;
  subscriptionUnits: number;
}

/**
 * credits.low to each subscribed endpoint whose threshold the balance just fell below (it was at or
 * above it, and now is under), and credits.exhausted when the wallet says so.
 */
export async function announceCredits(env: WebhookBindings, movement: CreditMovement): Promise<void> {
  const audience = { organizationId: movement.organizationId };
  const balances = {
    organizationId: movement.organizationId,
    availableCents: centsFromUnits(movement.toUnits),
    purchasedBalanceCents: centsFromUnits(movement.purchasedUnits),
    subscriptionRemainingCents: centsFromUnits(movement.subscriptionUnits),
  };
  if (movement.toUnits < movement.fromUnits) {
    const from = centsFromUnits(movement.fromUnits);
    const to = centsFromUnits(movement.toUnits);
    await announce(env, audience, 'credits.low', async (endpoint) => {
      const threshold = endpoint.creditsLowThresholdCents;
      if (!(from >= threshold && to < threshold)) return null;
      const id = await eventId(`credits.low:${movement.organizationId}:${movement.seq}:${threshold}`);
      return newEvent('credits.low', { ...balances, thresholdCents: threshold }, id);
    });
  }
  if (movement.exhausted) {
    const id = await eventId(`credits.exhausted:${movement.organizationId}:${movement.seq}`);
    await announce(env, audience, 'credits.exhausted', newEvent('credits.exhausted', balances, id));
  }
}
