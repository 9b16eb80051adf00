import type { Env } from '../../core/config';
import { termsOf } from '../plan-caps';
import { senderOf } from './bindings';
import type { Delivery } from '../../core/webhook-delivery';
import type { WebhookEndpoint } from './endpoints';
import { countWebhookEvent } from './event-cap';
import { newEvent } from '../../core/webhook-events';

/**
 * The test call: a `ping` event, counted against the monthly cap like any other (so past the cap the
 * call itself answers 402 PLAN_LIMIT_REACHED), and attempted at once so the caller sees how it went.
 * A failed ping is retried on the same schedule as every event.
 */
export async function sendPing(env: Env, endpoint: WebhookEndpoint, organizationId: string): Promise<Delivery> {
  const refusal = await countWebhookEvent(env.DB, organizationId, await termsOf(env.DB, organizationId));
  if (refusal) throw refusal;
  const event = newEvent('ping', { endpointId: endpoint.id, workspaceId: endpoint.workspaceId, message: 'A test event from Sluice.' });
  return senderOf(env, endpoint.id).sendNow(endpoint.id, event);
}
