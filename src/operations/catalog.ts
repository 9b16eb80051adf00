import { OPERATIONS } from './index';
import { PLATFORMS, type PlatformSlug } from './platforms';
import { mcpToolName, type Operation } from '../core/operation';

function entryOf(operation: Operation) {
  return {
    name: operation.name,
    summary: operation.summary,
    method: operation.method,
    path: operation.paths[0],
    paths: operation.paths,
    mcpTool: mcpToolName(operation),
    price: operation.price.display,
  };
}

/** The catalog of `/v1/platforms`, derived once from the registry. */
export const CATALOG = (Object.keys(PLATFORMS) as PlatformSlug[])
  .map((slug) => ({
    slug,
    ...PLATFORMS[slug],
    operations: OPERATIONS.filter((operation) => operation.platform === slug).map(entryOf),
  }))
  .filter((platform) => platform.operations.length > 0);

export type CatalogEntry = (typeof CATALOG)[number];
