/** The sources of the catalog. Slugs are the platforms' real names (DESIGN: decisions already taken). */
export const PLATFORMS = {
  linkedin: { name: 'LinkedIn', category: 'Professional-network data', description: 'Company, profile, post, article, job, location and system lookups.' },
} as const satisfies Record<string, { name: string; category: string; description: string }>;

export type PlatformSlug = keyof typeof PLATFORMS;
