import { Parser } from 'htmlparser2';
import { ApiError } from '../../core/errors';
import type { PageAction } from '../../core/render';
import { parseDocument } from './dom';

/**
 * When the built-in provider renders a page in a browser instead of reading the HTML as served, and which
 * page actions it performs. Pure decisions, tested without a browser (test/builtin-web/render-policy.test.ts).
 */

/** What a request asks for that only a browser gives: any of these renders the page. */
export function browserAsks(input: { formats?: readonly unknown[]; actions?: readonly unknown[]; waitFor?: number; mobile?: boolean }): string[] {
  const asks: string[] = [];
  if (input.formats?.some((format) => typeof format === 'object' && format !== null && (format as { type?: unknown }).type === 'screenshot')) asks.push('the screenshot format');
  if (input.actions?.length) asks.push('actions');
  if (input.waitFor) asks.push('waitFor');
  if (input.mobile) asks.push('mobile');
  return asks;
}

/**
 * The "script-built page" heuristic: the first HTML shows almost no text and loads scripts. Visible text is
 * what sits in <body> outside script, style, noscript, template, svg and the like, whitespace collapsed;
 * below SCRIPT_BUILT_MAX_TEXT characters (a heading and a sentence) with at least one script (an external
 * one, a module, or inline code) the page is a shell its scripts fill in: a single-page app's
 * `<div id="root"></div>`, a "loading..." placeholder, a "please enable JavaScript" notice (inside noscript).
 * A page with real text is read as served even when it loads scripts: most server-rendered pages do.
 */
export const SCRIPT_BUILT_MAX_TEXT = 200;

const NOT_VISIBLE = new Set(['script', 'style', 'noscript', 'template', 'svg', 'head', 'title', 'iframe', 'object', 'canvas']);
const DATA_SCRIPT_TYPES = /^(application\/(ld\+)?json|text\/template|text\/x-template|importmap|speculationrules)$/i;

export function looksScriptBuilt(html: string): boolean {
  let text = 0;
  let scripts = 0;
  let hidden = 0;
  let scriptHasCode = false;
  let inScript = false;
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (NOT_VISIBLE.has(name)) hidden++;
        if (name !== 'script') return;
        const type = (attributes.type ?? '').trim();
        if (DATA_SCRIPT_TYPES.test(type)) return;
        if (attributes.src) scripts++;
        else {
          inScript = true;
          scriptHasCode = false;
        }
      },
      ontext(data) {
        if (inScript) {
          if (data.trim()) scriptHasCode = true;
          return;
        }
        if (hidden === 0) text += data.replace(/\s+/g, ' ').trim().length;
      },
      onclosetag(name) {
        if (name === 'script' && inScript) {
          inScript = false;
          if (scriptHasCode) scripts++;
        }
        if (NOT_VISIBLE.has(name) && hidden > 0) hidden--;
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.end(html);
  return scripts > 0 && text < SCRIPT_BUILT_MAX_TEXT;
}

/** Action types Firecrawl knows that the built-in renderer does not perform, and why. */
const REFUSED_ACTIONS: Record<string, string> = {
  executeJavascript: 'executeJavascript is not run by the built-in provider: it would run a caller\'s code in a browser this server hosts. Use a provider that runs it (WEB_PROVIDER=firecrawl).',
  pdf: 'pdf is not made by the built-in provider. Use the screenshot action or format, or WEB_PROVIDER=firecrawl.',
  generatePDF: 'generatePDF is not made by the built-in provider. Use the screenshot action or format, or WEB_PROVIDER=firecrawl.',
};

/** Key names the press action accepts besides a single printable character (a subset of the browser's). */
export const PRESSABLE_KEYS = new Set([
  'Enter', 'Tab', 'Escape', 'Backspace', 'Delete', 'Space', 'ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight',
  'Home', 'End', 'PageUp', 'PageDown', 'Insert', 'Shift', 'Control', 'Alt', 'Meta',
  'F1', 'F2', 'F3', 'F4', 'F5', 'F6', 'F7', 'F8', 'F9', 'F10', 'F11', 'F12',
]);

/**
 * The actions as the renderer performs them, after refusing (400, each named) the types it does not
 * perform, selectors that are not CSS and keys it does not know. The registry's schema has already
 * checked the shapes (Firecrawl's).
 */
export function checkActions(actions: readonly { type: string; [field: string]: unknown }[] | undefined): PageAction[] {
  const details = actionProblems(actions);
  if (details.length > 0) throw ApiError.validation(details);
  return (actions ?? []) as unknown as PageAction[];
}

/** What `checkActions` refuses, each named; empty when it would perform them all. */
export function actionProblems(actions: readonly { type: string; [field: string]: unknown }[] | undefined): { field: string; location: 'body'; message: string }[] {
  if (!actions?.length) return [];
  const probe = parseDocument('<p></p>');
  const details: { field: string; location: 'body'; message: string }[] = [];
  actions.forEach((action, index) => {
    const at = `actions[${index}]`;
    const refused = REFUSED_ACTIONS[action.type];
    if (refused) return void details.push({ field: `${at}.type`, location: 'body', message: refused });
    if (typeof action.selector === 'string') {
      try {
        probe.querySelectorAll(action.selector);
      } catch {
        details.push({ field: `${at}.selector`, location: 'body', message: `Not a valid CSS selector: ${action.selector}` });
      }
    }
    // The browser presses keys of a US keyboard: a character not on it (é, 字) is refused here, not thrown mid-render.
    if (action.type === 'press' && typeof action.key === 'string' && !PRESSABLE_KEYS.has(action.key) && !/^[\x20-\x7e]$/.test(action.key)) {
      details.push({ field: `${at}.key`, location: 'body', message: `A single printable ASCII character or one of ${[...PRESSABLE_KEYS].join(', ')}; type other text with a write action.` });
    }
  });
  return details;
}

/**
 * Ad and tracking hosts refused when blockAds is on (the default, as Firecrawl's): the networks that serve
 * most display ads and their measurement. A host matches itself and its subdomains. Not an ad blocker's
 * full list (tens of thousands of rules, kept by their projects); what it removes is the bulk of the
 * requests, and of the time, an ad-heavy page costs a render.
 */
const AD_HOSTS = [
  'doubleclick.net', 'googlesyndication.com', 'googleadservices.com', 'adservice.google.com', 'googletagservices.com',
  'google-analytics.com', 'googletagmanager.com', 'amazon-adsystem.com', 'adnxs.com', 'criteo.com', 'criteo.net',
  'taboola.com', 'outbrain.com', 'pubmatic.com', 'rubiconproject.com', 'openx.net', 'casalemedia.com', 'moatads.com',
  'scorecardresearch.com', 'quantserve.com', 'adsrvr.org', 'bidswitch.net', 'smartadserver.com', 'yieldmo.com',
  'advertising.com', 'media.net', 'sharethrough.com', 'teads.tv', 'zemanta.com', 'hotjar.com', 'connect.facebook.net',
  'ads-twitter.com', 'ads.linkedin.com', 'bat.bing.com',
];

export function isAdHost(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return AD_HOSTS.some((host) => name === host || name.endsWith(`.${host}`));
}
