import robotsParser from 'robots-parser';
import type { SafeFetcher } from './safe-fetch';
import { CRAWLER_TOKEN } from './settings';

/** What a site's robots.txt says to this crawler. */
export interface RobotsRules {
  /** Whether the crawler may fetch this URL of the site (its own group, else the `*` group). */
  allows(url: string): boolean;
  /** The sitemaps the file names. */
  sitemaps: string[];
}

const ROBOTS_MAX_BYTES = 512 * 1024;

/**
 * Reads an origin's robots.txt as RFC 9309 says: a 4xx (no file) allows everything; a 5xx, a network
 * failure or a refused host means "assume complete disallow".
 */
export async function loadRobots(origin: string, fetcher: SafeFetcher, headers: Record<string, string>): Promise<RobotsRules> {
  const robotsUrl = `${origin}/robots.txt`;
  try {
    const resource = await fetcher.fetch(robotsUrl, { headers, maxBytes: ROBOTS_MAX_BYTES });
    if (resource.status >= 400 && resource.status < 500) return { allows: () => true, sitemaps: [] };
    if (resource.status >= 500) return DISALLOW_ALL;
    const rules = robotsParser(robotsUrl, resource.status < 300 ? new TextDecoder().decode(resource.body) : '');
    return { allows: (url) => rules.isAllowed(url, CRAWLER_TOKEN) === true, sitemaps: rules.getSitemaps() };
  } catch {
    return DISALLOW_ALL;
  }
}

const DISALLOW_ALL: RobotsRules = { allows: () => false, sitemaps: [] };
