import { answerOperations } from './answers';
import { leadOperations } from './leads';
import { seoOperations } from './seo';
import { socialOperations } from './social';
import type { Operation } from '../core/operation';
import { webOperations } from './web';

/** The operation registry: REST routes, OpenAPI, MCP tools and the catalog are all generated from it. */
export const OPERATIONS: readonly Operation[] = [...webOperations, ...seoOperations, ...answerOperations, ...socialOperations, ...leadOperations];
