import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Env } from 'hono';

type Document = ReturnType<OpenAPIHono['getOpenAPIDocument']>;
type DocumentConfig = Parameters<OpenAPIHono['getOpenAPIDocument']>[0];

/**
 * What every OpenAPI document Sluice publishes shares (the api worker's /openapi.json, the dashboard's
 * /api/openapi.json): the response headers and error answers their routes refer to, the license, and 3.0's
 * rule that `nullable` needs a type. Both are held to `redocly lint --extends recommended-strict`.
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
  const responses = sharedErrorResponses(document);
  if (Object.keys(responses).length > 0) document.components = { ...document.components, responses: { ...document.components?.responses, ...responses } };
  return document;
}

/** The name an error answer shared by operations is declared under, by status; `Metered` when it carries RateLimit-*. */
const ERROR_RESPONSE_NAMES: Record<string, string> = {
  400: 'ValidationError',
  401: 'Unauthorized',
  402: 'PaymentRequired',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  410: 'Gone',
  422: 'UpstreamRejected',
  429: 'RateLimited',
  500: 'InternalError',
  502: 'UpstreamFailed',
  503: 'Unavailable',
};

/**
 * Moves each error answer (status 400 and above) that two or more operations give alike to components.responses
 * and refers to it from each. Every route declares its errors from one table (schemas.ts), so the api worker's
 * 148 operations repeated 17 answers over half of its document: 1.2 MB, now 0.56 (the dashboard's 246 KB, now
 * 131; the typed client's sdk/schema.ts 2.3 MB, now 1.0). Answers only one operation gives stay where they are.
 * Names follow the status, in the order the paths come; another answer of the same name is numbered.
 */
function sharedErrorResponses(document: Document): Record<string, ResponseObject> {
  const answers = Object.values(document.paths ?? {}).flatMap((item: PathItem) =>
    OPERATION_METHODS.flatMap((method) => {
      const responses = item[method]?.responses ?? {};
      return Object.entries(responses).flatMap(([status, response]) =>
        Number(status) >= 400 && !('$ref' in response) ? [{ responses, status, response, text: JSON.stringify(response) }] : [],
      );
    }),
  );
  const uses = new Map<string, number>();
  for (const { text } of answers) uses.set(text, (uses.get(text) ?? 0) + 1);
  const names = new Map<string, string>();
  const declared: Record<string, ResponseObject> = {};
  for (const { responses, status, response, text } of answers) {
    if (uses.get(text)! < 2) continue;
    let name = names.get(text);
    if (name === undefined) {
      const base = `${ERROR_RESPONSE_NAMES[status] ?? `Status${status}`}${response.headers && 'RateLimit-Limit' in response.headers ? 'Metered' : ''}`;
      name = base;
      for (let index = 2; name in declared; index++) name = `${base}${index}`;
      names.set(text, name);
      declared[name] = response;
    }
    responses[status] = { $ref: `#/components/responses/${name}` };
  }
  return declared;
}

const OPERATION_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
type PathItem = NonNullable<Document['paths']>[string];
type ResponseObject = Exclude<NonNullable<NonNullable<Document['components']>['responses']>[string], { $ref: string }>;

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
