import type { Context } from 'hono';
import { ApiError } from './errors';

/** The `meta` object of a metered success. */
export interface Meta {
  costCents: number;
  purchasedBalanceCents: number;
  subscriptionRemainingCents: number;
  cached: boolean;
  latencyMs: number;
}

export function success<T>(data: T, meta?: Meta): { success: true; data: T; meta?: Meta } {
  return meta ? { success: true, data, meta } : { success: true, data };
}

/** The one place a failure becomes a response: body, status, `Retry-After` and any extra headers. */
export function failure(c: Context, error: ApiError): Response {
  const body = {
    success: false as const,
    error: {
      code: error.code,
      message: error.message,
      ...(error.details ? { details: error.details } : {}),
      ...(error.retryAfter !== undefined ? { retryAfter: error.retryAfter } : {}),
      ...error.extra,
    },
  };
  const headers: Record<string, string> = { ...error.headers };
  if (error.retryAfter !== undefined) headers['Retry-After'] = String(error.retryAfter);
  return c.json(body, error.status, headers);
}
