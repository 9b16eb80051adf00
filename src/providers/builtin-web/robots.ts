import robotsParser from 'robots-parser';
import type { SafeFetcher } from './safe-fetch';
import { CRAWLER_TOKEN } from './settings';

/** What a site's robots.txt says to this crawler. */
export interface RobotsRules {
  /** Whether the crawler may fetch this URL of the site (its own group, else the `*` group); false past the matching budget. */
  allows(url: string): boolean;
  /** The sitemaps the file names. */
  sitemaps: string[];
  /** URLs refused because the file's rules cost more to apply than ROBOTS_MATCHING_BUDGET left (none for most files). */
  unchecked(): number;
  /** False when the call's time or subrequest budget ran out before the file was read: nothing of the origin is fetched, and what it says is unknown. */
  read: boolean;
}

const ROBOTS_MAX_BYTES = 512 * 1024;

/**
 * The matching work one robots.txt may cost a request, in steps of robots-parser's matcher: a rule with a `*`
 * costs about its length times the path's, one without at most its length, and every rule is tried for every
 * URL. 20 million steps are about a third of a second of one core here (17 ns a step, measured). A file of
 * 25,000 rules like `Disallow: /*N*z` cost 47 ms a link of a 20-character path and 600 ms on a 2,000-character
 * one, so a map of one page with a thousand links held the isolate 5.8 s for a tenth of a cent. Past the budget
 * a URL is refused (not fetched, not listed), as RFC 9309 has a crawler do when it cannot read the rules; an
 * honest file (a few dozen rules) is checked for some tens of thousands of links first.
 */
export const ROBOTS_MATCHING_BUDGET = 20_000_000;

/**
 * An upper bound on the steps a URL costs against every rule of the file, the rules of every group counted, each
 * read as robots-parser reads it: the line without its comment, the whole value after the first colon, trimmed,
 * then percent-encoded (a space is three characters to match, a CJK character nine).
 */
function matchingCost(text: string): { plain: number; wildcard: number } {
  let plain = 0;
  let wildcard = 0;
  for (const line of text.split(/\r\n|\r|\n/)) {
    const uncommented = line.split('#', 1)[0]!;
    const colon = uncommented.indexOf(':');
    if (colon < 0) continue;
    const key = uncommented.slice(0, colon).trim().toLowerCase();
    if (key !== 'allow' && key !== 'disallow') continue;
    const value = uncommented.slice(colon + 1).trim();
    if (value === '') continue;
    const length = encodedLength(value);
    if (value.includes('*')) wildcard += length;
    else plain += length;
  }
  return { plain, wildcard };
}

/** The length of a rule as the parser matches it: percent-encoded, or as it is when it cannot be (a lone surrogate). */
function encodedLength(value: string): number {
  try {
    return encodeURI(value).length;
  } catch {
    return value.length * 9;
  }
}

/**
 * Reads an origin's robots.txt as RFC 9309 says: a 4xx (no file) allows everything; a 5xx, a network
 * failure or a refused host means "assume complete disallow". Each URL is matched once (a site's navigation
 * links repeat on every page), within ROBOTS_MATCHING_BUDGET.
 */
export async function loadRobots(origin: string, fetcher: SafeFetcher, headers: Record<string, string>): Promise<RobotsRules> {
  const robotsUrl = `${origin}/robots.txt`;
  try {
    const resource = await fetcher.fetch(robotsUrl, { headers, maxBytes: ROBOTS_MAX_BYTES });
    if (resource.status >= 400 && resource.status < 500) return { allows: () => true, sitemaps: [], unchecked: () => 0, read: true };
    if (resource.status >= 500) return DISALLOW_ALL;
    const text = resource.status < 300 ? new TextDecoder().decode(resource.body) : '';
    const rules = robotsParser(robotsUrl, text);
    const cost = matchingCost(text);
    const decided = new Map<string, boolean>();
    let left = ROBOTS_MATCHING_BUDGET;
    let unchecked = 0;
    const allows = (url: string): boolean => {
      const known = decided.get(url);
      if (known !== undefined) return known;
      const steps = cost.plain + cost.wildcard * (url.length + 1);
      if (steps > left) {
        unchecked += 1;
        return false;
      }
      left -= steps;
      const allowed = rules.isAllowed(url, CRAWLER_TOKEN) === true;
      decided.set(url, allowed);
      return allowed;
    };
    return { allows, sitemaps: rules.getSitemaps(), unchecked: () => unchecked, read: true };
  } catch {
    return fetcher.exhausted ? UNREAD : DISALLOW_ALL;
  }
}

const DISALLOW_ALL: RobotsRules = { allows: () => false, sitemaps: [], unchecked: () => 0, read: true };
const UNREAD: RobotsRules = { ...DISALLOW_ALL, read: false };
