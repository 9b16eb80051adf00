import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Env } from 'hono';

type Document = ReturnType<OpenAPIHono['getOpenAPIDocument']>;
type DocumentConfig = Parameters<OpenAPIHono['getOpenAPIDocument']>[0];

/**
 * What every OpenAPI document Sluice publishes shares (the api worker's /openapi.json, the dashboard's
 * /api/openapi.json): the response headers their routes refer to, the license, and 3.0's rule that
 * `nullable` needs a type. Both are held to `redocly lint --extends recommended-strict`.
 */

/** Response headers, declared once under components.headers and referred to by the responses. */
export const RESPONSE_HEADERS = {
  'Retry-After': { description: 'Seconds to wait before retrying; the same value as error.retryAfter.', schema: { type: 'integer', minimum: 1 } },
  'RateLimit-Limit': { description: "The workspace's requests-per-minute ceiling; sent once a call reached the rate window.", schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests left in the current minute window; sent once a call reached it.', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the window resets; sent once a call reached it.', schema: { type: 'integer' } },
  'Idempotent-Replayed': {
    description: 'Sent, as `true`, when this answer replays an earlier call with the same Idempotency-Key: uncharged, not counted in the window (so no RateLimit-* headers).',
    schema: { type: 'string', enum: ['true'] as string[] },
  },
} as const;
export type ResponseHeaderName = keyof typeof RESPONSE_HEADERS;

export const headerRef = (name: ResponseHeaderName) => ({ $ref: `#/components/headers/${name}` });

/**
 * The document of an app's routes as published: licensed under the terms at APP_URL, with the response
 * headers its routes refer to (and only those) under components.headers.
 */
export function publishedDocument<E extends Env>(app: OpenAPIHono<E>, config: DocumentConfig, appUrl: string): Document {
  const document = withoutUntypedNullable(
    app.getOpenAPIDocument({ ...config, info: { ...config.info, license: { name: 'Proprietary', url: `${appUrl}/terms` } } }),
  );
  const text = JSON.stringify(document);
  const headers = Object.entries(RESPONSE_HEADERS).filter(([name]) => text.includes(JSON.stringify(headerRef(name as ResponseHeaderName))));
  if (headers.length > 0) document.components = { ...document.components, headers: Object.fromEntries(headers) };
  return document;
}

/**
 * The generator renders "any value" (z.unknown(), z.any(), open records) as `{nullable: true}` with no
 * type, which OpenAPI 3.0 leaves meaningless and linters reject. Dropping that lone `nullable` leaves
 * `{}`, which is exactly "any value, null included" in 3.0.
 */
function withoutUntypedNullable<T>(node: T): T {
  if (Array.isArray(node)) return node.map(withoutUntypedNullable) as T;
  if (!node || typeof node !== 'object') return node;
  // A null member of a union ({nullable: true} alone in anyOf) means, in 3.0 (where nullable needs a
  // sibling type), that each typed member is nullable.
  const members = (node as { anyOf?: unknown[] }).anyOf;
  if (Array.isArray(members) && members.some(isBareNullable) && members.every((member) => isBareNullable(member) || (member as { type?: unknown }).type !== undefined)) {
    const typedMembers = members.filter((member) => !isBareNullable(member)).map((member) => ({ ...(member as object), nullable: true }));
    return withoutUntypedNullable({ ...node, anyOf: typedMembers });
  }
  const typed = ['type', '$ref', 'allOf', 'anyOf', 'oneOf'].some((name) => name in node);
  const entries = Object.entries(node).filter(([name]) => typed || name !== 'nullable');
  return Object.fromEntries(entries.map(([name, value]) => [name, withoutUntypedNullable(value)])) as T;
}

function isBareNullable(node: unknown): boolean {
  return !!node && typeof node === 'object' && Object.keys(node).length === 1 && (node as { nullable?: unknown }).nullable === true;
}
