import { socialOperations } from './social';
import type { Operation } from './types';

/** The operation registry: REST routes, OpenAPI, MCP tools and the catalog are all generated from it. */
export const OPERATIONS: readonly Operation[] = [...socialOperations];
