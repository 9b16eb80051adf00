/**
 * The project's own documents hold to their own rules: decisions.md lists every section in its index ("add each
 * to the index"; six sections had gone unlisted by 2026-11-29), and every link to a heading, in the same file or
 * another of them, names a heading that exists. No stack: the files are read as they are.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/processes';

const DOCUMENTS = ['README.md', 'docs/decisions.md', 'docs/performance.md', 'docs/deploying.md'];

/** GitHub's anchor for a heading: lower case, every character but letters, digits, `_`, `-` and spaces dropped, spaces as `-`. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replaceAll(' ', '-');
}

function read(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

const anchors = new Map<string, Set<string>>();

/** The anchors of a document's headings, read once per document. */
function anchorsOf(path: string): Set<string> {
  let found = anchors.get(path);
  if (!found) anchors.set(path, (found = new Set([...read(path).matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchorOf(match[1]!.trim())))));
  return found;
}

describe('the documents', () => {
  it('reads headings as GitHub anchors them', () => {
    expect(anchorOf("A call's id sorts by time")).toBe('a-calls-id-sorts-by-time');
    expect(anchorOf('2026-11-29 (17:10-17:40 UTC): repeat A/B runs, garbage collection')).toBe('2026-11-29-1710-1740-utc-repeat-ab-runs-garbage-collection');
    expect(anchorOf('Rotating `KEY_ENCRYPTION_KEY`')).toBe('rotating-key_encryption_key');
  });

  it("decisions.md lists every section in its index, and the index lists no section that is not there", () => {
    const text = read('docs/decisions.md');
    const [, afterIndex = ''] = text.split(/^## Index$/m);
    const index = afterIndex.split(/^## /m)[0]!;
    const listed = [...index.matchAll(/\]\(#([^)]+)\)/g)].map((match) => match[1]!);
    const sections = [...text.matchAll(/^## (.+)$/gm)].map((match) => match[1]!.trim()).filter((heading) => heading !== 'Index');
    expect(sections.length).toBeGreaterThan(40);
    expect(sections.filter((heading) => !listed.includes(anchorOf(heading)))).toEqual([]);
    expect(listed.filter((anchor) => !sections.map(anchorOf).includes(anchor))).toEqual([]);
  });

  it.each(DOCUMENTS)('%s links only to headings that exist', (path) => {
    const text = read(path);
    const broken: string[] = [];
    for (const [, target = '', anchor = ''] of text.matchAll(/\]\(([\w./-]*\.md)?#([^)\s]+)\)/g)) {
      const file = target === '' ? path : join(dirname(path), target);
      if (!anchorsOf(file).has(anchor)) broken.push(`${target}#${anchor}`);
    }
    expect(broken).toEqual([]);
  });
});
