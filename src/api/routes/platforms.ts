import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { success } from '../../core/envelope';
import { ApiError } from '../../core/errors';
import { CATALOG, SOURCES } from '../../operations/catalog';
import { PriceDisplay } from '../../core/operation';
import type { AppEnv } from '../../core/context';
import { errorResponses, jsonContent, NoParameters, successEnvelope } from '../../core/schemas';

const Platform = z
  .object({
    slug: z.string().openapi({ example: 'linkedin' }),
    name: z.string(),
    category: z.string(),
    description: z.string(),
    operations: z.array(
      z.object({
        name: z.string(),
        summary: z.string(),
        method: z.enum(['GET', 'POST']),
        path: z.string(),
        paths: z.array(z.string()),
        mcpTool: z.string(),
        price: PriceDisplay,
      }),
    ),
  })
  .openapi('Platform');

const listRoute = createRoute({
  method: 'get',
  path: '/v1/platforms',
  tags: ['Discovery'],
  summary: 'Catalog of sources and their per-call prices',
  operationId: 'listPlatforms',
  security: [],
  request: { query: NoParameters },
  responses: {
    200: jsonContent(successEnvelope(z.object({ platforms: z.array(Platform) })), 'Every source and its operations.', { example: success({ platforms: SOURCES }) }),
    ...errorResponses(400),
  },
});

const getRoute = createRoute({
  method: 'get',
  path: '/v1/platforms/{slug}',
  tags: ['Discovery'],
  summary: "One source's catalog entry",
  operationId: 'getPlatform',
  security: [],
  request: { params: z.object({ slug: z.string().openapi({ param: { name: 'slug', in: 'path' }, example: 'linkedin' }) }), query: NoParameters },
  responses: { 200: jsonContent(successEnvelope(Platform), 'The source and its operations.', { example: success(CATALOG.find((platform) => platform.slug === 'linkedin') ?? CATALOG[0]) }), ...errorResponses(400, 404) },
});

export function registerPlatforms(app: OpenAPIHono<AppEnv>) {
  app.openapi(listRoute, (c) => c.json(success({ platforms: SOURCES }), 200));
  app.openapi(getRoute, (c) => {
    const { slug } = c.req.valid('param');
    const platform = SOURCES.find((entry) => entry.slug === slug);
    if (!platform) {
      const valid = SOURCES.map((entry) => entry.slug).join(', ');
      throw new ApiError('PROVIDER_NOT_FOUND', `No source '${slug}'. Valid slugs: ${valid}.`);
    }
    return c.json(success(platform), 200);
  });
}
