// The browser code (src/app/browser, src/app/pages/*.browser.ts), bundled by scripts/dashboard-script.mjs.
import SCRIPT from './dashboard-script.js';
import { STYLES } from './styles';

/** FNV-1a, enough to give each version of an asset its own URL so it can be cached for a year. */
function fingerprint(text: string): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193);
  return (hash >>> 0).toString(16).padStart(8, '0');
}

export const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="8" fill="#4f46e5"/><path d="M7 11c3-3 6 3 9 0s6 3 9 0M7 16c3-3 6 3 9 0s6 3 9 0M7 21c3-3 6 3 9 0s6 3 9 0" fill="none" stroke="#fff" stroke-width="2.2" stroke-linecap="round"/></svg>`;

export const ASSETS = {
  css: { path: `/assets/app.${fingerprint(STYLES)}.css`, body: STYLES, type: 'text/css; charset=utf-8' },
  js: { path: `/assets/app.${fingerprint(SCRIPT)}.js`, body: SCRIPT, type: 'text/javascript; charset=utf-8' },
  favicon: { path: `/assets/favicon.${fingerprint(FAVICON)}.svg`, body: FAVICON, type: 'image/svg+xml' },
} as const;
