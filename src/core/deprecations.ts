import { clock } from './clock';

/**
 * Retired and retiring surfaces, as data: when each was deprecated, when it stops working (its sunset),
 * and what replaces it. Dates are read against the injectable clock, so the behaviour on either side of
 * a date can be observed in tests. The spec gives the sunsets; the deprecation dates are ours
 * (docs/decisions.md, issue 15).
 */
export const DEPRECATIONS = {
  /** `POST /v1/register`: replaced by the MCP tool `sluice_onboarding`, which records the same intent. */
  register: { deprecatedAt: Date.parse('2026-07-01T00:00:00Z'), sunsetAt: Date.parse('2026-12-31T00:00:00Z') },
  /** The curated source paths `/v1/<slug>/<operation>`: replaced by `/v1/data/<slug>/<operation>`. */
  curatedPaths: { deprecatedAt: Date.parse('2026-07-01T00:00:00Z'), sunsetAt: Date.parse('2026-10-01T00:00:00Z') },
} as const;

export type Deprecation = (typeof DEPRECATIONS)[keyof typeof DEPRECATIONS];

/** Whether the surface still answers: before its sunset it works, from the sunset on it is gone (410). */
export function isSunset(deprecation: Deprecation): boolean {
  return clock.now() >= deprecation.sunsetAt;
}

/**
 * The headers a deprecated surface carries while it still works: `Deprecation` as an RFC 9745 structured
 * date (`@` and Unix seconds), `Sunset` as an RFC 8594 HTTP-date, and the `Link`s given.
 */
export function deprecationHeaders(deprecation: Deprecation, links: string[]): Record<string, string> {
  return {
    Deprecation: `@${Math.floor(deprecation.deprecatedAt / 1000)}`,
    Sunset: new Date(deprecation.sunsetAt).toUTCString(),
    ...(links.length > 0 ? { Link: links.join(', ') } : {}),
  };
}
