import { z } from '@hono/zod-openapi';

/**
 * The spec's "common row-query parameters" of the SEO row endpoints, and the `filters` and `order_by`
 * grammars, declared once for every endpoint that takes them.
 */

export const FILTER_OPERATORS = ['=', '<>', '<', '<=', '>', '>=', 'in', 'not_in', 'like', 'not_like'] as const;

const fieldPath = z.string().regex(/^[a-z0-9_]+(\.[a-z0-9_]+)*$/, 'A field path such as keyword_info.search_volume.');

const scalar = z.union([z.string(), z.number(), z.boolean()]);

const triple = z
  .tuple([fieldPath, z.enum(FILTER_OPERATORS), z.union([scalar, z.array(z.union([z.string(), z.number()])).min(1)])])
  .superRefine(([, operator, value], context) => {
    const isList = Array.isArray(value);
    if ((operator === 'in' || operator === 'not_in') && !isList) {
      context.addIssue({ code: 'custom', path: [2], message: `${operator} takes an array of values.` });
    } else if ((operator === 'like' || operator === 'not_like') && typeof value !== 'string') {
      context.addIssue({ code: 'custom', path: [2], message: `${operator} takes a string; % is the wildcard.` });
    } else if (isList && operator !== 'in' && operator !== 'not_in') {
      context.addIssue({ code: 'custom', path: [2], message: `${operator} takes a single value; use in or not_in for a list.` });
    }
  });

/** An empty list is no filter, as its absence is (the spec's default is none); the provider sends neither upstream. */
export const filters = z
  .array(z.union([triple, z.enum(['and', 'or'])]))
  .max(15, 'At most 8 conditions (15 entries with "and" / "or" between them), the upstream\'s limit.')
  .superRefine((items, context) => {
    items.forEach((item, index) => {
      const wantsTriple = index % 2 === 0;
      if (wantsTriple !== Array.isArray(item)) {
        context.addIssue({
          code: 'custom',
          path: [index],
          message: wantsTriple ? 'Expected a [field, operator, value] triple here.' : 'Expected "and" or "or" between two triples.',
        });
      }
    });
    if (items.length > 0 && items.length % 2 === 0) context.addIssue({ code: 'custom', path: [items.length - 1], message: 'filters must end with a triple.' });
  })
  .openapi({
    description:
      'Up to 8 [field, operator, value] triples joined by "and" / "or", e.g. [["keyword_info.search_volume", ">", 1000], "and", ["keyword", "like", "%shoes%"]]. Operators: =, <>, <, <=, >, >=, in, not_in (array values), like, not_like (string values, % wildcard).',
    example: [['keyword_info.search_volume', '>', 1000], 'and', ['keyword', 'like', '%shoes%']],
  });

/** An empty list is the endpoint's own order, as its absence is. */
export const orderBy = z
  .array(z.string().regex(/^[a-z0-9_]+(\.[a-z0-9_]+)*,(asc|desc)$/, 'Each entry is <field>,<asc|desc>.'))
  .max(3, "At most 3 sort rules, the upstream's limit.")
  .openapi({ description: 'Up to 3 sort rules, each <field>,<asc|desc>.', example: ['keyword_info.search_volume,desc'] });

export const locationCode = z.number().int().min(1).default(2840).openapi({ description: 'Geo target code; 2840 is the United States.' });
/** Either case, as the country codes are; sent upstream (and cached) in lower case. */
export const languageCode = z
  .string()
  .regex(/^[A-Za-z]{2}$/, 'A two-letter language code such as en.')
  .toLowerCase()
  .default('en')
  .openapi({ description: 'Two-letter language code.' });
export const limit = z.number().int().min(1).max(1000).default(100).openapi({ description: 'Rows to return, 1-1000; cost scales with rows returned.' });
export const offset = z.number().int().min(0).optional().openapi({ description: 'Rows to skip.' });

/** The full common set: location, language, limit, offset, filters, order_by. */
export const rowQuery = {
  location_code: locationCode,
  language_code: languageCode,
  limit,
  offset,
  filters: filters.optional(),
  order_by: orderBy.optional(),
};

/** Rows of a DataForSEO-shaped payload: `result[0].items`. */
export function rowsOf(data: unknown): number {
  const items = (data as { result?: { items?: unknown[] | null }[] | null } | null)?.result?.[0]?.items;
  return Array.isArray(items) ? items.length : 0;
}
