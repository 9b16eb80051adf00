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

/**
 * Sluice's own source, `agnt`: data jobs (one operation over up to 10,000 inputs, in the background). Its
 * routes are not registry operations (each item is billed as the operation it runs), so it lists none; the
 * description names them.
 */
export const AGNT_SOURCE = {
  slug: 'agnt',
  name: 'Data jobs',
  category: 'Sluice',
  description:
    "Run one operation over 1 to 10,000 inputs in the background: POST /v1/data/agnt/jobs {operation: '<slug>/<operation>', inputs}, then GET /v1/data/agnt/jobs/{id} for progress, " +
    "GET /v1/data/agnt/jobs/{id}/results (JSON, NDJSON or CSV) and POST /v1/data/agnt/jobs/{id}/cancel. Submitting is free; each item is billed at its operation's price, only if it succeeds.",
  operations: [] as CatalogEntry['operations'],
};

/** Every source GET /v1/platforms lists: the registry's and Sluice's own. */
export const SOURCES: (CatalogEntry | typeof AGNT_SOURCE)[] = [...CATALOG, AGNT_SOURCE];
