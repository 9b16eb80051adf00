import { z } from '@hono/zod-openapi';

/**
 * The payloads of the SEO tools, for the OpenAPI document and the MCP tool descriptions: the paths the
 * spec names, loose and partial (answers are passed through, not re-validated).
 */

const int = () => z.number().int();
const counts = z.record(z.string(), int());

/** `{ result: [first] }`: the spec's common SEO payload; every answer has `result` (an empty upstream one is []). */
function payload(first: z.ZodType, description: string) {
  return z.object({ result: z.array(first).openapi({ description }) });
}

function rowsPayload(item: z.ZodType, itemsDescription: string, extra: z.ZodRawShape = {}) {
  return z.object({ total_count: int(), items_count: int(), ...extra, items: z.array(item).openapi({ description: itemsDescription }) }).partial();
}

const KeywordInfo = z
  .object({
    search_volume: int().nullable(),
    cpc: z.number().nullable(),
    competition: z.number().nullable(),
    competition_level: z.string().nullable(),
    monthly_searches: z.array(z.object({ year: int(), month: int(), search_volume: int().nullable() }).partial()).nullable(),
  })
  .partial()
  .openapi({ description: 'Search volume, CPC, competition and the monthly trend.' });
const KeywordProperties = z.object({ keyword_difficulty: int().nullable() }).partial();
const KeywordData = z.object({ keyword: z.string(), keyword_info: KeywordInfo, keyword_properties: KeywordProperties }).partial();
const RankedElement = z
  .object({ type: z.string(), rank_group: int(), rank_absolute: int(), url: z.string(), domain: z.string(), title: z.string(), etv: z.number() })
  .partial();
const PositionBuckets = z
  .object({
    pos_1: int(),
    pos_2_3: int(),
    pos_4_10: int(),
    pos_11_20: int(),
    pos_21_30: int(),
    pos_31_40: int(),
    pos_41_50: int(),
    pos_51_60: int(),
    pos_61_70: int(),
    pos_71_80: int(),
    pos_81_90: int(),
    pos_91_100: int(),
    count: int().openapi({ description: 'Ranking keywords.' }),
    etv: z.number().openapi({ description: 'Estimated monthly organic traffic.' }),
    estimated_paid_traffic_cost: z.number().openapi({ description: 'What that traffic would cost in ads, USD.' }),
  })
  .partial();
const BacklinkCounts = {
  rank: int(),
  backlinks: int(),
  first_seen: z.string().nullable(),
  lost_date: z.string().nullable(),
  backlinks_spam_score: int(),
  broken_backlinks: int(),
  referring_domains: int(),
};

export const SerpPayload = payload(
  rowsPayload(
    z
      .object({
        type: z.string().openapi({ description: 'organic, featured_snippet, people_also_ask, local_pack, ...' }),
        rank_group: int(),
        rank_absolute: int(),
        position: z.string(),
        title: z.string(),
        url: z.string(),
        domain: z.string(),
        description: z.string().openapi({ description: 'The snippet.' }),
        items: z.array(z.looseObject({})).openapi({ description: 'Entries of a SERP feature (questions, places, ...).' }),
      })
      .partial(),
    'Organic listings and SERP features, in page order.',
    { keyword: z.string(), check_url: z.string(), se_results_count: int(), item_types: z.array(z.string()) },
  ),
  'result[0].items: organic listings (position, title, URL, snippet) and SERP features (featured snippets, people-also-ask, local pack).',
);

export const KeywordIdeasPayload = payload(
  rowsPayload(z.object({ keyword: z.string(), keyword_info: KeywordInfo, keyword_properties: KeywordProperties }).partial(), 'Keyword ideas, by relevance unless order_by says otherwise.'),
  'result[0].items: keyword ideas with keyword_info (search volume, CPC, competition) and keyword_properties.keyword_difficulty.',
);

export const KeywordOverviewPayload = payload(
  rowsPayload(
    z
      .object({
        keyword: z.string(),
        keyword_info: KeywordInfo,
        keyword_properties: KeywordProperties,
        serp_info: z.object({ serp_item_types: z.array(z.string()), se_results_count: int() }).partial(),
        search_intent_info: z.object({ main_intent: z.string() }).partial(),
      })
      .partial(),
    'One row per keyword sent.',
  ),
  'result[0].items: per-keyword volume, CPC, competition, difficulty, trend history (keyword_info.monthly_searches) and SERP characteristics.',
);

export const KeywordGapPayload = payload(
  rowsPayload(
    z
      .object({
        keyword_data: KeywordData,
        first_domain_serp_element: RankedElement.nullable().openapi({ description: "target1's ranking; absent or null when it does not rank." }),
        second_domain_serp_element: RankedElement.nullable().openapi({ description: "target2's ranking; absent or null when it does not rank." }),
      })
      .partial(),
    'Keywords both domains are measured on.',
  ),
  'result[0].items: keyword_data, first_domain_serp_element and second_domain_serp_element (rank_absolute, rank_group, url).',
);

export const RankedKeywordsPayload = payload(
  rowsPayload(
    z.object({ keyword_data: KeywordData, ranked_serp_element: z.object({ serp_item: RankedElement }).partial() }).partial(),
    'Keywords the target ranks for.',
  ),
  'result[0].items: keyword_data.keyword_info.search_volume, keyword_data.keyword_properties.keyword_difficulty, ranked_serp_element.serp_item.rank_absolute.',
);

export const CompetitorsPayload = payload(
  rowsPayload(
    z
      .object({
        domain: z.string(),
        avg_position: z.number(),
        sum_position: int(),
        intersections: int().openapi({ description: 'Keywords shared with the target.' }),
        metrics: z.object({ organic: PositionBuckets, paid: PositionBuckets }).partial(),
        full_domain_metrics: z.object({ organic: PositionBuckets, paid: PositionBuckets }).partial(),
      })
      .partial(),
    'Competing domains; the first row is the target itself.',
  ),
  'result[0].items: intersections, visibility and traffic estimates, metrics.organic.count; the first row is the target itself.',
);

export const ReferringDomainsPayload = payload(
  rowsPayload(
    z.object({ type: z.string(), domain: z.string(), ...BacklinkCounts, referring_pages: int() }).partial(),
    'Referring domains: rank, backlinks, first_seen, lost_date (null while still linking) and backlinks_spam_score.',
  ),
  'result[0].items: one row per referring domain.',
);

export const BacklinkGapPayload = payload(
  rowsPayload(
    z
      .object({
        domain_intersection: z
          .record(z.string(), z.object({ type: z.string(), target: z.string(), ...BacklinkCounts }).partial())
          .openapi({ description: 'Keyed by the 1-based index of targets ("1", "2", ...); rank is the referring domain\'s own authority (0-1000).' }),
        summary: z.looseObject({}),
      })
      .partial(),
    'Referring domains linking to the targets, by rank descending unless order_by says otherwise.',
  ),
  'result[0].items[].domain_intersection, keyed by target index.',
);

export const BacklinksSummaryPayload = payload(
  z
    .object({
      target: z.string(),
      rank: int().openapi({ description: "The target's own authority (not the per-referring-domain rank)." }),
      backlinks: int(),
      backlinks_spam_score: int(),
      referring_domains: int(),
      referring_main_domains: int(),
      broken_backlinks: int(),
      broken_pages: int(),
      first_seen: z.string().nullable(),
      referring_links_tld: counts.openapi({ description: 'TLD distribution of referring links.' }),
      referring_links_types: counts,
      referring_links_attributes: counts.openapi({ description: 'Link attributes (nofollow, ...), anchors in the full upstream answer.' }),
    })
    .partial(),
  'result[0] is the flat summary (no items array).',
);

export const DomainOverviewPayload = payload(
  rowsPayload(
    z
      .object({ se_type: z.string(), location_code: int(), language_code: z.string(), metrics: z.object({ organic: PositionBuckets, paid: PositionBuckets }).partial() })
      .partial(),
    'Ranking keywords (metrics.organic.count), estimated traffic (etv) and its value, split by position buckets.',
    { target: z.string() },
  ),
  'result[0].items: domain rank metrics for the target.',
);

export const TechSearchPayload = payload(
  rowsPayload(
    z
      .object({
        domain: z.string(),
        title: z.string(),
        domain_rank: int(),
        last_visited: z.string(),
        country_iso_code: z.string(),
        language_code: z.string(),
        technologies: z.record(z.string(), z.record(z.string(), z.array(z.string()))),
      })
      .partial(),
    'Domains using every technology asked for.',
  ),
  'result[0].items: domain, domain_rank, country_iso_code, last_visited.',
);

const MentionGroup = z.array(z.object({ key: z.string(), mentions: int(), ai_search_volume: int() }).partial());
const MentionMetrics = z
  .object({
    platform: MentionGroup,
    location: MentionGroup,
    language: MentionGroup,
    sources_domain: MentionGroup,
    total: z.object({ mentions: int(), ai_search_volume: int() }).partial(),
  })
  .partial();

export const AiVisibilityPayload = payload(
  rowsPayload(MentionMetrics.extend({ domain: z.string().optional() }), 'The domains most mentioned with the targets; may legitimately be empty.', {
    aggregated_metrics: MentionMetrics.openapi({ description: 'Mentions and AI search volume by platform, location and language.' }),
  }),
  'result[0].aggregated_metrics, and the most-mentioned domains in result[0].items.',
);

// ---------------------------------------------------------------- prices

export const OnPageAuditPayload = payload(
  z
    .looseObject({
      crawl_progress: z.string(),
      items_count: int(),
      warning: z.string().openapi({
        description: 'When the built-in provider rendered the page (enableJavascript) with some of its requests refused (private addresses, or past the requests one call may make): the audit is of the page as it loaded. Absent otherwise.',
      }),
      items: z.array(
        z
          .looseObject({
            resource_type: z.string().openapi({ description: 'html, or broken for a 4xx/5xx page.' }),
            status_code: int(),
            url: z.string(),
            location: z.string().nullable().openapi({ description: 'Where the page redirected to, when it did.' }),
            onpage_score: z.number().openapi({ description: '0-100; a broken page scores 0.' }),
            checks: z.record(z.string(), z.boolean()).openapi({ description: 'Each check by name; true means the page has that issue (except seo_friendly_url, canonical, is_https, has_html_doctype).' }),
            meta: z
              .looseObject({
                title: z.string().nullable(),
                description: z.string().nullable(),
                canonical: z.string().nullable(),
                follow: z.boolean(),
                htags: z.record(z.string(), z.array(z.string())).nullable().openapi({ description: 'Heading texts by level: h1, h2, ...' }),
                internal_links_count: int(),
                external_links_count: int(),
                images_count: int(),
                content: z.looseObject({ plain_text_word_count: int(), plain_text_size: int() }).partial(),
              })
              .partial(),
            page_timing: z.looseObject({ waiting_time: z.number().nullable(), duration_time: z.number().nullable() }).partial(),
            total_dom_size: int(),
            size: int(),
          })
          .partial(),
      ),
    })
    .partial()
    .openapi('SeoOnPageAudit'),
  'One element; result[0].items[0] is the audited page.',
);
