import { clock } from '../../core/clock';
import { PruningBudget } from '../../core/pruning';
import { sha256Hex } from '../../core/digest';
import { gitDiff, sectionChanges, type GitDiff, type SectionChanges } from './diffs';

export type ChangeMode = 'git-diff' | 'json';

/** Firecrawl's changeTracking object, so a client sees one shape whichever provider answered. */
export interface ChangeTracking {
  previousScrapeAt: string | null;
  changeStatus: 'new' | 'same' | 'changed' | 'removed';
  /** Always visible: the built-in provider has no crawl memory to call a page hidden. */
  visibility: 'visible';
  diff?: GitDiff;
  json?: SectionChanges;
}

export interface ScrapeSnapshot {
  organizationId: string;
  /** The URL asked for (metadata.sourceURL): the same question is compared with itself. */
  url: string;
  markdown: string;
  statusCode: number;
}

/** D1 keeps a string of at most about 2 MB; a larger page is compared by its hash alone. */
const MAX_STORED_CHARS = 500_000;

interface StoredSnapshot {
  content_hash: string;
  markdown: string | null;
  scraped_at: string;
}

/**
 * Compares this scrape with the previous one of the same URL by the same organization, then keeps this
 * one for next time. A page that now answers 404 or 410 after having had content is "removed", and the
 * content it had is kept to compare with should it come back.
 */
export async function trackChanges(db: D1Database, snapshot: ScrapeSnapshot, modes: readonly ChangeMode[]): Promise<ChangeTracking> {
  const previous = await db
    .prepare('SELECT content_hash, markdown, scraped_at FROM scrape_snapshots WHERE organization_id = ? AND url = ?')
    .bind(snapshot.organizationId, snapshot.url)
    .first<StoredSnapshot>();
  const previousScrapeAt = previous?.scraped_at ?? null;

  if (previous && (snapshot.statusCode === 404 || snapshot.statusCode === 410)) {
    return { previousScrapeAt, changeStatus: 'removed', visibility: 'visible' };
  }

  const hash = await sha256Hex(snapshot.markdown);
  await db
    .prepare(
      `INSERT INTO scrape_snapshots (organization_id, url, content_hash, markdown, scraped_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (organization_id, url) DO UPDATE SET content_hash = excluded.content_hash, markdown = excluded.markdown, scraped_at = excluded.scraped_at`,
    )
    .bind(snapshot.organizationId, snapshot.url, hash, snapshot.markdown.length <= MAX_STORED_CHARS ? snapshot.markdown : null, new Date(clock.now()).toISOString())
    .run();

  if (!previous) return { previousScrapeAt, changeStatus: 'new', visibility: 'visible' };
  if (previous.content_hash === hash) return { previousScrapeAt, changeStatus: 'same', visibility: 'visible' };

  const tracking: ChangeTracking = { previousScrapeAt, changeStatus: 'changed', visibility: 'visible' };
  if (previous.markdown !== null && snapshot.markdown.length <= MAX_STORED_CHARS) {
    if (modes.includes('git-diff')) tracking.diff = gitDiff(previous.markdown, snapshot.markdown);
    if (modes.includes('json')) tracking.json = sectionChanges(previous.markdown, snapshot.markdown);
  }
  return tracking;
}

/** How long a URL's snapshot is kept after it was last scraped: a page asked again after that is "new". */
export const SNAPSHOTS_KEPT_DAYS = 90;

/** Deletes snapshots not refreshed for SNAPSHOTS_KEPT_DAYS, in chunks through their age index. Run by the daily cron. */
export async function pruneSnapshots(db: D1Database, now: number = clock.now()): Promise<number> {
  const before = new Date(now - SNAPSHOTS_KEPT_DAYS * 86_400_000).toISOString();
  const drained = await new PruningBudget().drain((limit) =>
    db.prepare('DELETE FROM scrape_snapshots WHERE rowid IN (SELECT rowid FROM scrape_snapshots WHERE scraped_at < ? LIMIT ?)').bind(before, limit),
  );
  return drained.deleted;
}
