import { z } from '@hono/zod-openapi';
import { errorObject, ErrorObject, Meta } from './envelope';
import { ApiError } from './errors';
import { PLANS } from './plans';
import { headerRef, type ResponseHeaderName } from './openapi-document';

export { Meta };

export const ErrorEnvelope = z
  .object({
    success: z.literal(false),
    error: ErrorObject.extend({
      how_to_get_access: z
        .object({
          mcp_install_url: z.string(),
          signup_url: z.string(),
          docs_url: z.string(),
          openapi_url: z.string(),
        })
        .optional()
        .openapi({ description: 'On 401 responses under /v1: where to get a credential.' }),
    }),
  })
  .openapi('ErrorEnvelope');

export function successEnvelope<T extends z.ZodType>(data: T, options: { metered?: boolean } = {}) {
  return z.object({
    success: z.literal(true),
    data,
    ...(options.metered ? { meta: Meta } : {}),
  });
}

/**
 * A route that takes no parameters refuses unknown ones, as every input of this API refuses unknown
 * fields: a misspelt parameter is a 400 naming it, not silently ignored.
 */
export const NoParameters = z.strictObject({});

/** An email address as a person types it: trimmed and lowercased, then checked (sign-up, sign-in, invitations, the operator's confirmation). */
/** The longest a key may be made to last, from the moment it is made or given a new expiry: a year. */
export const MAX_KEY_DAYS = 365;
/** Whole days from now a key works for; then every route refuses it with 401. */
export const keyDays = z.number('Whole days.').int('Whole days.').min(1, 'At least a day.').max(MAX_KEY_DAYS, `At most ${MAX_KEY_DAYS} days.`);

export const emailAddress = z.string().trim().toLowerCase().pipe(z.email('Not an email address.').max(254));

const refs = (...names: ResponseHeaderName[]) => Object.fromEntries(names.map((name) => [name, headerRef(name)]));
const RATE_LIMIT: ResponseHeaderName[] = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];

const STATUS: Record<number, { description: string; example: ApiError }> = {
  400: { description: 'Validation error', example: ApiError.validation([{ field: 'url', location: 'body', message: 'Required.' }]) },
  401: { description: 'Missing, malformed, unknown or revoked credential', example: ApiError.unauthorized('Missing Authorization header. Send Authorization: Bearer sluice_live_<32 hex>.') },
  402: { description: 'Payment required', example: new ApiError('INSUFFICIENT_CREDITS', 'This call needs 1 cent but the organization has 0.4 cents available. Top up to continue.') },
  403: { description: 'Credential resolves but is not allowed here', example: ApiError.forbidden('This key is not allowed on the REST API.') },
  404: { description: 'Not found', example: new ApiError('PROVIDER_NOT_FOUND', "No source 'myspace'. Valid slugs: web, seo, linkedin.") },
  409: { description: 'Conflict: for a metered call, the balance covers it but calls in flight hold the money (retry after retryAfter seconds); or its Idempotency-Key names another call, or a first call still running or lost (retry after retryAfter seconds), or a first call that succeeded and was charged but whose answer was not kept (too large, or lost with its server: send a new key)', example: new ApiError('CONFLICT', 'The balance covers this call, but calls in flight hold the money right now. Retry in 1 s.', { retryAfter: 1 }) },
  410: { description: 'Gone', example: new ApiError('ENDPOINT_MIGRATED', 'This endpoint has moved.') },
  422: { description: 'Upstream rejected the call', example: new ApiError('PROVIDER_ERROR', 'The provider refused the request: invalid target.', { status: 422 }) },
  429: { description: 'Rate limited', example: new ApiError('RATE_LIMITED', 'This workspace has used its 60 requests for this minute. Retry in 12 s.', { retryAfter: 12 }) },
  500: { description: 'Internal error', example: ApiError.internal() },
  502: { description: 'Upstream failed', example: new ApiError('PROVIDER_ERROR', 'The provider did not answer in time.') },
  503: { description: 'Unavailable', example: new ApiError('PROVIDER_UNAVAILABLE', 'DataForSEO is not configured on this server: set DATAFORSEO_LOGIN and DATAFORSEO_PASSWORD.', { retryAfter: 60 }) },
};

/** The error envelope under each status a route can answer with; spread into every route's `responses`. */
export function errorResponses(...statuses: number[]) {
  return errorResponsesOf(statuses, { metered: false });
}

/** errorResponses of a route that counts against the workspace's window: what reached it carries RateLimit-*. */
export function meteredErrorResponses(...statuses: number[]) {
  return errorResponsesOf(statuses, { metered: true });
}

function errorResponsesOf(statuses: number[], options: { metered: boolean }) {
  const all = new Set([...statuses, 500]);
  return Object.fromEntries(
    [...all].sort().map((status) => {
      const { description, example } = STATUS[status]!;
      const names: ResponseHeaderName[] = [...(status === 429 || status === 503 ? (['Retry-After'] as const) : []), ...(options.metered && status >= 402 && status !== 403 ? RATE_LIMIT : [])];
      return [
        status,
        {
          description,
          ...(names.length > 0 ? { headers: refs(...names) } : {}),
          content: { 'application/json': { schema: ErrorEnvelope, example: { success: false, error: errorObject(example) } } },
        },
      ];
    }),
  );
}

/**
 * The optional request header of every metered route, as one parameter component each route refers to.
 * Documented here; read by the route handler and checked by the pipeline, so REST and MCP refuse a bad
 * key alike.
 */
export const IdempotencyKeyParameter = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x20-\x7e]+$/)
  .optional()
  .openapi({
    param: { name: 'Idempotency-Key', in: 'header', example: '0f8fad5b-d9cb-469f-a165-70867728950e' },
    description:
      'Makes a retry safe (e.g. after a timeout). A retry with the same key and the same operation and input within 24 hours answers the first success again (`meta.replayed: true`, header `Idempotent-Replayed: true`) and is not charged; the same key with another operation or input is 409 CONFLICT; while the first call runs, 409 CONFLICT with `retryAfter`. A failed call keeps nothing (failures are free): its retry runs afresh. Keys belong to the workspace; 1 to 255 printable ASCII characters, e.g. a UUID. Over MCP: `_meta.idempotency_key` of the tool call.',
    example: '0f8fad5b-d9cb-469f-a165-70867728950e',
  });

export const jsonContent = <T extends z.ZodType>(schema: T, description: string, options: { example?: unknown; metered?: boolean } = {}) => ({
  description,
  ...(options.metered ? { headers: refs(...RATE_LIMIT, 'Idempotent-Replayed') } : {}),
  content: { 'application/json': { schema, ...(options.example === undefined ? {} : { example: options.example }) } },
});

/** An organization's balances, as GET /v1/credits and the dashboard answer them. */
export const Credits = z
  .object({
    organizationId: z.string(),
    plan: z.enum(PLANS).nullable().openapi({ description: 'null when the organization has no plan: metered routes answer 402 SUBSCRIPTION_REQUIRED.' }),
    purchasedBalanceCents: z.number().openapi({ description: 'Top-ups; never expire.' }),
    subscriptionRemainingCents: z.number().openapi({ description: "What is left of this period's allowance; spent before purchased balance." }),
    subscriptionAllowanceCents: z.number().openapi({ description: "The plan's allowance per period." }),
    heldCents: z.number().openapi({ description: "Set aside for this organization's workspaces (calls in flight and the short leases they spend from); part of the balances above, not taken out of them." }),
    availableCents: z.number().openapi({ description: 'purchasedBalanceCents + subscriptionRemainingCents.' }),
    periodEnd: z.string().nullable().openapi({ description: 'When the subscription allowance resets (ISO 8601), null without a plan.' }),
  })
  .openapi('Credits');
