import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Env } from 'hono';

type Document = ReturnType<OpenAPIHono['getOpenAPIDocument']>;
type DocumentConfig = Parameters<OpenAPIHono['getOpenAPIDocument']>[0];

/**
 * What every OpenAPI document Sluice publishes shares (the api worker's /openapi.json, the dashboard's
 * /api/openapi.json): the response headers their routes refer to, the answers and request bodies operations
 * share declared once, the license, and 3.0's rule that `nullable` needs a type. Both are held to
 * `redocly lint --extends recommended-strict`.
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
 * headers its routes refer to (and only those) under components.headers, and what operations share declared once.
 */
export function publishedDocument<E extends Env>(app: OpenAPIHono<E>, config: DocumentConfig, appUrl: string): Document {
  const document = withoutUntypedNullable(
    app.getOpenAPIDocument({ ...config, info: { ...config.info, license: { name: 'Proprietary', url: `${appUrl}/terms` } } }),
  );
  const text = JSON.stringify(document);
  const headers = Object.entries(RESPONSE_HEADERS).filter(([name]) => text.includes(JSON.stringify(headerRef(name as ResponseHeaderName))));
  if (headers.length > 0) document.components = { ...document.components, headers: Object.fromEntries(headers) };
  declareShared(document);
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

/** The word a shared success answer's name ends in, by status. */
const SUCCESS_RESPONSE_WORDS: Record<string, string> = { 200: 'Ok', 201: 'Created', 202: 'Accepted', 204: 'NoContent' };

/**
 * Moves each answer and request body that two or more operations have alike to components (responses,
 * requestBodies) and refers to it from each. Every route declares its errors from one table (schemas.ts), and each
 * root tool is documented again at its path through a connection with the same body and answer, so the api
 * worker's 148 operations repeated 17 error answers over half of its document (1.2 MB, 0.56 once they were declared
 * once) and 45 bodies and success answers over another seventh (0.48 MB once those were too). Only what one
 * operation has stays where it is. An error answer is named after its status (`RateLimitedMetered` for the 429
 * that carries RateLimit-*); a body or a success answer after the operation with the shortest id that has it (the
 * root tool rather than its path through a connection), `Ok`/`Created`/`Accepted` ending a success's name.
 * Another of the same name is numbered.
 */
function declareShared(document: Document): void {
  const operations = Object.values(document.paths ?? {}).flatMap((item: PathItem) => OPERATION_METHODS.flatMap((method) => (item[method] ? [item[method]] : [])));
  const answers = operations.flatMap((operation) =>
    Object.entries(operation.responses ?? {}).flatMap(([status, response]) =>
      '$ref' in response ? [] : [{ holder: operation.responses as Record<string, unknown>, at: status, node: response, name: () => answerName(status, response, operation.operationId) }],
    ),
  );
  const bodies = operations.flatMap((operation) =>
    operation.requestBody && !('$ref' in operation.requestBody)
      ? [{ holder: operation as unknown as Record<string, unknown>, at: 'requestBody', node: operation.requestBody, name: () => pascalCase(operation.operationId ?? 'Body') }]
      : [],
  );
  const responses = declaredOnce(answers, 'responses');
  const requestBodies = declaredOnce(bodies, 'requestBodies');
  if (Object.keys(responses).length > 0) document.components = { ...document.components, responses: { ...document.components?.responses, ...responses } };
  if (Object.keys(requestBodies).length > 0) document.components = { ...document.components, requestBodies: { ...document.components?.requestBodies, ...requestBodies } };
}

interface Shareable<T> {
  holder: Record<string, unknown>;
  at: string;
  node: T;
  /** The name it would be declared under, were it the first of its kind to be. */
  name(): string;
}

/** Each node two or more places have alike, named once (by the place with the shortest name) and referred to from each. */
function declaredOnce<T>(places: Shareable<T>[], section: 'responses' | 'requestBodies'): Record<string, T> {
  const alike = new Map<string, Shareable<T>[]>();
  for (const place of places) {
    const text = JSON.stringify(place.node);
    alike.set(text, [...(alike.get(text) ?? []), place]);
  }
  const declared: Record<string, T> = {};
  for (const sharing of alike.values()) {
    const [first] = sharing;
    if (!first || sharing.length < 2) continue;
    const base = sharing.map((place) => place.name()).reduce((shortest, name) => (name.length < shortest.length ? name : shortest));
    let name = base;
    for (let index = 2; name in declared; index++) name = `${base}${index}`;
    declared[name] = first.node;
    for (const place of sharing) place.holder[place.at] = { $ref: `#/components/${section}/${name}` };
  }
  return declared;
}

function answerName(status: string, response: ResponseObject, operationId: string | undefined): string {
  if (Number(status) >= 400) return `${ERROR_RESPONSE_NAMES[status] ?? `Status${status}`}${response.headers && 'RateLimit-Limit' in response.headers ? 'Metered' : ''}`;
  return `${pascalCase(operationId ?? 'Operation')}${SUCCESS_RESPONSE_WORDS[status] ?? status}`;
}

/** `data_web_scrape` and `listWebhookEndpoints` as `DataWebScrape` and `ListWebhookEndpoints`. */
function pascalCase(id: string): string {
  return id
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
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
