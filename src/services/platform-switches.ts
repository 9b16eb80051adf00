import { clock } from '../core/clock';
import { ApiError } from '../core/errors';

/**
 * The operator's switch per source slug (`ops platform disable|enable --slug S`), kept in D1. Each isolate
 * remembers the switched-off set for a few seconds, so the switch costs one small read per isolate per
 * interval instead of one per call; a switch made through this isolate applies at once, others within
 * REMEMBER_MS.
 */
const REMEMBER_MS = 5_000;
/** How long a caller is told to wait: the operator's switch is a deliberate, usually longer, pause. */
const RETRY_AFTER_SECONDS = 300;

let remembered: { slugs: Set<string>; readAt: number } | undefined;

export async function disabledPlatforms(db: D1Database): Promise<Set<string>> {
  const now = clock.now();
  if (remembered && now - remembered.readAt < REMEMBER_MS) return remembered.slugs;
  const { results } = await db.prepare('SELECT slug FROM disabled_platforms').all<{ slug: string }>();
  remembered = { slugs: new Set(results.map((row) => row.slug)), readAt: now };
  return remembered.slugs;
}

export async function setPlatformDisabled(db: D1Database, slug: string, disabled: boolean): Promise<{ slug: string; serving: boolean; disabledAt: string | null }> {
  const disabledAt = new Date(clock.now()).toISOString();
  if (disabled) await db.prepare('INSERT INTO disabled_platforms (slug, disabled_at) VALUES (?, ?) ON CONFLICT (slug) DO NOTHING').bind(slug, disabledAt).run();
  else await db.prepare('DELETE FROM disabled_platforms WHERE slug = ?').bind(slug).run();
  remembered = undefined;
  const row = await db.prepare('SELECT disabled_at FROM disabled_platforms WHERE slug = ?').bind(slug).first<{ disabled_at: string }>();
  return { slug, serving: row === null, disabledAt: row?.disabled_at ?? null };
}

/** Refuses a call to a switched-off source: the slug exists but is not serving (spec: 503 PROVIDER_NOT_FOUND). */
export async function ensureServing(db: D1Database, slug: string): Promise<void> {
  if (!(await disabledPlatforms(db)).has(slug)) return;
  throw new ApiError('PROVIDER_NOT_FOUND', `The source '${slug}' is switched off on this server for now. Retry later; this call was not charged.`, {
    status: 503,
    retryAfter: RETRY_AFTER_SECONDS,
  });
}
