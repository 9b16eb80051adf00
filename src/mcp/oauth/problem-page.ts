import { html, raw } from 'hono/html';
import { randomHex } from '../../core/ids';
import type { AuthorizationProblem } from '../../services/oauth/authorization';

/** The dashboard's colours and type (src/app/assets/styles.ts), the few rules this one page needs. */
const STYLES = `
:root { --bg: #f7f7f9; --panel: #fff; --text: #16181d; --muted: #5d6472; --line: #e3e5ea; --danger: #c0262d; --mono: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; color-scheme: light dark; }
@media (prefers-color-scheme: dark) { :root { --bg: #0f1115; --panel: #171a21; --text: #e8eaf0; --muted: #9aa3b2; --line: #2a2f3a; --danger: #f87171; } }
body { margin: 0; background: var(--bg); color: var(--text); font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 30rem; margin: 4rem auto; padding: 0 1rem; }
.brand { display: flex; align-items: center; gap: .5rem; font-weight: 700; margin-bottom: 1rem; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 1.6rem; }
h1 { font-size: 1.3rem; margin: 0 0 .75rem; letter-spacing: -.01em; }
p { margin: 0 0 .75rem; overflow-wrap: anywhere; }
.muted { color: var(--muted); font-size: .92rem; margin: 0; }
code { font-family: var(--mono); font-size: .86em; color: var(--danger); }
`;

/**
 * What the person sees when /oauth/authorize refuses a request before they have decided anything: what
 * was wrong, in a page of Sluice's own, with no link or redirect to the client (whose redirect URI may
 * be anyone's). Status 400 (429 with Retry-After for a request that came too often), never cached, no script; its
 * one stylesheet is allowed by a nonce.
 */
export async function authorizationProblemPage(problem: AuthorizationProblem): Promise<Response> {
  const nonce = randomHex(16);
  const who = problem.clientName ?? 'This app';
  const body = html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer"><title>Cannot connect · Sluice</title><style nonce="${nonce}">${raw(STYLES)}</style></head>
<body><main>
<div class="brand"><svg width="26" height="26" viewBox="0 0 32 32" aria-hidden="true"><rect width="32" height="32" rx="8" fill="#4f46e5"/><path d="M7 11c3-3 6 3 9 0s6 3 9 0M7 16c3-3 6 3 9 0s6 3 9 0M7 21c3-3 6 3 9 0s6 3 9 0" fill="none" stroke="#fff" stroke-width="2.2" stroke-linecap="round"/></svg> Sluice</div>
<div class="card">
<h1>${who} cannot connect to Sluice</h1>
<p>${problem.description}</p>
<p class="muted">Error <code>${problem.error}</code>. Nothing was sent back to the app. Start connecting again from the app; if this keeps happening, tell its developer what this page says.</p>
</div>
</main></body>
</html>`;
  return new Response((await body).toString(), {
    status: problem.retryAfter === undefined ? 400 : 429,
    headers: {
      ...(problem.retryAfter === undefined ? {} : { 'retry-after': String(problem.retryAfter) }),
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': `default-src 'none'; style-src 'nonce-${nonce}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    },
  });
}
