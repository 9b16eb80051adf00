import { highlightedCodeBlock, strikethrough, tables, taskListItems } from '@joplin/turndown-plugin-gfm';
import TurndownService from 'turndown';
import { normalizeUpstream } from '../normalize';
import { elementDepth, ensureTableRows, type DomElement } from './dom';
import { PAGE_BOUNDS } from './page-bounds';

/** Block content a GFM table cell cannot hold: such a table stays HTML inside the Markdown. */
const BLOCKS_IN_CELLS = 'ul, ol, h1, h2, h3, h4, h5, h6, hr, blockquote, pre, table';

let service: TurndownService | undefined;

/** One converter per isolate: building the rule set costs more than converting a small page. */
function converter(): TurndownService {
  if (service) return service;
  ensureTableRows();
  const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '_', strongDelimiter: '**' });
  turndown.use([highlightedCodeBlock, strikethrough, tables, taskListItems]);
  // Added last, so it is asked first: the plugin would keep such a table inside its own editor's wrapper.
  turndown.addRule('tableWithBlocks', {
    filter: (node) => node.nodeName === 'TABLE' && (node as unknown as DomElement).querySelector(BLOCKS_IN_CELLS) !== null,
    replacement: (_content, node) => `\n\n${(node as unknown as DomElement).outerHTML}\n\n`,
  });
  service = turndown;
  return turndown;
}

/**
 * GitHub-flavoured Markdown of a content container: ATX headings, fenced code with its language, tables.
 * The container is used up: its whitespace is collapsed in place.
 */
export function toMarkdown(container: DomElement): string {
  // turndown recurses once per level: the depth is bounded here, whatever built the tree, so it cannot overflow the stack.
  const depth = elementDepth(container);
  if (depth > PAGE_BOUNDS.maxDepth) {
    throw normalizeUpstream.rejected('The built-in web provider', `the content nests elements ${depth} deep, more than the ${PAGE_BOUNDS.maxDepth} it converts to Markdown`);
  }
  // turndown deep-copies what it is given and collapses whitespace in the copy. The container is made for
  // this conversion and nothing reads it after, so turndown gets it without the copy: for a 200 KB page the
  // copy was a third of the conversion's time (docs/decisions.md, "Hot-path CPU, fourth pass").
  Object.defineProperty(container, 'cloneNode', { value: () => container });
  return converter().turndown(container as unknown as TurndownService.Node).trim();
}
