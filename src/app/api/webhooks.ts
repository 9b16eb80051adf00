import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { errorResponses, jsonContent, successEnvelope } from '../../core/schemas';
import { success } from '../../core/envelope';
import { senderOf } from '../../services/webhooks/bindings';
import { Delivery } from '../../core/webhook-delivery';
import { createEndpoint, CreateWebhookEndpoint, deleteEndpoint, endpointOf, listEndpoints, rotateSecret, WebhookEndpoint, WebhookEndpointWithSecret } from '../../services/webhooks/endpoints';
import { sendPing } from '../../services/webhooks/ping';
import type { DashboardEnv } from '../context';
import { requireManager, workspaceAccess } from '../members';
import { jsonBody, workspaceIdParam } from './schemas';

const TAGS = ['Webhooks'];
const endpointIdParam = workspaceIdParam.extend({
  endpointId: z.string().regex(/^we_[0-9a-f]{24}$/, 'Expected a webhook endpoint id (we_ and 24 hex characters).').openapi({ param: { name: 'endpointId', in: 'path' } }),
});

const routes = {
  list: createRoute({
    method: 'get',
    path: '/api/workspaces/{workspaceId}/webhook-endpoints',
    tags: TAGS,
    summary: "The workspace's webhook endpoints",
    operationId: 'listWebhookEndpoints',
    request: { params: workspaceIdParam },
    responses: { 200: jsonContent(successEnvelope(z.object({ endpoints: z.array(WebhookEndpoint) })), 'Endpoints, newest first.'), ...errorResponses(400, 401, 404) },
  }),
  create: createRoute({
    method: 'post',
    path: '/api/workspaces/{workspaceId}/webhook-endpoints',
    tags: TAGS,
    summary: 'Create a webhook endpoint; answers its signing secret, this once (owners and admins)',
    operationId: 'createWebhookEndpoint',
    request: { params: workspaceIdParam, body: jsonBody(CreateWebhookEndpoint) },
    responses: { 201: jsonContent(successEnvelope(WebhookEndpointWithSecret), 'The endpoint and its secret.'), ...errorResponses(400, 401, 403, 404, 409, 503) },
  }),
  remove: createRoute({
    method: 'delete',
    path: '/api/workspaces/{workspaceId}/webhook-endpoints/{endpointId}',
    tags: TAGS,
    summary: 'Delete a webhook endpoint (owners and admins)',
    operationId: 'deleteWebhookEndpoint',
    request: { params: endpointIdParam },
    responses: { 200: jsonContent(successEnvelope(z.object({ id: z.string(), deleted: z.literal(true) })), 'Deleted.'), ...errorResponses(400, 401, 403, 404) },
  }),
  deliveries: createRoute({
    method: 'get',
    path: '/api/workspaces/{workspaceId}/webhook-endpoints/{endpointId}/deliveries',
    tags: TAGS,
    summary: 'Deliveries to an endpoint, newest first, with every attempt',
    operationId: 'listWebhookDeliveries',
    request: { params: endpointIdParam },
    responses: { 200: jsonContent(successEnvelope(z.object({ deliveries: z.array(Delivery) })), 'Deliveries.'), ...errorResponses(400, 401, 404) },
  }),
  test: createRoute({
    method: 'post',
    path: '/api/workspaces/{workspaceId}/webhook-endpoints/{endpointId}/test',
    tags: TAGS,
    summary: 'Send a ping now (owners and admins); 402 PLAN_LIMIT_REACHED past the monthly webhook-event cap',
    operationId: 'testWebhookEndpoint',
    request: { params: endpointIdParam },
    responses: { 200: jsonContent(successEnvelope(Delivery), 'The ping and its first attempt.'), ...errorResponses(400, 401, 402, 403, 404) },
  }),
  rotateSecret: createRoute({
    method: 'post',
    path: '/api/workspaces/{workspaceId}/webhook-endpoints/{endpointId}/rotate-secret',
    tags: TAGS,
    summary: 'A new signing secret, shown this once; the replaced one signs beside it for a day (owners and admins)',
    operationId: 'rotateWebhookSecret',
    request: { params: endpointIdParam },
    responses: { 200: jsonContent(successEnvelope(WebhookEndpointWithSecret), 'The endpoint and its new secret.'), ...errorResponses(400, 401, 403, 404, 409) },
  }),
};

/** The same endpoints as /v1/webhook-endpoints, for the dashboard's Webhooks page: members see them, owners and admins change them. */
export function registerWebhooks(app: OpenAPIHono<DashboardEnv>) {
  const access = (c: { env: DashboardEnv['Bindings']; get(key: 'session'): DashboardEnv['Variables']['session'] }, workspaceId: string) =>
    workspaceAccess(c.env.DB, c.get('session').user.id, workspaceId);

  app.openapi(routes.list, async (c) => {
    const { workspace } = await access(c, c.req.valid('param').workspaceId);
    return c.json(success({ endpoints: await listEndpoints(c.env.DB, workspace.id) }), 200);
  });

  app.openapi(routes.create, async (c) => {
    const workspace = await access(c, c.req.valid('param').workspaceId);
    requireManager(workspace, 'add webhook endpoints');
    return c.json(success(await createEndpoint(c.env, workspace.workspace.id, c.req.valid('json'))), 201);
  });

  app.openapi(routes.remove, async (c) => {
    const { workspaceId, endpointId } = c.req.valid('param');
    const workspace = await access(c, workspaceId);
    await endpointOf(c.env.DB, workspace.workspace.id, endpointId);
    requireManager(workspace, 'remove webhook endpoints');
    await deleteEndpoint(c.env, workspace.workspace.id, endpointId);
    return c.json(success({ id: endpointId, deleted: true as const }), 200);
  });

  app.openapi(routes.deliveries, async (c) => {
    const { workspaceId, endpointId } = c.req.valid('param');
    const { workspace } = await access(c, workspaceId);
    const endpoint = await endpointOf(c.env.DB, workspace.id, endpointId);
    return c.json(success({ deliveries: await senderOf(c.env, endpoint.id).deliveries() }), 200);
  });

  app.openapi(routes.test, async (c) => {
    const { workspaceId, endpointId } = c.req.valid('param');
    const workspace = await access(c, workspaceId);
    const endpoint = await endpointOf(c.env.DB, workspace.workspace.id, endpointId);
    requireManager(workspace, 'send test events');
    return c.json(success(await sendPing(c.env, endpoint, workspace.organization.id)), 200);
  });

  app.openapi(routes.rotateSecret, async (c) => {
    const { workspaceId, endpointId } = c.req.valid('param');
    const workspace = await access(c, workspaceId);
    await endpointOf(c.env.DB, workspace.workspace.id, endpointId);
    requireManager(workspace, 'rotate signing secrets');
    return c.json(success(await rotateSecret(c.env, workspace.workspace.id, endpointId)), 200);
  });
}
