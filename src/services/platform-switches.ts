import { clock } from '../core/clock';
import { ReadBehind } from '../core/read-behind';
import { ApiError } from '../core/errors';

/**
 * The operator's switch per source slug (`ops platform disable|enable --slug S`), kept in D1. Each isolate
 * remembers the switched-off set, so the switch costs one small read per isolate every few seconds instead of
 * one per call, and no call waits for it once the isolate has read it: the call that finds it older than 5
 * seconds reads it again beside itself. A switch made through this isolate applies at once, others from the
 * read after those 5 seconds.
 */
const switches = new ReadBehind<Set<string>>({ name: "the operator's switches", freshMs: 5_000, usableMs: 60_000, maxEntries: 1 });
/** How long a caller is told to wait: the operator's switch is a deliberate, usually longer, pause. */
const RETRY_AFTER_SECONDS = 300;

export function disabledPlatforms(db: D1Database, waitUntil: (promise: Promise<unknown>) => void): Promise<Set<string>> {
  return switches.get(
    'all',
    async () => {
      const { results } = await db.prepare('SELECT slug FROM disabled_platforms').all<{ slug: string }>();
      return new Set(results.map((row) => row.slug));
    },
    waitUntil,
  );
}

export async function setPlatformDisabled(db: D1Database, slug: string, disabled: boolean): Promise<{ slug: string; serving: boolean; disabledAt: string | null }> {
  const disabledAt = new Date(clock.now()).toISOString();
  if (disabled) await db.prepare('INSERT INTO disabled_platforms (slug, disabled_at) VALUES (?, ?) ON CONFLICT (slug) DO NOTHING').bind(slug, disabledAt).run();
  else await db.prepare('DELETE FROM disabled_platforms WHERE slug = ?').bind(slug).run();
  switches.forget();
  const row = await db.prepare('SELECT disabled_at FROM disabled_platforms WHERE slug = ?').bind(slug).first<{ disabled_at: string }>();
  return { slug, serving: row === null, disabledAt: row?.disabled_at ?? null };
}

/** Refuses a call to a switched-off source: the slug exists but is not serving (spec: 503 PROVIDER_NOT_FOUND). */
export async function ensureServing(db: D1Database, slug: string, waitUntil: (promise: Promise<unknown>) => void): Promise<void> {
  if (!(await disabledPlatforms(db, waitUntil)).has(slug)) return;
  throw new ApiError('PROVIDER_NOT_FOUND', `The source '${slug}' is switched off on this server for now. Retry later; this call was not charged.`, {
    status: 503,
    retryAfter: RETRY_AFTER_SECONDS,
  });
}
