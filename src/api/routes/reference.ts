import type { OpenAPIHono } from '@hono/zod-openapi';
import packageJson from '../../../package.json';
import { publicUrls, type PublicUrls } from '../../core/config';
import type { AppEnv } from '../context';
import { HEADERS } from '../schemas';

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
  for (const [name, header] of Object.entries(HEADERS)) app.openAPIRegistry.registerComponent('headers', name, header);

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
  const document = withoutUntypedNullable(
    app.getOpenAPIDocument({
      openapi: '3.0.0',
      info: {
        title: 'Sluice API',
        version: '1.0.0',
        description: `Unified data API: web, SEO, model answers, social-platform and lead data behind one workspace key. Version ${packageJson.version}, build ${build} (as \`/health\` reports it).`,
        license: { name: 'Proprietary', url: `${urls.app}/terms` },
      },
      servers: [{ url: urls.base, description: 'REST API' }],
      security: [{ bearerAuth: [] }],
      tags: [
        { name: 'Discovery', description: 'Public routes: liveness, catalog, setup.' },
        { name: 'Account', description: 'Credits and usage of the calling workspace.' },
        { name: 'Data', description: 'Metered data operations.' },
        { name: 'Databases', description: "The workspace's own SQLite databases: keep what an agent collected between runs." },
        { name: 'Runtime', description: "For deployed agents, with the agent's own key: the operations of /v1/data, metered alike, and the runtime hours they use." },
      ],
    }),
  );
  // Root-path tool endpoints are shown on TOOLS_BASE_URL (the same worker answers on both URLs).
  if (urls.tools !== urls.base) {
    for (const [path, item] of Object.entries(document.paths ?? {})) {
      if (!path.startsWith('/v1/') && item.post?.tags?.includes('Data')) item.servers = [{ url: urls.tools, description: 'Tool endpoints' }];
    }
  }
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
