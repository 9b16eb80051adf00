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

/** A larger page is compared by its hash alone: its text is not kept, and no diff of it is computed. */
const MAX_STORED_CHARS = 500_000;

/** Where a snapshot is kept: D1 its hash and time, R2 its text. */
export interface SnapshotStores {
  DB: D1Database;
  RESULTS: R2Bucket;
}

interface StoredSnapshot {
  content_hash: string;
  /** The text of snapshots stored before it moved to R2; null since. */
  markdown: string | null;
  scraped_at: string;
}

/** The R2 key of an organization's snapshot of a URL, one per pair, replaced by each scrape. */
async function snapshotKey(organizationId: string, url: string): Promise<string> {
  return `snapshots/${organizationId}/${await sha256Hex(url)}.md`;
}

/**
 * The previous snapshot's text, when it is kept and is the one its row's hash names: two scrapes of a URL at
 * once may leave the row of one and the text of the other, and a diff against the wrong text would be wrong.
 */
async function previousText(results: R2Bucket, key: string, previous: StoredSnapshot): Promise<string | null> {
  const text = previous.markdown ?? (await (await results.get(key))?.text()) ?? null;
  return text !== null && (await sha256Hex(text)) === previous.content_hash ? text : null;
}

/**
 * Compares this scrape with the previous one of the same URL by the same organization, then keeps this
 * one for next time. A page that now answers 404 or 410 after having had content is "removed", and the
 * content it had is kept to compare with should it come back. The text goes to R2 and D1 keeps its hash:
 * an organization tracking many large pages would otherwise fill the shared database.
 */
export async function trackChanges({ DB: db, RESULTS: results }: SnapshotStores, snapshot: ScrapeSnapshot, modes: readonly ChangeMode[]): Promise<ChangeTracking> {
  const previous = await db
    .prepare('SELECT content_hash, markdown, scraped_at FROM scrape_snapshots WHERE organization_id = ? AND url = ?')
    .bind(snapshot.organizationId, snapshot.url)
    .first<StoredSnapshot>();
  const previousScrapeAt = previous?.scraped_at ?? null;

  if (previous && (snapshot.statusCode === 404 || snapshot.statusCode === 410)) {
    return { previousScrapeAt, changeStatus: 'removed', visibility: 'visible' };
  }

  const hash = await sha256Hex(snapshot.markdown);
  const key = await snapshotKey(snapshot.organizationId, snapshot.url);
  const kept = snapshot.markdown.length <= MAX_STORED_CHARS;
  const diffed = previous !== null && previous.content_hash !== hash && kept && modes.length > 0;
  // The previous text is read before this scrape's replaces it.
  const before = diffed ? await previousText(results, key, previous) : null;
  // Unchanged text stays where it is, unless it is still in its D1 row from before R2, or is gone (deleted by
  // a prune that took the row's old self while this scrape refreshed it).
  const stays = kept && previous?.content_hash === hash && previous.markdown === null && (await results.head(key)) !== null;
  if (kept && !stays) await results.put(key, snapshot.markdown, { httpMetadata: { contentType: 'text/markdown; charset=utf-8' } });
  await db
    .prepare(
      `INSERT INTO scrape_snapshots (organization_id, url, content_hash, markdown, scraped_at) VALUES (?, ?, ?, NULL, ?)
       ON CONFLICT (organization_id, url) DO UPDATE SET content_hash = excluded.content_hash, markdown = NULL, scraped_at = excluded.scraped_at`,
    )
    .bind(snapshot.organizationId, snapshot.url, hash, new Date(clock.now()).toISOString())
    .run();

  if (!previous) return { previousScrapeAt, changeStatus: 'new', visibility: 'visible' };
  if (previous.content_hash === hash) return { previousScrapeAt, changeStatus: 'same', visibility: 'visible' };

  const tracking: ChangeTracking = { previousScrapeAt, changeStatus: 'changed', visibility: 'visible' };
  if (before !== null) {
    if (modes.includes('git-diff')) tracking.diff = gitDiff(before, snapshot.markdown);
    if (modes.includes('json')) tracking.json = sectionChanges(before, snapshot.markdown);
  }
  return tracking;
}

/** How long a URL's snapshot is kept after it was last scraped: a page asked again after that is "new". */
export const SNAPSHOTS_KEPT_DAYS = 90;

/**
 * Deletes snapshots not refreshed for SNAPSHOTS_KEPT_DAYS through their age index, a thousand at a time (the
 * most one R2 delete takes): their texts, then their rows unless scraped again meanwhile. A round (its read,
 * the R2 delete and D1's) counts as one statement of the run's budget. Run by the daily cron.
 */
export async function pruneSnapshots({ DB: db, RESULTS: results }: SnapshotStores, now: number = clock.now(), budget = new PruningBudget()): Promise<number> {
  const before = new Date(now - SNAPSHOTS_KEPT_DAYS * 86_400_000).toISOString();
  let deleted = 0;
  while (budget.take()) {
    const old = (await db.prepare('SELECT rowid AS id, organization_id, url FROM scrape_snapshots WHERE scraped_at < ? LIMIT ?').bind(before, R2_DELETE_MOST).all<SnapshotRow>()).results;
    if (old.length === 0) break;
    await results.delete(await Promise.all(old.map((row) => snapshotKey(row.organization_id, row.url))));
    const gone = await db
      .prepare('DELETE FROM scrape_snapshots WHERE scraped_at < ? AND rowid IN (SELECT value FROM json_each(?))')
      .bind(before, JSON.stringify(old.map((row) => row.id)))
      .run();
    deleted += gone.meta.changes;
    if (old.length < R2_DELETE_MOST) break;
  }
  return deleted;
}

/** The most keys one R2 delete takes. */
const R2_DELETE_MOST = 1_000;

interface SnapshotRow {
  id: number;
  organization_id: string;
  url: string;
}
