import { z } from '@hono/zod-openapi';
import { parse as parseSelector, type Selector } from 'css-what';

/**
 * The inputs of the web tools (/scrape, /search, /map) as the spec defines them: what the operations
 * validate and what each provider of them (Firecrawl, the built-in one) reads.
 */
const httpUrl = z.url({ protocol: /^https?$/, error: 'An absolute http(s) URL, such as https://example.com/page.' }).openapi({ example: 'https://example.com' });

const countryCode = z.string().regex(/^[A-Za-z]{2}$/, 'An ISO 3166-1 alpha-2 country code, such as US.');

const location = z
  .strictObject({
    country: countryCode.optional().openapi({ description: 'The country to fetch the page from, where the provider has a proxy there; absent, the provider chooses (Firecrawl: US).', example: 'US' }),
    languages: z.array(z.string().min(1)).min(1).optional().openapi({ description: 'Preferred languages in order, as in Accept-Language.', example: ['en-US'] }),
  })
  .openapi({ description: 'Where the page is fetched from: a proxy in that country, with its languages and time zone.' });

/**
 * A union refuses a bad entry as a whole, at the entry's own path. Where the entry got past its type (an object
 * of a known kind with one bad field), that field's complaint says more than the list of what entries may be.
 */
function entryError(expected: string) {
  return (issue: z.core.$ZodRawIssue): string | undefined => {
    if (issue.code !== 'invalid_union') return undefined;
    const inner = (issue.errors as z.core.$ZodIssue[][]).flat().find((found) => found.path.length > 0 && found.path[0] !== 'type');
    if (!inner) return expected;
    const field = inner.path.map((part, index) => (typeof part === 'number' ? `[${part}]` : `${index === 0 ? '' : '.'}${String(part)}`)).join('');
    return `${field}: ${inner.message.replace(/^Invalid input: /, '')}.`;
  };
}

export const FORMAT_PRESETS = ['markdown', 'summary', 'html', 'rawHtml', 'links', 'images'] as const;

/** A json format's schema, as JSON: real extraction schemas are a few kilobytes. */
const MAX_SCHEMA_CHARS = 16_384;

const formatObject = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('json'),
    // An extraction answers one object: a schema of anything else would have the model run and its answer refused.
    schema: z
      .record(z.string(), z.unknown())
      .refine((schema) => schema.type === undefined || schema.type === 'object', { message: 'The schema of a json format describes an object: its type is "object".', path: ['type'] })
      // The schema goes to the model with the page, as the prompt does, so it is bounded like the prompt: tokens the
      // extraction's price does not grow with.
      .refine((schema) => JSON.stringify(schema).length <= MAX_SCHEMA_CHARS, { message: `The schema is at most ${MAX_SCHEMA_CHARS.toLocaleString('en-US')} characters of JSON.` })
      .optional()
      .openapi({ description: `JSON Schema of the object to extract (type "object"; at most ${MAX_SCHEMA_CHARS.toLocaleString('en-US')} characters of JSON).` }),
    prompt: z.string().min(1).max(10_000).optional().openapi({ description: 'What to extract, in words (at most 10,000 characters).' }),
  }),
  z.strictObject({
    type: z.literal('screenshot'),
    fullPage: z.boolean().optional(),
    quality: z.number().int().min(1).max(100).optional(),
  }),
  z.strictObject({
    type: z.literal('changeTracking'),
    modes: z.array(z.enum(['git-diff', 'json'])).min(1).optional(),
  }),
]);

const format = z.union([z.enum(FORMAT_PRESETS), formatObject], {
  error: entryError(`Each format is one of ${FORMAT_PRESETS.join(', ')}, or an object whose type is json, screenshot or changeTracking.`),
});

const formats = z.array(format).openapi({
  description: 'String presets, or objects: {type: "json", schema?, prompt?} (LLM extraction, costs more), {type: "screenshot", fullPage?, quality?}, {type: "changeTracking", modes?} (compares the page Markdown with that of the previous scrape; Markdown is computed for it even when not asked for).',
  example: ['markdown', 'links'],
});

export type Format = z.infer<typeof format>;

const selector = z.string().min(1).max(1000);

/**
 * Firecrawl's page actions, performed in order once the page has loaded. Every provider accepts these shapes;
 * the built-in one performs wait, click, write, press, scroll, screenshot and scrape, and refuses the rest
 * (400 naming the action).
 */
const action = z.discriminatedUnion('type', [
  z
    .strictObject({
      type: z.literal('wait'),
      milliseconds: z.number().int().min(1).max(60_000).optional(),
      selector: selector.optional().openapi({ description: 'Wait until an element matches, instead of a fixed time.' }),
    })
    .refine((wait) => (wait.milliseconds === undefined) !== (wait.selector === undefined), { message: 'A wait takes milliseconds or selector, one of them.', path: ['milliseconds'] }),
  z.strictObject({ type: z.literal('click'), selector, all: z.boolean().optional().openapi({ description: 'Click every match, not only the first.' }) }),
  z.strictObject({ type: z.literal('write'), text: z.string().max(10_000).openapi({ description: 'Typed into the focused element (click it first).' }) }),
  z.strictObject({ type: z.literal('press'), key: z.string().min(1).max(32).openapi({ example: 'Enter' }) }),
  z.strictObject({ type: z.literal('scroll'), direction: z.enum(['up', 'down']).optional(), selector: selector.optional() }),
  z.strictObject({ type: z.literal('screenshot'), fullPage: z.boolean().optional(), quality: z.number().int().min(1).max(100).optional() }),
  z.strictObject({ type: z.literal('scrape') }),
  z.strictObject({ type: z.literal('executeJavascript'), script: z.string().min(1).max(100_000) }),
  z.strictObject({ type: z.literal('pdf'), format: z.string().min(1).optional(), landscape: z.boolean().optional(), scale: z.number().positive().optional() }),
]);

/** Cross-field rules run even when another field is wrong too, so one refusal names every offending field. */
const evenBesideOtherFaults = { when: (payload: { value: unknown }) => typeof payload.value === 'object' && payload.value !== null };

/** Longest wait a search or a map may ask for; the spec gives only a minimum, and no worker call usefully waits longer. */
const MAX_TIMEOUT_MS = 300_000;

/**
 * The most pages of a PDF a scrape reads when its pdf parser names no maxPages. Each page past the first is
 * billed as a page (Firecrawl bills it so), and a call's quote holds the most it can cost, so a PDF's pages
 * are bounded by default: a scrape of an unknown URL holds ten pages' worth, not ten thousand.
 */
export const DEFAULT_PDF_PAGES = 10;

type Parsers = readonly ('pdf' | { type: 'pdf'; maxPages?: number | undefined })[] | undefined;

/** The most pages of a PDF a scrape with these parsers reads, or null when they leave PDF parsing out (the file as base64). */
export function pdfPagesOf(parsers: Parsers): number | null {
  if (parsers === undefined) return DEFAULT_PDF_PAGES;
  const pdf = parsers.find((parser) => parser === 'pdf' || parser.type === 'pdf');
  if (pdf === undefined) return null;
  return (typeof pdf === 'object' ? pdf.maxPages : undefined) ?? DEFAULT_PDF_PAGES;
}

/** What a scrape says of a PDF it read only to its bound, either provider; null when it read every page. */
export function unreadPagesWarning(pagesRead: number, totalPages: number, parsers: Parsers): string | null {
  if (pagesRead >= totalPages) return null;
  const named = parsers?.some((parser) => typeof parser === 'object' && parser.maxPages !== undefined);
  const cap = named ? 'maxPages' : `maxPages, ${DEFAULT_PDF_PAGES} unless parsers names more ([{type: "pdf", maxPages}])`;
  return `Only the first ${pagesRead} of ${totalPages} pages were read (${cap}).`;
}

/**
 * Selectors one list may name, characters one selector may have, and alternatives with a descendant or `~`
 * combinator one list may have in all (each costs up to the page's elements times its depth: a list of 560 of
 * them, 20 selectors of 28 alternatives, took 15 s on a page within the page bounds). Real lists name a few tags
 * or classes.
 */
export const SELECTOR_BOUNDS = { perList: 20, chars: 200, searchingPerList: 5 } as const;

/**
 * A selector read once: why the page cannot be matched against it at a bounded cost, or, when it can, how many
 * of its alternatives search ancestors or earlier siblings (a list's bound counts them). The DOM's
 * matcher (css-select, under linkedom) tries every ancestor for a descendant combinator (a space) and every
 * earlier sibling for `~`, and again for each such combinator to the left of it: a selector with n of them whose
 * leftmost part never matches costs depth^n per element. On a page 60 deep, `x div div div div span` held the
 * isolate 8 seconds, in one step nothing can interrupt. One such combinator a selector costs at most the page's
 * depth per element; `>` and `+` look at one element each and are not limited. A selector nested in `:not()`,
 * `:is()` or `:where()` runs for every element, so it takes no such combinator at all; `:has()`, which searches
 * below every element, is refused.
 */
function readSelector(selector: string): { problem: string } | { searching: number } {
  if (selector.length > SELECTOR_BOUNDS.chars) return { problem: `is ${selector.length} characters long; at most ${SELECTOR_BOUNDS.chars}` };
  let parsed: Selector[][];
  try {
    parsed = parseSelector(selector);
  } catch (error) {
    return { problem: `is not a CSS selector (${error instanceof Error ? error.message : 'unreadable'})` };
  }
  const searching = (tokens: Selector[]) => tokens.filter((token) => token.type === 'descendant' || token.type === 'sibling').length;
  const check = (alternatives: Selector[][], nested: boolean): string | undefined => {
    for (const tokens of alternatives) {
      if (searching(tokens) > (nested ? 0 : 1)) {
        return nested
          ? 'has a descendant (space) or ~ combinator inside :not(), :is() or :where(), which is not supported'
          : 'has more than one descendant (space) or ~ combinator: name the element closer to what you want, or use > for a direct child';
      }
      for (const token of tokens) {
        if (token.type === 'parent' || token.type === 'column-combinator') return 'uses a combinator the page cannot be matched with';
        if (token.type !== 'pseudo') continue;
        if (token.name === 'has') return 'uses :has(), which is not supported';
        if (Array.isArray(token.data)) {
          const problem = check(token.data, true);
          if (problem) return problem;
        }
      }
    }
    return undefined;
  };
  const problem = check(parsed, false);
  return problem ? { problem } : { searching: parsed.filter((tokens) => searching(tokens) > 0).length };
}

/** A list of CSS selectors the page is matched against: bounded in count, length and matching cost. */
function selectorList(description: string) {
  return z
    .array(z.string().min(1))
    .max(SELECTOR_BOUNDS.perList, `At most ${SELECTOR_BOUNDS.perList} selectors.`)
    .superRefine((selectors, context) => {
      let searching = 0;
      for (const [index, selector] of selectors.entries()) {
        const read = readSelector(selector);
        if ('problem' in read) context.addIssue({ code: 'custom', path: [index], message: `"${selector.slice(0, 80)}" ${read.problem}.` });
        else searching += read.searching;
      }
      if (searching > SELECTOR_BOUNDS.searchingPerList) {
        context.addIssue({
          code: 'custom',
          path: [],
          message: `${searching} selectors (counting each alternative of a comma list) have a descendant (space) or ~ combinator; at most ${SELECTOR_BOUNDS.searchingPerList} a list. Name the elements themselves (a tag, a class, an id) or use > for a direct child.`,
        });
      }
    })
    .openapi({
      description: `${description} At most ${SELECTOR_BOUNDS.perList} selectors of ${SELECTOR_BOUNDS.chars} characters, each with at most one descendant (space) or ~ combinator, ${SELECTOR_BOUNDS.searchingPerList} such in a list, and no :has().`,
    });
}

export const scrapeInput = z
  .strictObject({
    url: httpUrl.openapi({ description: 'The publicly reachable page to fetch.' }),
    formats: formats.default(['markdown']),
    onlyMainContent: z.boolean().default(true).openapi({ description: 'Drop headers, navigation and footers.' }),
    includeTags: selectorList('HTML tags or CSS selectors to keep.').optional(),
    excludeTags: selectorList('HTML tags or CSS selectors to drop.').optional(),
    maxAge: z.number().int().min(0).default(172_800_000).openapi({ description: 'Milliseconds of acceptable cache age; 0 always fetches afresh.' }),
    waitFor: z.number().int().min(0).default(0).openapi({ description: 'Milliseconds to wait for the page before reading it.' }),
    mobile: z.boolean().default(false),
    timeout: z.number().int().min(1000).max(MAX_TIMEOUT_MS).default(60_000).openapi({ description: 'Milliseconds before the scrape gives up (not charged).' }),
    parsers: z
      .array(
        z.union(
          [
            z.literal('pdf'),
            z.strictObject({ type: z.literal('pdf'), mode: z.enum(['fast', 'auto', 'ocr']).optional(), maxPages: z.number().int().min(1).max(10_000).optional() }),
          ],
          { error: entryError('Each parser is "pdf" or an object {type: "pdf", mode?, maxPages?}.') },
        ),
      )
      .optional()
      .openapi({
        description: `PDF parsing: ["pdf"] (the default), [{type: "pdf", mode?: fast|auto|ocr, maxPages?}], or [] for the file as base64. A PDF is read to maxPages (${DEFAULT_PDF_PAGES} unless given), each page past the first billed as a page.`,
      }),
    proxy: z
      .enum(['basic', 'enhanced', 'auto'])
      .default('auto')
      .openapi({ description: 'auto escalates to the enhanced proxy only when the basic one is refused, and costs as enhanced when it does; enhanced forces heavy anti-bot handling and costs more.' }),
    location: location.optional(),
    actions: z
      .array(action)
      .max(50)
      .optional()
      .openapi({ description: "Firecrawl's page actions, in order, before the page is read: wait, click, write, press, scroll, screenshot, scrape (and executeJavascript, pdf where the provider runs them). Captures are answered at result[0].actions." }),
    blockAds: z.boolean().default(true).openapi({ description: 'Refuse requests to ad and tracker hosts while rendering.' }),
  });

const SOURCE_TYPES = ['web', 'news', 'images'] as const;
const source = z.union([z.enum(SOURCE_TYPES), z.strictObject({ type: z.enum(SOURCE_TYPES) })], {
  error: entryError('Each source is web, news or images, or an object {type} naming one of them.'),
});

const hostname = z
  .string()
  .max(253)
  .regex(/^([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/, 'A hostname without protocol or path, such as example.com.');

export const searchInput = z
  .strictObject({
    query: z.string().trim().min(1).max(500).openapi({ description: 'What to search for; operators such as site: work.' }),
    limit: z.number().int().min(1).max(100).default(10).openapi({ description: 'Results per source.' }),
    sources: z.array(source).min(1).default(['web']),
    categories: z.array(z.enum(['github', 'research', 'pdf'])).optional(),
    tbs: z.string().min(1).optional().openapi({ description: 'Time filter, for example qdr:d for the past day.' }),
    location: z.string().min(1).optional().openapi({ description: 'Geo-target text, for example "San Francisco,California,United States".' }),
    country: countryCode.default('US'),
    includeDomains: z.array(hostname).min(1).optional().openapi({ description: 'Only results from these hostnames; not with excludeDomains.' }),
    excludeDomains: z.array(hostname).min(1).optional().openapi({ description: 'No results from these hostnames; not with includeDomains.' }),
    timeout: z.number().int().min(1000).max(MAX_TIMEOUT_MS).default(60_000),
    scrapeOptions: z
      .strictObject({ formats: formats.default(['markdown']), onlyMainContent: z.boolean().default(true) })
      .optional()
      .openapi({ description: "When present, every result is also scraped, and billed as a scraped page (a PDF result's first page; the basic proxy, so a site that refuses it answers its refusal page)." }),
  })
  .superRefine((input, context) => {
    if (input.includeDomains && input.excludeDomains) {
      context.addIssue({ code: 'custom', path: ['excludeDomains'], message: 'includeDomains and excludeDomains are mutually exclusive; send one of them.' });
    }
  }, evenBesideOtherFaults);

export const mapInput = z.strictObject({
  url: httpUrl.openapi({ description: 'Base URL of the site.' }),
  search: z.string().min(1).optional().openapi({ description: 'Orders the URLs by relevance to this query.' }),
  sitemap: z.enum(['skip', 'include', 'only']).default('include'),
  includeSubdomains: z.boolean().default(true),
  ignoreQueryParameters: z.boolean().default(true),
  limit: z.number().int().min(1).max(100_000).default(5000),
  timeout: z.number().int().min(1000).max(MAX_TIMEOUT_MS).optional(),
  location: location.optional(),
});

export type ScrapeInput = z.infer<typeof scrapeInput>;
export type SearchInput = z.infer<typeof searchInput>;
export type MapInput = z.infer<typeof mapInput>;
