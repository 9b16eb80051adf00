import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { clock } from '../../src/core/clock';
import { sha256Hex } from '../../src/core/digest';
import { trackChanges } from '../../src/providers/builtin-web/change-tracking';
import { gitDiff, sectionChanges } from '../../src/providers/builtin-web/diffs';
import type { ScrapeFormat } from '../../src/providers/builtin-web/inputs';
import { scrapeWithBuiltin } from '../../src/providers/builtin-web/scrape';
import { signal, web, webEnv } from './support';

const TRACKED = 'https://news.example.com/tracked';
const BOTH_MODES: ScrapeFormat[] = ['markdown', { type: 'changeTracking', modes: ['git-diff', 'json'] }];

const pricesPage = (adult: string, parking: string) =>
  `<html><head><title>Prices</title></head><body><main><h1>Prices</h1><h2>Ferry</h2><p>Adult: ${adult}</p><h2>Parking</h2><p>Per day: ${parking}</p></main></body></html>`;

async function tracked(site: ReturnType<typeof web>, organizationId: string, formats: ScrapeFormat[] = BOTH_MODES, url = TRACKED) {
  const result = await scrapeWithBuiltin({ url, formats }, { env: webEnv(), signal: signal(), fetch: site.fetch, organizationId });
  return (result.data as { result: { markdown: string; changeTracking: Record<string, any> }[] }).result[0]!;
}

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

describe('changeTracking compares with the previous scrape of the same URL by the same organization', () => {
  it('answers new, then same, then changed with a git diff and the changed sections', async () => {
    const site = web();
    const organizationId = `org_${crypto.randomUUID()}`;
    clock.now = () => Date.parse('2026-03-01T10:00:00.000Z');

    const first = await tracked(site, organizationId);
    expect(first.changeTracking).toEqual({ previousScrapeAt: null, changeStatus: 'new', visibility: 'visible' });
    expect(first.markdown).toContain('Adult: 12 EUR');

    clock.now = () => Date.parse('2026-03-02T10:00:00.000Z');
    const second = await tracked(site, organizationId);
    expect(second.changeTracking).toEqual({ previousScrapeAt: '2026-03-01T10:00:00.000Z', changeStatus: 'same', visibility: 'visible' });

    site.setPage(TRACKED, pricesPage('14 EUR', '9 EUR'));
    clock.now = () => Date.parse('2026-03-03T10:00:00.000Z');
    const third = await tracked(site, organizationId);
    expect(third.changeTracking).toMatchObject({ previousScrapeAt: '2026-03-02T10:00:00.000Z', changeStatus: 'changed', visibility: 'visible' });
    expect(third.changeTracking.diff.text).toBe('@@ -2,7 +2,7 @@\n \n ## Ferry\n \n-Adult: 12 EUR\n+Adult: 14 EUR\n \n ## Parking\n ');
    expect(third.changeTracking.diff.json.files[0].chunks[0]).toEqual({
      content: '@@ -2,7 +2,7 @@',
      changes: [
        { type: 'normal', ln1: 2, ln2: 2, content: '' },
        { type: 'normal', ln1: 3, ln2: 3, content: '## Ferry' },
        { type: 'normal', ln1: 4, ln2: 4, content: '' },
        { type: 'del', ln: 5, content: 'Adult: 12 EUR' },
        { type: 'add', ln: 5, content: 'Adult: 14 EUR' },
        { type: 'normal', ln1: 6, ln2: 6, content: '' },
        { type: 'normal', ln1: 7, ln2: 7, content: '## Parking' },
        { type: 'normal', ln1: 8, ln2: 8, content: '' },
      ],
    });
    expect(third.changeTracking.json).toEqual({ Ferry: { previous: 'Adult: 12 EUR', current: 'Adult: 14 EUR' } });

    // The changed page is what the next scrape compares with.
    clock.now = () => Date.parse('2026-03-04T10:00:00.000Z');
    expect((await tracked(site, organizationId)).changeTracking).toMatchObject({ changeStatus: 'same', previousScrapeAt: '2026-03-03T10:00:00.000Z' });
  });

  it('keeps each organization to its own history', async () => {
    const site = web();
    const first = `org_${crypto.randomUUID()}`;
    await tracked(site, first);
    expect((await tracked(site, first)).changeTracking.changeStatus).toBe('same');
    expect((await tracked(site, `org_${crypto.randomUUID()}`)).changeTracking.changeStatus).toBe('new');
  });

  it('answers the status alone when no mode is asked for', async () => {
    const site = web();
    const organizationId = `org_${crypto.randomUUID()}`;
    const plain: ScrapeFormat[] = ['markdown', { type: 'changeTracking' }];
    await tracked(site, organizationId, plain);
    site.setPage(TRACKED, pricesPage('14 EUR', '10 EUR'));
    const changed = await tracked(site, organizationId, plain);
    expect(changed.changeTracking).toEqual({ previousScrapeAt: expect.any(String), changeStatus: 'changed', visibility: 'visible' });
  });

  it('answers removed when a page that had content now answers 404', async () => {
    const site = web();
    const organizationId = `org_${crypto.randomUUID()}`;
    await tracked(site, organizationId);
    site.setPage(TRACKED, '<h1>Gone</h1>', 404);
    expect((await tracked(site, organizationId)).changeTracking).toMatchObject({ changeStatus: 'removed', previousScrapeAt: expect.any(String) });
    site.setPage(TRACKED, pricesPage('12 EUR', '9 EUR'));
    expect((await tracked(site, organizationId)).changeTracking.changeStatus).toBe('same');
  });
});

describe("a snapshot's text is kept in R2, its hash in D1", () => {
  const snapshot = (organizationId: string, markdown: string) => ({ organizationId, url: TRACKED, markdown, statusCode: 200 });
  const row = (organizationId: string) =>
    env.DB.prepare('SELECT content_hash, markdown FROM scrape_snapshots WHERE organization_id = ? AND url = ?').bind(organizationId, TRACKED).first<{ content_hash: string; markdown: string | null }>();
  const texts = async (organizationId: string) => {
    const listed = await env.RESULTS.list({ prefix: `snapshots/${organizationId}/` });
    return Promise.all(listed.objects.map(async (object) => (await env.RESULTS.get(object.key))!.text()));
  };

  it('stores no page text in D1, and diffs against the text in R2', async () => {
    const organizationId = `org_${crypto.randomUUID()}`;
    await trackChanges(env, snapshot(organizationId, '# Prices\n\nAdult: 12 EUR'), ['git-diff']);
    expect(await row(organizationId)).toEqual({ content_hash: await sha256Hex('# Prices\n\nAdult: 12 EUR'), markdown: null });
    expect(await texts(organizationId)).toEqual(['# Prices\n\nAdult: 12 EUR']);
    const changed = await trackChanges(env, snapshot(organizationId, '# Prices\n\nAdult: 14 EUR'), ['git-diff']);
    expect(changed.diff?.text).toContain('-Adult: 12 EUR\n+Adult: 14 EUR');
    expect(await texts(organizationId)).toEqual(['# Prices\n\nAdult: 14 EUR']);
  });

  it('compares with a text kept in its D1 row from before, then moves it to R2', async () => {
    const organizationId = `org_${crypto.randomUUID()}`;
    const old = '# Prices\n\nAdult: 10 EUR';
    await env.DB.prepare('INSERT INTO scrape_snapshots (organization_id, url, content_hash, markdown, scraped_at) VALUES (?, ?, ?, ?, ?)')
      .bind(organizationId, TRACKED, await sha256Hex(old), old, '2026-01-01T00:00:00.000Z')
      .run();
    // Unchanged: the text leaves D1 for R2 all the same.
    expect((await trackChanges(env, snapshot(organizationId, old), ['git-diff'])).changeStatus).toBe('same');
    expect(await row(organizationId)).toMatchObject({ markdown: null });
    const changed = await trackChanges(env, snapshot(organizationId, '# Prices\n\nAdult: 11 EUR'), ['git-diff']);
    expect(changed.diff?.text).toContain('-Adult: 10 EUR\n+Adult: 11 EUR');
  });

  it('puts back an unchanged text that is gone from R2 (a prune took the row while a scrape refreshed it), so the next change diffs', async () => {
    const organizationId = `org_${crypto.randomUUID()}`;
    await trackChanges(env, snapshot(organizationId, '# Prices\n\nAdult: 12 EUR'), []);
    const [listed] = (await env.RESULTS.list({ prefix: `snapshots/${organizationId}/` })).objects;
    await env.RESULTS.delete(listed!.key);
    expect((await trackChanges(env, snapshot(organizationId, '# Prices\n\nAdult: 12 EUR'), [])).changeStatus).toBe('same');
    expect(await texts(organizationId)).toEqual(['# Prices\n\nAdult: 12 EUR']);
    expect((await trackChanges(env, snapshot(organizationId, '# Prices\n\nAdult: 13 EUR'), ['git-diff'])).diff?.text).toContain('+Adult: 13 EUR');
  });

  it('gives the status without a diff when the text in R2 is not the one its row names (two scrapes at once)', async () => {
    const organizationId = `org_${crypto.randomUUID()}`;
    await trackChanges(env, snapshot(organizationId, '# Prices\n\nAdult: 12 EUR'), []);
    const [listed] = (await env.RESULTS.list({ prefix: `snapshots/${organizationId}/` })).objects;
    await env.RESULTS.put(listed!.key, '# Prices\n\nAdult: 99 EUR');
    const changed = await trackChanges(env, snapshot(organizationId, '# Prices\n\nAdult: 14 EUR'), ['git-diff', 'json']);
    expect(changed).toEqual({ previousScrapeAt: expect.any(String), changeStatus: 'changed', visibility: 'visible' });
  });
});

describe('the diffs', () => {
  it('keys sections by heading, ignores # inside code fences, and names added and removed sections', () => {
    const before = 'Intro text\n\n# Title\n\n## Install\n\n```bash\n# not a heading\nnpm i\n```\n\n## Old section\n\ngone soon';
    const after = 'Intro text\n\n# Title\n\n## Install\n\n```bash\n# not a heading\nnpm i --global\n```\n\n## New section\n\nfresh';
    expect(sectionChanges(before, after)).toEqual({
      Install: { previous: '```bash\n# not a heading\nnpm i\n```', current: '```bash\n# not a heading\nnpm i --global\n```' },
      'Old section': { previous: 'gone soon', current: null },
      'New section': { previous: null, current: 'fresh' },
    });
  });

  it('tells repeated headings apart', () => {
    expect(sectionChanges('## FAQ\n\na\n\n## FAQ\n\nb', '## FAQ\n\na\n\n## FAQ\n\nc')).toEqual({ 'FAQ (2)': { previous: 'b', current: 'c' } });
  });

  it('writes unified hunks with line numbers on both sides', () => {
    const diff = gitDiff('a\nb\nc', 'a\nB\nc\nd');
    expect(diff.text).toBe('@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d');
    expect(diff.json.files[0]!.chunks[0]!.changes.map((change) => change.type)).toEqual(['normal', 'del', 'add', 'normal', 'add']);
  });
});
