/** The sources of the catalog. Slugs are the platforms' real names (DESIGN: decisions already taken). */
export const PLATFORMS = {
  web: { name: 'Web', category: 'Web', description: 'Scrape one page, search the web (optionally scraping results), map a site\'s URLs.' },
  seo: {
    name: 'SEO',
    category: 'SEO',
    description: 'Live search results, keyword research, competitor analysis, backlinks, AI visibility, technology detection and model answers.',
  },
  linkedin: { name: 'LinkedIn', category: 'Professional-network data', description: 'Company, profile, post, article, job, location and system lookups.' },
} as const satisfies Record<string, { name: string; category: string; description: string }>;

export type PlatformSlug = keyof typeof PLATFORMS;
