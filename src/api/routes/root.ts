import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import packageJson from '../../../package.json';
import { publicUrls, type PublicUrls } from '../../core/config';
import { success } from '../../core/envelope';
import type { AppEnv } from '../../core/context';
import { errorResponses, jsonContent, NoParameters, successEnvelope } from '../../core/schemas';

const Index = z
  .object({
    name: z.literal('Sluice API'),
    version: z.string(),
    build: z.string().openapi({ description: 'The build served, as `/health` reports it.' }),
    links: z.object({
      docs: z.string().openapi({ description: 'The API reference, for people.' }),
      openapi: z.string().openapi({ description: 'The OpenAPI document, for programs.' }),
      llmsTxt: z.string().openapi({ description: 'An index of the docs and every operation, for agents.' }),
      agentSetup: z.string().openapi({ description: 'Setup instructions an AI agent can follow.' }),
      platforms: z.string().openapi({ description: 'The catalog of sources, operations and prices (no key needed).' }),
      plans: z.string(),
      health: z.string(),
      mcp: z.string().openapi({ description: 'The MCP endpoint (Streamable HTTP; OAuth or a workspace MCP token).' }),
      signup: z.string().openapi({ description: 'Where a person signs up and makes a key.' }),
    }),
  })
  .openapi('ApiIndex');

function linksOf(urls: PublicUrls): z.infer<typeof Index>['links'] {
  return {
    docs: urls.docs,
    openapi: urls.openapi,
    llmsTxt: `${urls.base}/llms.txt`,
    agentSetup: urls.agentSetup,
    platforms: `${urls.base}/v1/platforms`,
    plans: `${urls.base}/v1/plans`,
    health: `${urls.base}/health`,
    mcp: urls.mcp,
    signup: urls.signup,
  };
}

const route = createRoute({
  method: 'get',
  path: '/',
  tags: ['Discovery'],
  summary: 'Where to start: links to the docs, the OpenAPI document, llms.txt and the catalog',
  description: 'A browser (`Accept: text/html`) is sent to `/docs` with a 302; any other client gets this index.',
  operationId: 'getIndex',
  security: [],
  request: { query: NoParameters },
  responses: {
    200: jsonContent(successEnvelope(Index), 'Links to everything a client starts from.', {
      example: success({
        name: 'Sluice API',
        version: packageJson.version,
        build: '73d9219',
        links: linksOf({
          base: 'http://127.0.0.1:8787',
          tools: 'http://127.0.0.1:8787',
          mcp: 'http://127.0.0.1:8788/mcp',
          app: 'http://127.0.0.1:8789',
          docs: 'http://127.0.0.1:8787/docs',
          openapi: 'http://127.0.0.1:8787/openapi.json',
          signup: 'http://127.0.0.1:8789/signup',
          agentSetup: 'http://127.0.0.1:8787/agent-setup/prompt.md',
        }),
      }),
    }),
    302: { description: 'A browser is sent to the API reference at `/docs`.', headers: { Location: { schema: { type: 'string' as const } } } },
    ...errorResponses(400),
  },
});

/** `GET /`: a person lands on the reference, a program on an index of where to go. */
export function registerRoot(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, (c) => {
    if (/\btext\/html\b/.test(c.req.header('accept') ?? '')) return c.redirect('/docs', 302);
    const index = { name: 'Sluice API' as const, version: packageJson.version, build: c.env.BUILD_ID ?? 'dev', links: linksOf(publicUrls(c.env)) };
    return c.json(success(index), 200);
  });
  // Browsers ask every host for one, /docs's visitors included: the dashboard serves Sluice's (an undocumented route).
  app.get('/favicon.ico', (c) => c.redirect(`${publicUrls(c.env).app}/favicon.ico`, 301));
}
