import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import packageJson from '../../../package.json';
import { success } from '../../core/envelope';
import type { AppEnv } from '../../core/context';
import { errorResponses, jsonContent, NoParameters, successEnvelope } from '../../core/schemas';

const Health = z
  .object({
    status: z.literal('ok'),
    version: z.string().openapi({ example: '1.0.0' }),
    build: z.string().openapi({ description: 'The build served (commit), or "dev" locally.' }),
  })
  .openapi('Health');

const route = createRoute({
  method: 'get',
  path: '/health',
  tags: ['Discovery'],
  summary: 'Liveness, the version and the build served',
  operationId: 'getHealth',
  security: [],
  request: { query: NoParameters },
  responses: { 200: jsonContent(successEnvelope(Health), 'The service is up.', { example: success({ status: 'ok', version: packageJson.version, build: '73d9219' }) }), ...errorResponses(400) },
});

export function registerHealth(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, (c) => c.json(success({ status: 'ok' as const, version: packageJson.version, build: c.env.BUILD_ID ?? 'dev' }), 200));
}
