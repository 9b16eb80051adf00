import { z } from '@hono/zod-openapi';

/**
 * Characters a name shown to people must not hold: C0 and C1 controls (NUL, line breaks, escapes) and
 * the bidirectional marks, embeddings, overrides and isolates (U+200E, U+200F, U+202A-U+202E,
 * U+2066-U+2069), which reorder what is shown after them, so "key\u202Efdp.exe" reads as "keyexe.pdf".
 */
export const UNSHOWABLE_IN_NAMES = /[\u0000-\u001F\u007F-\u009F\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;

/** A name people read (a workspace, a key, an organization, an OAuth client): trimmed, 1 to `max` characters, no controls or direction overrides. */
export function humanName(max = 100) {
  return z
    .string()
    .trim()
    .min(1, 'Required.')
    .max(max, `At most ${max} characters.`)
    .refine((value) => !UNSHOWABLE_IN_NAMES.test(value), {
      message: 'Control characters and text-direction marks or overrides (U+0000-U+001F, U+007F-U+009F, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069) are not allowed in a name.',
    });
}
