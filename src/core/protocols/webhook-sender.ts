import type { Delivery } from '../webhook-delivery';
import type { WebhookEvent } from '../webhook-events';

/** What the rest of Sluice may ask an endpoint's sender (durable-objects/webhook-sender.ts): its deliveries, their retries and attempts, in order. */
export interface WebhookSenderProtocol extends Rpc.DurableObjectBranded {
  /** Whether the endpoint has this event already (pending, or among its last 200 ended deliveries): an event is counted and queued once. */
  has(eventId: string): boolean;
  /** Queues the event; it is sent by alarm, and retried on the schedule. */
  enqueue(endpointId: string, event: WebhookEvent): void;
  /** Records the event as never sent, with the reason (the monthly cap, no plan). */
  skip(endpointId: string, event: WebhookEvent, reason: string): void;
  /** Sends the event now and answers how it went (a ping). */
  sendNow(endpointId: string, event: WebhookEvent): Promise<Delivery>;
  deliveries(limit?: number): Delivery[];
  /** The endpoint was deleted: its deliveries go too. */
  forget(): Promise<void>;
}
