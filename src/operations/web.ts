import type { Operation } from './types';

/** Web tools: /scrape, /search, /map. */
export const webOperations: Operation[] = [];
