import { structuredPatch } from 'diff';

/** A line of a diff chunk, as Firecrawl's (parse-diff's) structure has it. */
export type DiffLine =
  | { type: 'add'; ln: number; content: string }
  | { type: 'del'; ln: number; content: string }
  | { type: 'normal'; ln1: number; ln2: number; content: string };

export interface GitDiff {
  /** Unified-diff hunks of the Markdown, `@@ -a,b +c,d @@` headers included. */
  text: string;
  json: { files: { from: string; to: string; chunks: { content: string; changes: DiffLine[] }[] }[] };
}

/** Where a section's text changed: `previous` null for a new section, `current` null for a removed one. */
export type SectionChanges = Record<string, { previous: string | null; current: string | null }>;

/** The line diff of two Markdown texts (git-diff mode). */
export function gitDiff(previous: string, current: string): GitDiff {
  const patch = structuredPatch('previous', 'current', withFinalNewline(previous), withFinalNewline(current), '', '', { context: 3 });
  const chunks = patch.hunks.map((hunk) => {
    const header = `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`;
    let oldLine = hunk.oldStart;
    let newLine = hunk.newStart;
    const changes: DiffLine[] = [];
    for (const line of hunk.lines) {
      const content = line.slice(1);
      if (line.startsWith('+')) changes.push({ type: 'add', ln: newLine++, content });
      else if (line.startsWith('-')) changes.push({ type: 'del', ln: oldLine++, content });
      else if (line.startsWith(' ')) changes.push({ type: 'normal', ln1: oldLine++, ln2: newLine++, content });
    }
    return { header, lines: hunk.lines.filter((line) => !line.startsWith('\\')), changes };
  });
  return {
    text: chunks.map((chunk) => [chunk.header, ...chunk.lines].join('\n')).join('\n'),
    json: { files: [{ from: 'previous', to: 'current', chunks: chunks.map((chunk) => ({ content: chunk.header, changes: chunk.changes })) }] },
  };
}

const BEFORE_FIRST_HEADING = '(before the first heading)';

/**
 * The sections whose text changed (json mode): a section is a heading with what follows it up to the
 * next heading, keyed by the heading's text. Without a language model there is no schema-driven
 * extraction, so the page's own structure supplies the fields.
 */
export function sectionChanges(previous: string, current: string): SectionChanges {
  const before = sections(previous);
  const after = sections(current);
  const changes: SectionChanges = {};
  for (const key of new Set([...before.keys(), ...after.keys()])) {
    const was = before.get(key) ?? null;
    const is = after.get(key) ?? null;
    if (was !== is) changes[key] = { previous: was, current: is };
  }
  return changes;
}

function sections(markdown: string): Map<string, string> {
  const found = new Map<string, string>();
  let key = BEFORE_FIRST_HEADING;
  let lines: string[] = [];
  let fence: string | undefined;
  const close = () => {
    const text = lines.join('\n').trim();
    if (text || key !== BEFORE_FIRST_HEADING) found.set(uniqueKey(found, key), text);
  };
  for (const line of markdown.split('\n')) {
    const fenceMark = /^\s*(```|~~~)/.exec(line)?.[1];
    if (fenceMark && (!fence || fence === fenceMark)) fence = fence ? undefined : fenceMark;
    const heading = fence ? undefined : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) {
      lines.push(line);
      continue;
    }
    close();
    key = heading || '(untitled heading)';
    lines = [];
  }
  close();
  return found;
}

function uniqueKey(found: Map<string, string>, key: string): string {
  if (!found.has(key)) return key;
  let count = 2;
  while (found.has(`${key} (${count})`)) count++;
  return `${key} (${count})`;
}

function withFinalNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}
