import type { WebhookSenderProtocol } from '../../core/protocols/webhook-sender';

/** What emitting an event needs: the database (which endpoints want it) and the endpoints' senders. */
export interface WebhookBindings {
  DB: D1Database;
  WEBHOOK_SENDER: DurableObjectNamespace<WebhookSenderProtocol>;
}

/** One sender per endpoint: its deliveries, their retries and attempts, in order. */
export function senderOf(env: Pick<WebhookBindings, 'WEBHOOK_SENDER'>, endpointId: string) {
  return env.WEBHOOK_SENDER.get(env.WEBHOOK_SENDER.idFromName(endpointId));
}
