import { z } from '@hono/zod-openapi';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

/** The complete set of error codes of the spec, each with the status it is answered with by default. */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  UNAUTHORIZED: 401,
  INSUFFICIENT_CREDITS: 402,
  PLAN_LIMIT_REACHED: 402,
  SEAT_LIMIT_REACHED: 402,
  DEPLOY_GATE_FAILED: 402,
  SUBSCRIPTION_REQUIRED: 402,
  INVITATION_EMAIL_MISMATCH: 403,
  NOT_FOUND: 404,
  PROVIDER_NOT_FOUND: 404,
  ENDPOINT_NOT_FOUND: 404,
  ENDPOINT_MIGRATED: 410,
  CONFLICT: 409,
  TRIAL_ALREADY_USED: 409,
  RATE_LIMITED: 429,
  PROVIDER_ERROR: 502,
  PROVIDER_UNAVAILABLE: 503,
  UPSTREAM_CREDITS_EXHAUSTED: 503,
  INTERNAL_ERROR: 500,
} as const satisfies Record<string, ContentfulStatusCode>;

export type ErrorCode = keyof typeof ERROR_STATUS;
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

/** The spec's three locations; a request header (only Idempotency-Key is validated) is reported as `query`, see idempotency.ts. */
export const ErrorLocation = z.enum(['query', 'path', 'body']);
export type ErrorLocation = z.infer<typeof ErrorLocation>;

/** One offending field of a refused request. */
export const ErrorDetail = z.object({ field: z.string(), location: ErrorLocation, message: z.string() }).openapi('ErrorDetail', {
  example: { field: 'url', location: 'body', message: 'Required.' },
});
export type ErrorDetail = z.infer<typeof ErrorDetail>;

interface ApiErrorOptions {
  status?: ContentfulStatusCode;
  details?: ErrorDetail[];
  /** Seconds; also sent as the `Retry-After` header. */
  retryAfter?: number;
  /** Extra response headers, e.g. `Link` for a migrated endpoint or `Allow` for a wrong method. */
  headers?: Record<string, string>;
  /** Extra members of the error object, e.g. `how_to_get_access` on a 401. */
  extra?: Record<string, unknown>;
  /** What the vendor said, for a layer that reads it otherwise (a connection's call: services/connections.ts); never sent. */
  upstream?: UpstreamFailure;
  /** A retry refused because its first call succeeded and was charged but its answer is gone, for a layer that counts it (a data job's item: services/jobs/run.ts); never sent. */
  answerGone?: AnswerGone;
}

/** What an idempotency key's first call was charged, and its answer's size (0: lost with its process; more: too large to keep). */
export interface AnswerGone {
  costUnits: number;
  answerBytes: number;
}

/** A vendor failure that means something else when the credentials are the workspace's own. */
export interface UpstreamFailure {
  kind: 'credentials_refused' | 'throttled' | 'out_of_credits';
  /** The vendor's HTTP status, when it sent one. */
  status?: number;
}

/** Seconds a client is told to wait after a 502 that names no wait of its own. */
export const UPSTREAM_RETRY_AFTER_S = 5;

/** An error that knows its own code and status; the envelope turns it into a response in one place. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: ContentfulStatusCode;
  readonly details?: ErrorDetail[];
  readonly retryAfter?: number;
  /** Mutable so a layer above (the pipeline's rate-limit headers) can add to it. */
  readonly headers: Record<string, string>;
  readonly extra: Record<string, unknown>;
  readonly upstream?: UpstreamFailure;
  readonly answerGone?: AnswerGone;

  constructor(code: ErrorCode, message: string, options: ApiErrorOptions = {}) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = options.status ?? ERROR_STATUS[code];
    this.details = options.details;
    // A 502 is an upstream that failed this time: waiting is the right move, so it always says how long.
    const retryAfter = options.retryAfter ?? (this.status === 502 ? UPSTREAM_RETRY_AFTER_S : undefined);
    this.retryAfter = retryAfter === undefined ? undefined : Math.max(1, Math.ceil(retryAfter));
    this.headers = options.headers ?? {};
    this.extra = options.extra ?? {};
    if (options.upstream) this.upstream = options.upstream;
    if (options.answerGone) this.answerGone = options.answerGone;
  }

  static validation(details: ErrorDetail[], message = describeDetails(details)): ApiError {
    return new ApiError('VALIDATION_ERROR', message, { details });
  }

  static unauthorized(message: string, extra?: Record<string, unknown>): ApiError {
    return new ApiError('UNAUTHORIZED', message, { extra });
  }

  static forbidden(message: string): ApiError {
    return new ApiError('UNAUTHORIZED', message, { status: 403 });
  }

  static notFound(message = 'No such route.'): ApiError {
    return new ApiError('NOT_FOUND', message);
  }

  static conflict(message: string): ApiError {
    return new ApiError('CONFLICT', message);
  }

  static internal(): ApiError {
    return new ApiError('INTERNAL_ERROR', 'An unexpected error occurred. Retry once with backoff; if it persists, contact support with the x-request-id.');
  }
}

/**
 * The message of a refusal, readable on its own: one offending field names it and says what is wrong; a
 * problem with the whole body or query is its own sentence; several fields are listed where they are.
 */
function describeDetails(details: ErrorDetail[]): string {
  if (details.length === 0) return 'The request is invalid.';
  const [only] = details;
  if (details.length === 1 && only) return only.field === only.location ? only.message : `Invalid ${only.location} field ${only.field}: ${only.message}`;
  const fields = details.map((detail) => (detail.field === detail.location ? `the ${detail.location}` : `${detail.location} field ${detail.field}`));
  return `Invalid request: check ${fields.join(', ')} (see details).`;
}
