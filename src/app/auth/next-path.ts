/** Any origin will do: a path is safe when resolving it against one never leaves it. */
const PROBE = 'https://dashboard.invalid';

/**
 * Where sign-in and sign-up may send the browser afterwards: a path of this site, or null. It must start
 * with one `/` (`//host` and `/\host` name another origin), carry no control character or space, and
 * still be on this origin once a browser's URL parser has had its way with it (it drops tabs and
 * newlines, so `/<tab>/evil.example` would become `//evil.example`).
 */
export function safeNextPath(next: string | null | undefined): string | null {
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return null;
  if (/[\u0000-\u0020\u007f]/.test(next)) return null;
  return new URL(next, PROBE).origin === PROBE ? next : null;
}
