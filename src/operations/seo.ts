import { z } from '@hono/zod-openapi';
import { unitsFromCents } from '../core/money';
import { auditWithBuiltin } from '../providers/builtin-web';
import { dataforseoLive, escapeKeyword } from '../providers/dataforseo';
import { perRequest, perRow } from './pricing';
import { filters, languageCode, limit, locationCode, offset, orderBy, rowQuery, rowsOf as rowsReturned } from './row-query';
import {
  AiVisibilityPayload,
  BacklinkGapPayload,
  BacklinksSummaryPayload,
  CompetitorsPayload,
  DomainOverviewPayload,
  KeywordGapPayload,
  KeywordIdeasPayload,
  KeywordOverviewPayload,
  OnPageAuditPayload,
  RankedKeywordsPayload,
  ReferringDomainsPayload,
  SerpPayload,
  TechSearchPayload,
} from './seo-payloads';
import { defineOperation, type Operation, type Price } from '../core/operation';

/** SEO tools: /serp, keyword, competitor, backlink, domain, technology and AI-visibility endpoints. */

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;

// ---------------------------------------------------------------- inputs

// An internationalized domain in its ASCII (xn--) form, whose top-level domain may be one too (xn--p1ai, .рф).
const DOMAIN = '(?:[A-Za-z0-9-]+\\.)+(?:[A-Za-z]{2,}|xn--[A-Za-z0-9-]+)';
// No regex flags: they are lost in the OpenAPI document, so clients would validate differently.
const bareDomain = z
  .string()
  .trim()
  .min(1)
  .max(253)
  .regex(new RegExp(`^${DOMAIN}$`), 'Expected a bare domain such as example.com (an internationalized one in its xn-- form), without protocol or path.')
  .openapi({ example: 'example.com' });

const domainOrPage = z
  .string()
  .trim()
  .min(1)
  .max(2048)
  .regex(
    new RegExp(`^(?:https?://${DOMAIN}(?::[0-9]+)?(?:[/?#]\\S*)?|${DOMAIN})$`),
    'Expected a bare domain such as example.com, or a full page URL starting with http:// or https://.',
  )
  .openapi({ example: 'example.com' });

const keyword = z.string().trim().min(1);

/** An object-level refinement: the issue names the field it is about. */
function issue(context: z.RefinementCtx, path: (string | number)[], message: string): void {
  context.addIssue({ code: 'custom', path, message });
}

const SerpInput = z.strictObject({
  keyword: keyword
    .max(700)
    .openapi({ description: 'The query, up to 700 characters. Search operators (site:, inurl:, filetype:) work and cost about 5x.', example: 'best running shoes' }),
  location_code: locationCode.openapi({ description: 'Geo target code; common: 2840 US, 2826 UK, 2124 CA, 2036 AU, 2276 DE, 2250 FR, 2724 ES, 2356 IN, 2076 BR.' }),
  language_code: languageCode,
  device: z.enum(['desktop', 'mobile']).default('desktop'),
  depth: z
    .number()
    .int()
    .min(10)
    .max(700)
    .multipleOf(10)
    .default(10)
    // The generator drops multipleOf; stated here so clients see the step.
    .openapi({ description: 'Results to fetch, 10-700 in steps of 10; every 10 bills as one results page.', multipleOf: 10 }),
});

const KeywordIdeasInput = z.strictObject({
  keywords: z.array(keyword).min(1).max(200).openapi({ description: '1-200 seed keywords.', example: ['running shoes'] }),
  ...rowQuery,
});

const KeywordOverviewInput = z.strictObject({
  keywords: z.array(keyword).min(1).max(700).openapi({ description: '1-700 exact keywords; cost scales with the count.', example: ['running shoes', 'trail shoes'] }),
  location_code: locationCode,
  language_code: languageCode,
});

const KeywordGapInput = z.strictObject({
  target1: bareDomain.openapi({ description: 'Your domain, without protocol.' }),
  target2: bareDomain.openapi({ description: 'The competitor domain, without protocol.' }),
  ...rowQuery,
  limit: limit.openapi({ description: 'Maximum intersecting keywords, 1-1000; cost scales with rows returned.' }),
});

const RankedKeywordsInput = z.strictObject({
  target: domainOrPage.openapi({ description: 'A domain without protocol, or a full page URL.' }),
  ...rowQuery,
});

const CompetitorsInput = z.strictObject({
  target: bareDomain,
  location_code: locationCode,
  language_code: languageCode,
  limit,
  filters: filters.optional(),
  order_by: orderBy.optional(),
});

const ReferringDomainsInput = z.strictObject({
  target: domainOrPage.openapi({ description: 'A domain or subdomain without protocol, or a full page URL.' }),
  limit,
  offset,
  filters: filters.optional(),
  order_by: orderBy.optional(),
  exclude_internal_backlinks: z.boolean().default(true),
});

const targetOrderRule = /^([0-9]+)\.[a-z0-9_]+(?:\.[a-z0-9_]+)*,(?:asc|desc)$/;

const BacklinkGapInput = z
  .strictObject({
    targets: z.array(bareDomain).min(1).max(20).openapi({ description: '1-20 competitor domains.', example: ['competitor-a.com', 'competitor-b.com'] }),
    exclude_targets: z.array(bareDomain).max(10).optional().openapi({ description: 'Up to 10 domains that the referring sites must not already link to (yours).' }),
    limit,
    offset,
    filters: filters.optional(),
    order_by: z
      .array(z.string().regex(targetOrderRule, 'Each entry is <target index>.<field>,<asc|desc>, e.g. 1.rank,desc.'))
      .max(3, "At most 3 sort rules, the upstream's limit.")
      .optional()
      .openapi({ description: 'Up to 3 sort rules, each <target index>.<field>,<asc|desc>; the index is 1-based within targets. Default: 1.rank,desc.', example: ['1.rank,desc'] }),
  })
  .superRefine((input, context) => {
    input.order_by?.forEach((rule, index) => {
      const target = Number(targetOrderRule.exec(rule)?.[1]);
      if (target < 1 || target > input.targets.length) {
        issue(context, ['order_by', index], `The target index ${target} is not within targets (1-${input.targets.length}).`);
      }
    });
  });

const BacklinksSummaryInput = z.strictObject({
  target: domainOrPage.openapi({ description: 'A domain without protocol, or a page with protocol.' }),
  include_subdomains: z.boolean().default(true),
  exclude_internal_backlinks: z.boolean().default(true),
});

const DomainOverviewInput = z.strictObject({
  target: bareDomain,
  location_code: locationCode,
  language_code: languageCode,
});

const TechSearchInput = z.strictObject({
  technologies: z
    .array(keyword)
    .min(1)
    .max(10)
    .openapi({ description: '1-10 technology names; several entries intersect (domains using all of them).', example: ['WordPress'] }),
  limit,
  offset,
  filters: filters.optional(),
  order_by: orderBy.optional(),
});

/** The upstream takes at most 10 target entities, domains and keywords together. */
const AI_VISIBILITY_ENTITIES = 10;

const AiVisibilityInput = z
  .strictObject({
    targets: z.array(bareDomain).max(10).optional().openapi({ description: 'Up to 10 domains, without protocol.', example: ['example.com'] }),
    keywords: z.array(keyword).max(10).optional().openapi({ description: 'Up to 10 keywords.', example: ['crm software'] }),
    limit: limit.openapi({ description: 'Most-mentioned domains to list in items, 1-1000. The price is flat per request.' }),
  })
  .superRefine((input, context) => {
    const targets = input.targets?.length ?? 0;
    const keywords = input.keywords?.length ?? 0;
    if (targets + keywords === 0) {
      for (const field of ['targets', 'keywords']) issue(context, [field], 'Pass at least one of targets or keywords.');
    } else if (targets + keywords > AI_VISIBILITY_ENTITIES) {
      for (const field of ['targets', 'keywords']) {
        issue(context, [field], `targets and keywords together take at most ${AI_VISIBILITY_ENTITIES} entries; ${targets + keywords} were given.`);
      }
    }
  });

const OnPageAuditInput = z.strictObject({
  url: z
    .string()
    .trim()
    .max(2048)
    .regex(/^https?:\/\/\S+$/, 'A full page URL starting with http:// or https://.')
    .openapi({ description: 'The page to audit: a full URL with protocol.', example: 'https://example.com/' }),
  enableJavascript: z
    .boolean()
    .default(false)
    .openapi({ description: "Render the page in a browser and audit what its scripts built (slower, and priced higher); without it the page is audited as served." }),
});

// ---------------------------------------------------------------- payloads (documentation only)

/** The operators for which the upstream bills a serp task 5x (its docs list them on the keyword field). */
const SEARCH_OPERATOR =
  /(?:^|[^a-z])(?:allinanchor|allintext|allintitle|allinurl|cache|define|definition|filetype|id|inanchor|info|intext|intitle|inurl|link|site):/i;

/** Serp: one results page per 10 of depth; search operators cost 5x. */
const perResultsPage: Price<z.infer<typeof SerpInput>> = {
  display: { cents: 0.45, per: 'results page', note: 'one page per 10 of depth; x5 when the keyword uses an operator such as site:, inurl: or filetype:' },
  quote: (input) => unitsFromCents(0.45) * (input.depth / 10) * (SEARCH_OPERATOR.test(input.keyword) ? 5 : 1),
  settle: (input) => perResultsPage.quote(input),
};

/** The on-page audit: one page; a browser render costs more (DataForSEO bills enable_javascript pages about 10x). */
const ONPAGE_AUDIT = unitsFromCents(0.2);
const ONPAGE_AUDIT_RENDERED = unitsFromCents(0.5);
const perAuditedPage: Price<z.infer<typeof OnPageAuditInput>> = {
  display: { cents: 0.2, per: 'request', note: 'one page; 0.5 cents with enableJavascript' },
  quote: (input) => (input.enableJavascript ? ONPAGE_AUDIT_RENDERED : ONPAGE_AUDIT),
  settle: (input) => perAuditedPage.quote(input),
};

const instantPages = dataforseoLive<z.infer<typeof OnPageAuditInput>>('/v3/on_page/instant_pages', ({ url, enableJavascript }) => ({
  url,
  enable_javascript: enableJavascript || undefined,
}));

/** Keyword overview: quoted on the keywords sent, charged on those that came back with data (as upstream bills). */
const perKeyword: Price<z.infer<typeof KeywordOverviewInput>> = {
  display: { cents: 0.01, per: 'keyword', note: 'plus 1 cent per request; quoted on the keywords sent, charged on those returned with data' },
  quote: (input) => unitsFromCents(1) + unitsFromCents(0.01) * input.keywords.length,
  settle: (input, result) => unitsFromCents(1) + unitsFromCents(0.01) * Math.min(rowsReturned(result.data), input.keywords.length),
};

// ---------------------------------------------------------------- the registry

function seoPaths(name: string): [string, string] {
  return [`/${name}`, `/v1/data/seo/${name}`];
}

const labs = (endpoint: string) => `/v3/dataforseo_labs/google/${endpoint}/live`;

export const seoOperations: Operation[] = [
  defineOperation({
    platform: 'seo',
    name: 'serp',
    mcpName: 'data_seo_google_search',
    method: 'POST',
    paths: seoPaths('serp'),
    summary: 'Live Google search results',
    description: 'Live Google results for a query: organic listings and SERP features, in result[0].items.',
    input: SerpInput,
    output: SerpPayload,
    price: perResultsPage,
    call: dataforseoLive('/v3/serp/google/organic/live/advanced', (input) => ({ ...input, keyword: escapeKeyword(input.keyword) })),
    timeoutMs: 60_000,
    // Rankings move within the day; an hour-old page is still the page.
    freshnessMs: HOUR,
  }),
  defineOperation({
    platform: 'seo',
    name: 'keyword-ideas',
    method: 'POST',
    paths: seoPaths('keyword-ideas'),
    summary: 'Keyword ideas from seed keywords',
    description:
      'Keyword ideas expanded from 1-200 seeds, with volume, CPC, competition and difficulty, in result[0].items. The default order is relevance; ideas come from category-level expansion, so sorting by volume surfaces unrelated head terms.',
    input: KeywordIdeasInput,
    output: KeywordIdeasPayload,
    price: perRow(1, 0.02),
    call: dataforseoLive(labs('keyword_ideas'), (input) => ({ ...input })),
    timeoutMs: 60_000,
    freshnessMs: DAY,
  }),
  defineOperation({
    platform: 'seo',
    name: 'keyword-overview',
    method: 'POST',
    paths: seoPaths('keyword-overview'),
    summary: 'Metrics of exact keywords',
    description: 'Per-keyword search volume, CPC, competition, difficulty, trend history and SERP characteristics for 1-700 exact keywords, in result[0].items.',
    input: KeywordOverviewInput,
    output: KeywordOverviewPayload,
    price: perKeyword,
    call: dataforseoLive(labs('keyword_overview'), (input) => ({ ...input })),
    timeoutMs: 60_000,
    freshnessMs: DAY,
  }),
  defineOperation({
    platform: 'seo',
    name: 'keyword-gap',
    method: 'POST',
    paths: seoPaths('keyword-gap'),
    summary: 'Keywords two domains rank for, side by side',
    description:
      "Keywords of target1 (you) and target2 (a competitor) with each domain's ranking, in result[0].items. A gap where the competitor is in the top 10 and you are beyond 20: filters [[\"second_domain_serp_element.rank_absolute\", \"<=\", 10], \"and\", [\"first_domain_serp_element.rank_absolute\", \">\", 20]].",
    input: KeywordGapInput,
    output: KeywordGapPayload,
    price: perRow(1, 0.02),
    call: dataforseoLive(labs('domain_intersection'), (input) => ({ ...input })),
    timeoutMs: 60_000,
    freshnessMs: DAY,
  }),
  defineOperation({
    platform: 'seo',
    name: 'ranked-keywords',
    method: 'POST',
    paths: seoPaths('ranked-keywords'),
    summary: 'Keywords a domain or page ranks for',
    description:
      'Keywords the target ranks for, with volume, difficulty and rank, in result[0].items. Filter example: ranked_serp_element.serp_item.rank_absolute; sort example: keyword_data.keyword_info.search_volume.',
    input: RankedKeywordsInput,
    output: RankedKeywordsPayload,
    price: perRow(1, 0.02),
    call: dataforseoLive(labs('ranked_keywords'), (input) => ({ ...input })),
    timeoutMs: 60_000,
    freshnessMs: DAY,
  }),
  defineOperation({
    platform: 'seo',
    name: 'competitors',
    method: 'POST',
    paths: seoPaths('competitors'),
    summary: 'Domains competing for the same keywords',
    description: 'Competing domains with keyword overlap (intersections) and traffic estimates, in result[0].items; the first row is the target itself. No offset.',
    input: CompetitorsInput,
    output: CompetitorsPayload,
    price: perRow(1, 0.02),
    call: dataforseoLive(labs('competitors_domain'), (input) => ({ ...input })),
    timeoutMs: 60_000,
    freshnessMs: DAY,
  }),
  defineOperation({
    platform: 'seo',
    name: 'referring-domains',
    method: 'POST',
    paths: seoPaths('referring-domains'),
    summary: 'Domains linking to a target',
    description: 'Referring domains of a domain, subdomain or page, with rank, backlinks, first and last seen dates and spam score, in result[0].items.',
    input: ReferringDomainsInput,
    output: ReferringDomainsPayload,
    price: perRow(2, 0.02),
    call: dataforseoLive('/v3/backlinks/referring_domains/live', (input) => ({ ...input })),
    timeoutMs: 60_000,
    freshnessMs: DAY,
  }),
  defineOperation({
    platform: 'seo',
    name: 'backlink-gap',
    method: 'POST',
    paths: seoPaths('backlink-gap'),
    summary: 'Sites linking to competitors',
    description:
      'Referring domains that link to the targets (and not to exclude_targets), in result[0].items; items[].domain_intersection is keyed by the 1-based index of targets, and its rank is the referring domain\'s authority. Default sort: 1.rank,desc.',
    input: BacklinkGapInput,
    output: BacklinkGapPayload,
    price: perRow(2, 0.02),
    call: dataforseoLive('/v3/backlinks/domain_intersection/live', ({ targets, order_by, ...rest }) => ({
      // The upstream keys targets by their 1-based position, as the payload does.
      targets: Object.fromEntries(targets.map((target, index) => [String(index + 1), target])),
      order_by: order_by?.length ? order_by : ['1.rank,desc'],
      ...rest,
    })),
    timeoutMs: 60_000,
    freshnessMs: DAY,
  }),
  defineOperation({
    platform: 'seo',
    name: 'backlinks-summary',
    method: 'POST',
    paths: seoPaths('backlinks-summary'),
    summary: 'Backlink profile of a target',
    description:
      "The target's backlink profile as a flat object at result[0]: total backlinks, referring domains, rank (the target's own authority), spam score, broken links, anchor and TLD distributions.",
    input: BacklinksSummaryInput,
    output: BacklinksSummaryPayload,
    price: perRequest(2),
    call: dataforseoLive('/v3/backlinks/summary/live', (input) => ({ ...input })),
    timeoutMs: 60_000,
    freshnessMs: DAY,
  }),
  defineOperation({
    platform: 'seo',
    name: 'domain-overview',
    method: 'POST',
    paths: seoPaths('domain-overview'),
    summary: 'Organic and paid reach of a domain',
    description: 'Ranking keywords, estimated organic traffic and its value, split by position buckets, in result[0].items.',
    input: DomainOverviewInput,
    output: DomainOverviewPayload,
    price: perRequest(1),
    call: dataforseoLive(labs('domain_rank_overview'), (input) => ({ ...input })),
    timeoutMs: 60_000,
    freshnessMs: DAY,
  }),
  defineOperation({
    platform: 'seo',
    name: 'tech-search',
    method: 'POST',
    paths: seoPaths('tech-search'),
    summary: 'Domains using given technologies',
    description: 'Domains that use every technology given, with domain rank, country and last visit, in result[0].items. Filter example: country_iso_code; sort example: domain_rank.',
    input: TechSearchInput,
    output: TechSearchPayload,
    price: perRow(1, 0.2, 'about 10x keyword rows'),
    call: dataforseoLive('/v3/domain_analytics/technologies/domains_by_technology/live', (input) => ({ ...input })),
    timeoutMs: 60_000,
    freshnessMs: DAY,
  }),
  defineOperation({
    platform: 'seo',
    name: 'onpage-audit',
    method: 'POST',
    paths: seoPaths('onpage-audit'),
    summary: 'On-page SEO audit of one page',
    description:
      "One page's on-page SEO at result[0].items[0]: onpage_score (0-100), checks (no_title, no_description, no_h1_tag, no_image_alt, canonical, is_https, high_loading_time, ...; true means the page has that issue, except seo_friendly_url, canonical and is_https), meta (title, description, headings in htags, canonical, robots, link and image counts, word count in content.plain_text_word_count) and page_timing. Served by DataForSEO's On-Page API when configured, else computed by the built-in web provider from one fetch of the page (with enableJavascript, one render).",
    input: OnPageAuditInput,
    output: OnPageAuditPayload,
    price: perAuditedPage,
    call: (input, context) => (context.env.DATAFORSEO_LOGIN && context.env.DATAFORSEO_PASSWORD ? instantPages(input, context) : auditWithBuiltin(input, context)),
    timeoutMs: (input) => (input.enableJavascript ? 90_000 : 60_000),
    // A page's markup changes with its deploys; an hour-old audit is still the page.
    freshnessMs: HOUR,
    example: { url: 'https://acme.example/anvils' },
    answerExample: {
      result: [
        {
          crawl_progress: 'finished',
          items_count: 1,
          items: [
            {
              resource_type: 'html',
              status_code: 200,
              url: 'https://acme.example/anvils',
              location: null,
              onpage_score: 93.06,
              checks: { no_title: false, no_description: false, no_h1_tag: false, no_image_alt: true, canonical: true, is_https: true, high_loading_time: false, seo_friendly_url: true },
              meta: {
                title: 'Anvils for every forge | Acme',
                description: 'Forged steel anvils from 20 to 150 kg, shipped flat-rate.',
                canonical: 'https://acme.example/anvils',
                follow: true,
                htags: { h1: ['Anvils'], h2: ['Classic', 'Travel'] },
                internal_links_count: 24,
                external_links_count: 3,
                images_count: 6,
                images_without_alt: ['https://acme.example/img/travel-anvil.jpg'],
                content: { plain_text_word_count: 412, plain_text_size: 2630 },
              },
              page_timing: { waiting_time: 180, duration_time: 240 },
              total_dom_size: 311,
              size: 18214,
            },
          ],
        },
      ],
    },
  }),
  defineOperation({
    platform: 'seo',
    name: 'ai-visibility',
    method: 'POST',
    paths: seoPaths('ai-visibility'),
    summary: 'Mentions of domains and keywords in AI answers',
    description:
      'How often the targets and keywords are mentioned in AI answers (Google AI Overviews, ChatGPT): result[0].aggregated_metrics by platform, location and language, and the most-mentioned domains in result[0].items (which may be empty). Pass targets, keywords or both.',
    input: AiVisibilityInput,
    output: AiVisibilityPayload,
    price: perRequest(18, 'flat, whatever the rows'),
    call: dataforseoLive('/v3/ai_optimization/llm_mentions/top_mentioned_domains/live', ({ targets, keywords, limit: rows }) => ({
      target: [...(targets ?? []).map((domain) => ({ domain })), ...(keywords ?? []).map((phrase) => ({ keyword: escapeKeyword(phrase) }))],
      limit: rows,
    })),
    timeoutMs: 60_000,
    freshnessMs: DAY,
  }),
];
