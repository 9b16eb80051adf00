import type { z } from 'zod';
import { ApiError, type ErrorDetail, type ErrorLocation } from './errors';

const LOCATION_OF_TARGET: Record<string, ErrorLocation> = {
  json: 'body',
  form: 'body',
  query: 'query',
  param: 'path',
};

export function locationOfTarget(target: string): ErrorLocation {
  return LOCATION_OF_TARGET[target] ?? 'body';
}

const UNKNOWN_FIELD = 'Unknown field.';

/** One detail per offending field: issues on the same field are joined into one message. */
export function detailsFromZod(error: z.ZodError, location: ErrorLocation): ErrorDetail[] {
  const byField = new Map<string, string[]>();
  const add = (field: string, message: string) => {
    const messages = byField.get(field) ?? [];
    if (!messages.includes(message)) messages.push(message);
    byField.set(field, messages);
  };
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      // A schema may say why a field is refused here (Perplexity's models always search, say).
      const message = /^Unrecognized keys?\b/.test(issue.message) ? UNKNOWN_FIELD : issue.message;
      for (const key of issue.keys) add(fieldName([...issue.path, key], location), message);
      continue;
    }
    add(fieldName(issue.path, location), humanMessage(issue));
  }
  return [...byField].map(([field, messages]) => ({ field, location, message: messages.join(' ') }));
}

export function validationErrorFromZod(error: z.ZodError, location: ErrorLocation): ApiError {
  return ApiError.validation(detailsFromZod(error, location));
}

const SENT_MORE_THAN_ONCE = 'Sent more than once: send it once.';

/** Every parameter name of a URL's query, in order, repeats included. */
function queryNames(url: string): string[] {
  const start = url.indexOf('?');
  return start < 0 ? [] : [...new URLSearchParams(url.slice(start + 1)).keys()];
}

/** The parameters a query names more than once. No parameter of this API takes a list by repetition. */
function repeatedQueryParameters(url: string): Set<string> {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const name of queryNames(url)) (seen.has(name) ? repeated : seen).add(name);
  return repeated;
}

/**
 * Refuses a query that names a parameter more than once, before it is read as one value: a data GET would
 * otherwise call (and charge) with whichever came first.
 */
export function refuseRepeatedQueryParameters(url: string, schema: z.ZodType, query: unknown): void {
  const repeated = repeatedQueryParameters(url);
  if (repeated.size > 0) throw withTheRest([...repeated].map((field) => ({ field, location: 'query', message: SENT_MORE_THAN_ONCE })), schema, query, 'query');
}

/**
 * Refuses any query on an operation that takes its input as a JSON body: `POST /scrape?formats=html` would
 * otherwise run without what the caller thought they asked for.
 */
export async function refuseQueryOfBodyOperation(url: string, schema: z.ZodType, body: () => Promise<unknown>): Promise<void> {
  const names = new Set(queryNames(url));
  if (names.size === 0) return;
  const early: ErrorDetail[] = [...names].map((field) => ({ field, location: 'query', message: 'Not read: this operation takes its input in the JSON body.' }));
  // A body that is not JSON adds nothing: the query alone is refused, and the body's own refusal comes once it is gone.
  const read = await body().then(
    (value) => ({ value }),
    () => null,
  );
  throw read ? withTheRest(early, schema, read.value, 'body') : ApiError.validation(early);
}

/**
 * An early check's refusal with what the operation's schema refuses of the rest of the input, so one answer names
 * every offending field (the spec's "one entry per offending field") rather than one fix and resend at a time.
 */
function withTheRest(early: ErrorDetail[], schema: z.ZodType, input: unknown, location: ErrorLocation): ApiError {
  const named = new Set(early.map((detail) => `${detail.location} ${detail.field}`));
  const parsed = schema.safeParse(input);
  const rest = parsed.success ? [] : detailsFromZod(parsed.error, location).filter((detail) => !named.has(`${detail.location} ${detail.field}`));
  return ApiError.validation([...early, ...rest]);
}

/**
 * A route's query that its schema refused. A parameter sent twice reached the schema as a list, which it
 * would call the wrong type ("Expected a number"); it is named as sent twice instead, unless it is unknown.
 */
export function queryValidationError(error: z.ZodError, url: string): ApiError {
  const repeated = repeatedQueryParameters(url);
  return ApiError.validation(detailsFromZod(error, 'query').map((detail) => (repeated.has(detail.field) && detail.message !== UNKNOWN_FIELD ? { ...detail, message: SENT_MORE_THAN_ONCE } : detail)));
}

function fieldName(path: PropertyKey[], location: ErrorLocation): string {
  if (path.length === 0) return location;
  return path
    .map((part, index) => (typeof part === 'number' ? `[${part}]` : `${index === 0 ? '' : '.'}${String(part)}`))
    .join('');
}

function humanMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type' && /received undefined$/.test(issue.message)) return 'Required.';
  // A query value that is not a number reaches a coerced number field as NaN, which the sender never wrote.
  if (issue.code === 'invalid_type' && /received NaN$/.test(issue.message)) return 'Expected a number.';
  // zod's "Invalid input: expected object, received array" reads as a sentence of its own.
  const message = issue.message.replace(/^Invalid input: /, '').replace(/^expected /, 'Expected ');
  return /[.!?]$/.test(message) ? message : `${message}.`;
}
