import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { type ApiError, ERROR_CODES, type ErrorCode, ErrorDetail } from './errors';

/** The `meta` object of a metered success. */
export const Meta = z
  .object({
    costCents: z.number().openapi({ description: 'Cost of this call in cents (fractions allowed).' }),
    purchasedBalanceCents: z.number(),
    subscriptionRemainingCents: z.number(),
    cached: z.boolean(),
    latencyMs: z.number(),
    replayed: z.literal(true).optional().openapi({
      description:
        'Present on a replay: this answer is that of an earlier call with the same Idempotency-Key (its data and meta as they were then), and this request was not charged.',
    }),
    sandbox: z.literal(true).optional().openapi({
      description: "Present on a sandbox key's call (scope workspace_dryrun, /runtime/*): `data` is the operation's documented example, no vendor was called and nothing was charged.",
    }),
    quotedCents: z.number().optional().openapi({ description: 'On a sandbox call: the most the same call would cost live (its quote, held before it runs; charged on what it returns), in cents.' }),
    connectionId: z.string().optional().openapi({ description: "On a call through a connection: the connection whose vendor account served it; costCents is the plan's platform fee." }),
  })
  .openapi('Meta', { example: { costCents: 1, purchasedBalanceCents: 499, subscriptionRemainingCents: 0, cached: false, latencyMs: 212 } });
export type Meta = z.infer<typeof Meta>;

/** The `error` object every failure carries, over REST and as an MCP tool error alike. */
export const ErrorObject = z.object({
  code: z.enum(ERROR_CODES as [ErrorCode, ...ErrorCode[]]).openapi({ description: 'Stable; the contract. Messages may change.' }),
  message: z.string(),
  details: z.array(ErrorDetail).optional().openapi({ description: 'Validation failures, one entry per offending field.' }),
  retryAfter: z.number().int().optional().openapi({ description: 'Seconds to wait; also sent as the Retry-After header.' }),
});
export type ErrorObject = z.infer<typeof ErrorObject>;

/** The one place a success body is built; `message` is the upstream's, kept where the spec shows one. */
export function success<T>(data: T, meta?: Meta, message?: string): { success: true; message?: string; data: T; meta?: Meta } {
  return { success: true, ...(message === undefined ? {} : { message }), data, ...(meta ? { meta } : {}) };
}

/** The one place an ApiError becomes the error object: REST bodies and MCP tool errors both use it. */
export function errorObject(error: ApiError): ErrorObject {
  return {
    code: error.code,
    message: error.message,
    ...(error.details ? { details: error.details } : {}),
    ...(error.retryAfter !== undefined ? { retryAfter: error.retryAfter } : {}),
  };
}

/** The one place a failure becomes a response: body, status, `Retry-After` and any extra headers. */
export function failure(c: Context, error: ApiError): Response {
  const body = { success: false as const, error: { ...errorObject(error), ...error.extra } };
  const headers: Record<string, string> = { ...error.headers };
  if (error.retryAfter !== undefined) headers['Retry-After'] = String(error.retryAfter);
  return c.json(body, error.status, headers);
}
