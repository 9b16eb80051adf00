import { parseHTML } from 'linkedom';

/**
 * The part of the DOM this provider uses, as linkedom implements it. The worker's type library has no
 * DOM (its `Element` is HTMLRewriter's), so the shapes are written here once.
 */
export interface DomNode {
  readonly nodeType: number;
  readonly nodeName: string;
  readonly textContent: string | null;
  readonly parentNode: DomNode | null;
  readonly childNodes: ArrayLike<DomNode>;
  cloneNode(deep?: boolean): DomNode;
  remove(): void;
}

export interface DomElement extends DomNode {
  readonly tagName: string;
  innerHTML: string;
  readonly outerHTML: string;
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  removeAttribute(name: string): void;
  querySelector(selectors: string): DomElement | null;
  querySelectorAll(selectors: string): ArrayLike<DomElement>;
  closest(selectors: string): DomElement | null;
  contains(other: DomNode): boolean;
  readonly firstElementChild: DomElement | null;
  readonly nextElementSibling: DomElement | null;
  readonly parentElement: DomElement | null;
  append(...nodes: DomNode[]): void;
  prepend(...nodes: DomNode[]): void;
}

export interface DomDocument extends DomNode {
  readonly documentElement: DomElement;
  readonly head: DomElement | null;
  readonly body: DomElement | null;
  readonly title: string;
  querySelector(selectors: string): DomElement | null;
  querySelectorAll(selectors: string): ArrayLike<DomElement>;
  createElement(tagName: string): DomElement;
}

/**
 * Parses a page. A fragment without an <html> element is wrapped first: linkedom builds no body for it.
 */
export function parseDocument(html: string): DomDocument {
  const whole = /<html[\s>]/i.test(html) ? html : `<!DOCTYPE html><html><head></head><body>${html}</body></html>`;
  return parseHTML(whole).document as unknown as DomDocument;
}

export function elements(list: ArrayLike<DomElement>): DomElement[] {
  return Array.from(list);
}

/**
 * How deep elements nest below `root` (its children are at depth 1). A walk from element to element
 * without a stack or a list of children (linkedom builds an array for each `childNodes` read), so a
 * page's depth never becomes the call stack's and a long page costs no allocation per element.
 */
export function elementDepth(root: DomElement): number {
  let deepest = 0;
  let depth = 1;
  let element = root.firstElementChild;
  while (element) {
    if (depth > deepest) deepest = depth;
    const child = element.firstElementChild;
    if (child) {
      element = child;
      depth++;
      continue;
    }
    // Up to the nearest ancestor (below root) with a next sibling.
    while (element !== root && !element.nextElementSibling) {
      element = element.parentElement!;
      depth--;
    }
    element = element === root ? null : element.nextElementSibling;
  }
  return deepest;
}

/**
 * linkedom has no `HTMLTableElement.rows`, which the GFM table rules read; this adds the standard
 * property (the table's own rows, not those of tables nested in it) to linkedom's table class, once.
 */
export function ensureTableRows(): void {
  const table = parseDocument('<table></table>').querySelector('table');
  const prototype = table ? Object.getPrototypeOf(table) : undefined;
  if (!prototype || Object.getOwnPropertyDescriptor(prototype, 'rows')) return;
  Object.defineProperty(prototype, 'rows', {
    configurable: true,
    get(this: DomElement) {
      return elements(this.querySelectorAll('tr')).filter((row) => row.closest('table') === this);
    },
  });
}

/** Text made safe to place between tags. */
export function escapeText(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}
