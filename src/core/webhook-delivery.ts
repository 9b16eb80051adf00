import { z } from '@hono/zod-openapi';

export const DeliveryAttempt = z
  .object({
    attempt: z.number().int().openapi({ description: '1 for the first try, then each retry.' }),
    at: z.string(),
    status: z.number().int().nullable().openapi({ description: "The receiver's HTTP status; null when it did not answer (refused address, network error, time limit)." }),
    error: z.string().nullable().openapi({ description: 'Why the attempt failed; null on a 2xx.' }),
    durationMs: z.number().int(),
  })
  .openapi('WebhookDeliveryAttempt');

export const Delivery = z
  .object({
    id: z.string().openapi({ description: 'The event id, sent as the webhook-id header; the same on every retry.', example: 'evt_9f8e7d6c5b4a39281706f5e4' }),
    type: z.string().openapi({ example: 'key.created' }),
    state: z.enum(['pending', 'delivered', 'failed', 'skipped']).openapi({
      description: 'pending: waiting for its next attempt; delivered: a 2xx came back; failed: every attempt failed; skipped: never sent (the monthly webhook-event cap was reached, or the organization has no plan).',
    }),
    reason: z.string().nullable().openapi({ description: 'Why a delivery was skipped or gave up.' }),
    createdAt: z.string(),
    nextAttemptAt: z.string().nullable(),
    payload: z.string().openapi({ description: 'The exact body sent (and signed).' }),
    attempts: z.array(DeliveryAttempt),
  })
  .openapi('WebhookDelivery');
export type Delivery = z.infer<typeof Delivery>;
