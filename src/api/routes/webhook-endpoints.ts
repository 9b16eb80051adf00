import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { success } from '../../core/envelope';
import { senderOf } from '../../services/webhooks/bindings';
import { Delivery } from '../../core/webhook-delivery';
import { createEndpoint, CreateWebhookEndpoint, deleteEndpoint, endpointOf, listEndpoints, rotateSecret, updateEndpoint, UpdateWebhookEndpoint, WebhookEndpoint, WebhookEndpointWithSecret } from '../../services/webhooks/endpoints';
import { sendPing } from '../../services/webhooks/ping';
import type { AppEnv } from '../../core/context';
import { errorResponses, jsonContent, NoParameters, successEnvelope } from '../../core/schemas';
import { requireManagingKey } from '../../services/managing-keys';

const TAGS = ['Webhooks'];
const idParam = z.object({
  id: z.string().regex(/^we_[0-9a-f]{24}$/, 'Expected a webhook endpoint id (we_ and 24 hex characters).').openapi({ param: { name: 'id', in: 'path' }, example: 'we_4f1c2a9b7d3e4f6a8b0c1d2e' }),
});


const DeliveriesQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(25).openapi({ description: 'Newest deliveries to show, 1-200.', example: 25 }),
});

const ENDPOINT_EXAMPLE = {
  id: 'we_4f1c2a9b7d3e4f6a8b0c1d2e',
  workspaceId: 'ws_0a1b2c3d4e5f6a7b8c9d0e1f',
  url: 'https://hooks.example.com/sluice',
  events: ['credits.low', 'key.created'] as ('credits.low' | 'key.created')[],
  creditsLowThresholdCents: 500,
  createdAt: '2026-11-22T09:58:01.000Z',
  updatedAt: '2026-11-22T09:58:01.000Z',
  previousSecretExpiresAt: null as string | null,
};
const DELIVERY_EXAMPLE = {
  id: 'evt_9f8e7d6c5b4a39281706f5e4',
  type: 'ping',
  state: 'delivered' as const,
  reason: null,
  createdAt: '2026-11-22T10:00:00.000Z',
  nextAttemptAt: null,
  payload: '{"type":"ping","timestamp":"2026-11-22T10:00:00.000Z","data":{"endpointId":"we_4f1c2a9b7d3e4f6a8b0c1d2e","workspaceId":"ws_0a1b2c3d4e5f6a7b8c9d0e1f","message":"A test event from Sluice."}}',
  attempts: [{ attempt: 1, at: '2026-11-22T10:00:00.000Z', status: 204, error: null, durationMs: 182 }],
};
const example = <T,>(value: T) => ({ example: success(value) });
const bodyExample = <T extends z.ZodType>(schema: T, value: z.input<T>) => ({ content: { 'application/json': { schema, example: value } }, required: true });

const routes = {
  list: createRoute({
    method: 'get',
    path: '/v1/webhook-endpoints',
    tags: TAGS,
    summary: "The workspace's webhook endpoints",
    operationId: 'listWebhookEndpoints',
    request: { query: NoParameters },
    responses: { 200: jsonContent(successEnvelope(z.object({ endpoints: z.array(WebhookEndpoint) })), 'Endpoints, newest first; never a secret.', example({ endpoints: [ENDPOINT_EXAMPLE] })), ...errorResponses(400, 401, 403) },
  }),
  create: createRoute({
    method: 'post',
    path: '/v1/webhook-endpoints',
    tags: TAGS,
    summary: 'Create a webhook endpoint; answers its signing secret, this once',
    description: 'The URL must be a public https address (plain http only for a receiver the operator allowed on their own network): private, loopback, link-local and cloud-metadata addresses are refused with 400 VALIDATION_ERROR, and so is a host name that does not resolve (503 PROVIDER_UNAVAILABLE when the DNS resolver itself cannot be reached). Needs a key made by an owner or admin of the organization (403 otherwise).',
    operationId: 'createWebhookEndpoint',
    request: { body: bodyExample(CreateWebhookEndpoint, { url: ENDPOINT_EXAMPLE.url, events: ENDPOINT_EXAMPLE.events, creditsLowThresholdCents: 500 }) },
    responses: { 201: jsonContent(successEnvelope(WebhookEndpointWithSecret), 'The endpoint and its secret.', example({ ...ENDPOINT_EXAMPLE, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYo=' })), ...errorResponses(400, 401, 403, 409, 503) },
  }),
  get: createRoute({
    method: 'get',
    path: '/v1/webhook-endpoints/{id}',
    tags: TAGS,
    summary: 'One webhook endpoint',
    operationId: 'getWebhookEndpoint',
    request: { params: idParam, query: NoParameters },
    responses: { 200: jsonContent(successEnvelope(WebhookEndpoint), 'The endpoint.', example(ENDPOINT_EXAMPLE)), ...errorResponses(400, 401, 403, 404) },
  }),
  update: createRoute({
    method: 'patch',
    path: '/v1/webhook-endpoints/{id}',
    tags: TAGS,
    summary: "Change an endpoint's URL, events or credits.low threshold",
    description: 'Needs a key made by an owner or admin of the organization (403 otherwise).',
    operationId: 'updateWebhookEndpoint',
    request: { params: idParam, body: bodyExample(UpdateWebhookEndpoint, { events: ['credits.low', 'credits.exhausted'], creditsLowThresholdCents: 200 }) },
    responses: { 200: jsonContent(successEnvelope(WebhookEndpoint), 'The endpoint as it is now.', example({ ...ENDPOINT_EXAMPLE, events: ['credits.low', 'credits.exhausted'], creditsLowThresholdCents: 200 })), ...errorResponses(400, 401, 403, 404, 503) },
  }),
  remove: createRoute({
    method: 'delete',
    path: '/v1/webhook-endpoints/{id}',
    tags: TAGS,
    summary: 'Delete an endpoint; deliveries waiting for a retry are dropped',
    description: 'Needs a key made by an owner or admin of the organization (403 otherwise).',
    operationId: 'deleteWebhookEndpoint',
    request: { params: idParam },
    responses: { 200: jsonContent(successEnvelope(z.object({ id: z.string(), deleted: z.literal(true) })), 'Deleted.', example({ id: ENDPOINT_EXAMPLE.id, deleted: true as const })), ...errorResponses(400, 401, 403, 404) },
  }),
  deliveries: createRoute({
    method: 'get',
    path: '/v1/webhook-endpoints/{id}/deliveries',
    tags: TAGS,
    summary: 'Deliveries to an endpoint, newest first, with every attempt',
    operationId: 'listWebhookDeliveries',
    request: { params: idParam, query: DeliveriesQuery },
    responses: { 200: jsonContent(successEnvelope(z.object({ deliveries: z.array(Delivery) })), 'Deliveries and their attempts.', example({ deliveries: [DELIVERY_EXAMPLE] })), ...errorResponses(400, 401, 403, 404) },
  }),
  test: createRoute({
    method: 'post',
    path: '/v1/webhook-endpoints/{id}/test',
    tags: TAGS,
    summary: 'Send a ping event now and answer how its first attempt went',
    description: 'The ping counts against the monthly webhook-event cap: past it this answers 402 PLAN_LIMIT_REACHED and sends nothing. Needs a key made by an owner or admin of the organization (403 otherwise).',
    operationId: 'testWebhookEndpoint',
    request: { params: idParam },
    responses: { 200: jsonContent(successEnvelope(Delivery), 'The ping delivery with its first attempt (retried like any event if it failed).', example(DELIVERY_EXAMPLE)), ...errorResponses(400, 401, 402, 403, 404) },
  }),
  rotateSecret: createRoute({
    method: 'post',
    path: '/v1/webhook-endpoints/{id}/rotate-secret',
    tags: TAGS,
    summary: 'Rotate the signing secret: a new one, answered this once',
    description: 'The replaced secret keeps signing deliveries beside the new one for 24 hours (two space-separated signatures in webhook-signature, either of which a Standard Webhooks verifier accepts), so receivers move over without missing one; rotating again drops it at once, so a client that lost this answer should read previousSecretExpiresAt before retrying: a retry ends the secret its receiver still uses. Pending retries are kept. 409 when another rotation landed meanwhile. Needs a key made by an owner or admin of the organization (403 otherwise).',
    operationId: 'rotateWebhookSecret',
    request: { params: idParam },
    responses: { 200: jsonContent(successEnvelope(WebhookEndpointWithSecret), 'The endpoint and its new secret.', example({ ...ENDPOINT_EXAMPLE, previousSecretExpiresAt: '2026-12-02T10:00:00.000Z', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYo=' })), ...errorResponses(400, 401, 403, 404, 409) },
  }),
};

/** `/v1/webhook-endpoints/*`: API key, not rate limited (spec "Request rate"); each endpoint belongs to the key's workspace. */
export function registerWebhookEndpoints(app: OpenAPIHono<AppEnv>) {
  app.openapi(routes.list, async (c) => c.json(success({ endpoints: await listEndpoints(c.env.DB, c.get('principal').workspaceId) }), 200));

  app.openapi(routes.create, async (c) => {
    await requireManagingKey(c.env.DB, c.get('principal'), 'add webhook endpoints');
    return c.json(success(await createEndpoint(c.env, c.get('principal').workspaceId, c.req.valid('json'))), 201);
  });

  app.openapi(routes.get, async (c) => c.json(success(await endpointOf(c.env.DB, c.get('principal').workspaceId, c.req.valid('param').id)), 200));

  app.openapi(routes.update, async (c) => {
    await requireManagingKey(c.env.DB, c.get('principal'), 'change webhook endpoints');
    return c.json(success(await updateEndpoint(c.env, c.get('principal').workspaceId, c.req.valid('param').id, c.req.valid('json'))), 200);
  });

  app.openapi(routes.remove, async (c) => {
    await requireManagingKey(c.env.DB, c.get('principal'), 'remove webhook endpoints');
    const { id } = c.req.valid('param');
    await deleteEndpoint(c.env, c.get('principal').workspaceId, id);
    return c.json(success({ id, deleted: true as const }), 200);
  });

  app.openapi(routes.deliveries, async (c) => {
    const endpoint = await endpointOf(c.env.DB, c.get('principal').workspaceId, c.req.valid('param').id);
    return c.json(success({ deliveries: await senderOf(c.env, endpoint.id).deliveries(c.req.valid('query').limit) }), 200);
  });

  app.openapi(routes.test, async (c) => {
    const principal = c.get('principal');
    await requireManagingKey(c.env.DB, principal, 'send test events');
    const endpoint = await endpointOf(c.env.DB, principal.workspaceId, c.req.valid('param').id);
    return c.json(success(await sendPing(c.env, endpoint, principal.organizationId)), 200);
  });

  app.openapi(routes.rotateSecret, async (c) => {
    await requireManagingKey(c.env.DB, c.get('principal'), 'rotate signing secrets');
    return c.json(success(await rotateSecret(c.env, c.get('principal').workspaceId, c.req.valid('param').id)), 200);
  });
}
