import type { Operation } from './types';

/** SEO tools: /serp, keyword, competitor, backlink, domain, technology and AI-visibility endpoints. */
export const seoOperations: Operation[] = [];
