import type { OpenAPIHono } from '@hono/zod-openapi';
import packageJson from '../../../package.json';
import { publicUrls, type PublicUrls } from '../../core/config';
import { publishedDocument } from '../../core/openapi-document';
import type { AppEnv } from '../../core/context';

type Document = ReturnType<OpenAPIHono<AppEnv>['getOpenAPIDocument']>;

/**
 * `/openapi.json`, generated from the route definitions once per isolate and set of public URLs (an
 * installation has one; the tests try several).
 */
export function registerReference(app: OpenAPIHono<AppEnv>) {
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'A workspace API key: `Authorization: Bearer sluice_live_<32 hex>`. No other header is accepted.',
  });

  const documents = new Map<string, string>();
  app.get('/openapi.json', (c) => {
    const urls = publicUrls(c.env);
    const key = JSON.stringify([urls.base, urls.tools, urls.app]);
    let text = documents.get(key);
    if (text === undefined) {
      text = JSON.stringify(documentOf(app, urls, c.env.BUILD_ID ?? 'dev'));
      documents.set(key, text);
    }
    return c.body(text, 200, { 'content-type': 'application/json; charset=utf-8' });
  });
}

function documentOf(app: OpenAPIHono<AppEnv>, urls: PublicUrls, build: string): Document {
  const document = publishedDocument(
    app,
    {
      openapi: '3.0.0',
      info: {
        title: 'Sluice API',
        version: '1.0.0',
        description: `Unified data API: web, SEO, model answers, social-platform and lead data behind one workspace key. Version ${packageJson.version}, build ${build} (as \`/health\` reports it).`,
      },
      servers: [{ url: urls.base, description: 'REST API' }],
      security: [{ bearerAuth: [] }],
      tags: [
        { name: 'Discovery', description: 'Public routes: liveness, catalog, setup.' },
        { name: 'Account', description: 'Credits and usage of the calling workspace.' },
        { name: 'Data', description: 'Metered data operations.' },
        { name: 'Databases', description: "The workspace's own SQLite databases: keep what an agent collected between runs." },
        { name: 'Data jobs', description: 'The agnt source: one operation over up to 10,000 inputs, run in the background, each item billed only if it succeeds.' },
        { name: 'Runtime', description: "For deployed agents, with the agent's own key: the operations of /v1/data, metered alike, and the runtime hours they use." },
      ],
    },
    urls.app,
  );
  // Root-path tool endpoints are shown on TOOLS_BASE_URL (the same worker answers on both URLs).
  if (urls.tools !== urls.base) {
    for (const [path, item] of Object.entries(document.paths ?? {})) {
      if (!path.startsWith('/v1/') && item.post?.tags?.includes('Data')) item.servers = [{ url: urls.tools, description: 'Tool endpoints' }];
    }
  }
  return document;
}
