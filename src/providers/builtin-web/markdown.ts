import { highlightedCodeBlock, strikethrough, tables, taskListItems } from '@joplin/turndown-plugin-gfm';
import TurndownService from 'turndown';
import { ensureTableRows, type DomElement } from './dom';

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

/** GitHub-flavoured Markdown of a content container: ATX headings, fenced code with its language, tables. */
export function toMarkdown(container: DomElement): string {
  return converter().turndown(container as unknown as TurndownService.Node).trim();
}
