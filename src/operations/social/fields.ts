import { z } from '@hono/zod-openapi';

/** Input fields shared by the social and lead tables, each bounded as its vendor documents it. */

/** A whole number in a range; query strings arrive as text, so GET inputs are coerced. */
export function count(min: number, max: number, fallback?: number) {
  const base = z.coerce.number().int().min(min).max(max);
  const example = fallback ?? Math.min(max, 10);
  return (fallback === undefined ? base.optional() : base.default(fallback)).openapi({ description: `How many results, ${min}-${max}.`, example });
}

/**
 * A pagination cursor: opaque, passed through exactly as the vendor gave it in the previous answer. The
 * example is one such cursor of the vendor's, so the reference shows what its cursors look like.
 */
export function cursor(example: string) {
  return z
    .string()
    .min(1)
    .max(2048)
    .optional()
    .openapi({ description: 'The cursor of the previous answer, passed through as the vendor gave it.', example });
}

/** Free-text search words. */
export function query(max: number, example: string) {
  return z.string().trim().min(1).max(max).openapi({ example });
}

/**
 * `text` as a pattern that matches it in any letter case. Patterns are written without regex flags: the
 * OpenAPI generator writes a flagged regex as `source/i`, a pattern no value matches.
 */
function anyCase(text: string): string {
  return text.replace(/[a-z]/gi, (letter) => `[${letter.toLowerCase()}${letter.toUpperCase()}]`).replaceAll('.', '\\.');
}

function parsesAsUrl(value: string): boolean {
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}

/** An https URL on one of `hosts` (or their subdomains), so a lookup is not spent on a URL the vendor cannot read. */
export function platformUrl(hosts: string[], example: string) {
  const pattern = new RegExp(`^${anyCase('http')}${anyCase('s')}?://([a-zA-Z0-9-]+\\.)*(${hosts.map(anyCase).join('|')})(/|$)`);
  const message = `An http(s) URL on ${hosts.join(' or ')}.`;
  return (
    z
      .string()
      .max(2048)
      // Aborting: the input's own refinements (which read the URL further: a video's or a post's id) then say nothing more.
      .regex(pattern, { message, abort: true })
      // The pattern lets through names no URL parser takes (`xn--a`, not punycode): parsed here, not later as a 500.
      .refine((value) => parsesAsUrl(value), { message, abort: true })
      .openapi({ example })
  );
}

const HASHTAG = /^[\p{L}\p{N}_]{1,100}$/u;

/**
 * A hashtag without #, in any script. The documented pattern is the bare source: OpenAPI patterns are read
 * as Unicode regexes, and the generator would write the flagged one as `source/u`, which matches nothing.
 */
export function hashtag(example: string) {
  return z.string().regex(HASHTAG, 'A hashtag without #: letters, digits and _.').openapi({ example, pattern: HASHTAG.source });
}

/** A numeric id as the platforms issue them (decimal digits, up to 25). */
export function numericId(example: string) {
  return z.string().regex(/^[0-9]{1,25}$/, 'A numeric id (digits only).').openapi({ example });
}

/** Two-letter ISO 3166-1 country code. */
export const country = z
  .string()
  .regex(/^[A-Za-z]{2}$/, 'An ISO 3166-1 alpha-2 country code, such as US.')
  .openapi({ example: 'US' });

/**
 * A bare domain such as example.com, without protocol or path; an internationalized one in its ASCII (`xn--`)
 * form, whose top-level domain may be one too (`xn--p1ai`, .рф).
 */
export const domain = z
  .string()
  .trim()
  .min(1)
  .max(253)
  .regex(/^(?!https?:\/\/)[A-Za-z0-9.-]+\.(?:[A-Za-z]{2,}|xn--[A-Za-z0-9-]+)$/, 'Expected a bare domain such as example.com (an internationalized one in its xn-- form), without protocol or path.')
  .openapi({ example: 'stripe.com' });

export const HOUR = 60 * 60 * 1000;
