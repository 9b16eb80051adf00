/** The dashboard's one stylesheet, served by the worker itself at /assets/app.css (no CDN, works offline). */
export const STYLES = `
:root {
  --bg: #f7f7f9; --panel: #ffffff; --text: #16181d; --muted: #5d6472; --line: #e3e5ea; --soft: #f0f1f4;
  --accent: #4f46e5; --accent-text: #ffffff; --accent-soft: #eef0ff; --danger: #c0262d; --danger-soft: #fdeced;
  --ok: #197a48; --ok-soft: #e6f5ec; --warn: #8a5a00; --warn-soft: #fff6e0; --focus: #6366f1;
  --radius: 10px; --shadow: 0 1px 2px rgba(16, 24, 40, .05), 0 1px 3px rgba(16, 24, 40, .06);
  --mono: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace;
  color-scheme: light dark;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0f1115; --panel: #171a21; --text: #e8eaf0; --muted: #9aa3b2; --line: #2a2f3a; --soft: #1f232c;
    --accent: #818cf8; --accent-text: #0f1115; --accent-soft: #24264a; --danger: #f87171; --danger-soft: #3a1d20;
    --ok: #4ade80; --ok-soft: #16301f; --warn: #fbbf24; --warn-soft: #33290f; --focus: #a5b4fc;
    --shadow: none;
  }
}
* { box-sizing: border-box; }
/* What the script hides stays hidden whatever display a class gives it. */
[hidden] { display: none !important; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; background: var(--bg); color: var(--text); font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
/* A link is underlined, so it is told from the words around it by more than its colour (WCAG 1.4.1); the navigation, the brand and a link drawn as a button are told by their place and shape. */
a { color: var(--accent); text-decoration: underline; text-decoration-thickness: from-font; text-underline-offset: .15em; }
a:hover { text-decoration-thickness: 2px; }
/* The focus ring stands 3:1 against the panel and the page (WCAG 1.4.11); the light scheme's #818cf8 stood 2.98:1 on white. */
:focus-visible { outline: 2px solid var(--focus); outline-offset: 2px; border-radius: 4px; }
h1 { font-size: 1.45rem; margin: 0 0 .25rem; letter-spacing: -.01em; }
h2 { font-size: 1.05rem; margin: 0 0 .75rem; }
p { margin: 0 0 .75rem; }
code, pre, .mono { font-family: var(--mono); font-size: .86em; overflow-wrap: anywhere; }
/* A command or a config is copied as it is: its lines kept whole, scrolled sideways where they are long, never broken mid-word. */
pre { background: var(--soft); border: 1px solid var(--line); border-radius: 8px; padding: .75rem .9rem; overflow-x: auto; margin: 0; white-space: pre; overflow-wrap: normal; }
.muted { color: var(--muted); }
.gap-top { margin-top: .75rem; }
.nowrap { white-space: nowrap; }
.small { font-size: .85rem; }
.skip { text-decoration: none; position: absolute; left: -999px; top: 0; background: var(--panel); padding: .5rem 1rem; z-index: 10; }
.skip:focus { left: 1rem; top: 1rem; }

/* Shell: a sidebar beside the page on wide screens, a bar above it on narrow ones. */
.shell { display: grid; grid-template-columns: 248px 1fr; min-height: 100vh; }
/* The sidebar is sticky at the viewport's height, scrolling itself on a short screen so its foot stays reachable; its column is painted on the shell so it runs the page's whole length. */
.shell { background: linear-gradient(90deg, var(--panel) 247px, var(--line) 247px 248px, transparent 248px); }
.sidebar { background: var(--panel); border-right: 1px solid var(--line); padding: 1.1rem .9rem; display: flex; flex-direction: column; gap: 1rem; position: sticky; top: 0; height: 100vh; overflow-y: auto; }
.brand { text-decoration: none; display: flex; align-items: center; gap: .55rem; font-weight: 700; font-size: 1.08rem; color: var(--text); padding: 0 .35rem; }
.brand:hover { text-decoration: none; }
.brand svg { flex: none; }
.switcher label { display: block; font-size: .75rem; text-transform: uppercase; letter-spacing: .06em; color: var(--muted); margin: 0 .35rem .3rem; }
.switcher select { width: 100%; }
.nav { display: flex; flex-direction: column; gap: 2px; }
.nav a { text-decoration: none; color: var(--text); padding: .45rem .6rem; border-radius: 8px; display: flex; align-items: center; gap: .6rem; }
.nav a:hover { background: var(--soft); text-decoration: none; }
.nav a[aria-current="page"] { background: var(--accent-soft); color: var(--accent); font-weight: 600; }
.nav svg { flex: none; opacity: .85; }
.sidebar-foot { margin-top: auto; border-top: 1px solid var(--line); padding-top: .8rem; display: flex; flex-direction: column; gap: .4rem; }
.who { padding: 0 .35rem; overflow: hidden; }
.who strong, .who span { display: block; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.main { padding: 2rem 2.5rem 4rem; max-width: 1100px; width: 100%; min-width: 0; }
.page-head { display: flex; justify-content: space-between; align-items: flex-start; gap: 1rem; margin-bottom: 1.5rem; flex-wrap: wrap; }
@media (max-width: 960px) {
  .shell { grid-template-columns: 1fr; background: none; }
  .sidebar { position: static; height: auto; overflow-y: visible; border-right: 0; border-bottom: 1px solid var(--line); }
  .nav { flex-direction: row; flex-wrap: wrap; }
  .sidebar-foot { flex-direction: row; align-items: center; justify-content: space-between; }
  .main { padding: 1.25rem 1rem 3rem; }
}

/* Building blocks */
.card { background: var(--panel); border: 1px solid var(--line); border-radius: var(--radius); box-shadow: var(--shadow); padding: 1.25rem; margin-bottom: 1.25rem; }
.card > h2:first-child { margin-top: 0; }
.grid { display: grid; gap: 1rem; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); margin-bottom: 1.25rem; }
.stat { background: var(--panel); border: 1px solid var(--line); border-radius: var(--radius); padding: 1rem 1.1rem; box-shadow: var(--shadow); }
.stat .label { color: var(--muted); font-size: .8rem; text-transform: uppercase; letter-spacing: .05em; }
.stat .value { font-size: 1.5rem; font-weight: 650; margin-top: .2rem; font-variant-numeric: tabular-nums; }
.row { display: flex; gap: .6rem; align-items: flex-start; flex-wrap: wrap; }
.row .grow { flex: 1 1 220px; }
/* Inputs and the button on one line whatever sits under a field (a hint, an error): the button drops by a label's height. */
.row > button[type="submit"] { margin-top: calc(.9rem * 1.5 + .3rem); }
.row > .form-error, form.inline > .form-error { flex-basis: 100%; margin: 0; }
/* On a phone a growing field takes its own line, so the button after it starts a line of its own, no label beside it. */
@media (max-width: 600px) {
  .row > .grow { flex-basis: 100%; }
  .row > .grow + button[type="submit"] { margin-top: 0; }
}
.stack > * + * { margin-top: .9rem; }
.notice { border-radius: var(--radius); padding: .8rem 1rem; margin-bottom: 1.25rem; border: 1px solid; }
.notice.warn { background: var(--warn-soft); color: var(--warn); border-color: color-mix(in srgb, var(--warn) 30%, transparent); }
.notice.info { background: var(--accent-soft); color: var(--text); border-color: color-mix(in srgb, var(--accent) 25%, transparent); }
.steps { margin: 0; padding-left: 1.25rem; }
.steps li { margin-bottom: .45rem; }

/* Forms */
label { font-weight: 550; font-size: .9rem; }
.field { display: flex; flex-direction: column; gap: .3rem; }
/* Inputs, selects and buttons one height (a select ignores line-height; an input does not), so a row of them lines up. */
input, select { font: inherit; line-height: 1.25; color: var(--text); background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: .5rem .65rem; min-height: 2.5rem; }
input[type="checkbox"] { min-height: 0; padding: 0; width: 1rem; height: 1rem; margin: 0; flex: none; accent-color: var(--accent); }
input:focus, select:focus { outline: 2px solid var(--focus); outline-offset: 0; border-color: transparent; }
input[aria-invalid="true"], textarea[aria-invalid="true"] { border-color: var(--danger); }
textarea { font: inherit; color: var(--text); background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: .5rem .65rem; resize: vertical; }
textarea:focus { outline: 2px solid var(--focus); outline-offset: 0; border-color: transparent; }
textarea.mono, input.mono { font-family: var(--mono); font-size: .88rem; }
.query-result .table-wrap { margin: .5rem 0 0; border: 1px solid var(--line); border-radius: 8px; max-height: 420px; overflow: auto; }
.query-result th:first-child, .query-result td:first-child { border-left: 0; }
.query-result td.null { color: var(--muted); font-style: italic; }
.hint { font-size: .8rem; color: var(--muted); }
/* A field's error says what its hint said, and more: the hint gives way (sign-up said "At least 10 characters." twice). */
.field:has(.field-error:not(:empty)) .hint { display: none; }
.field-error { font-size: .8rem; color: var(--danger); }
.field-error:empty { display: none; }
.form-error { background: var(--danger-soft); color: var(--danger); border-radius: 8px; padding: .55rem .75rem; font-size: .9rem; }
.form-error:empty { display: none; }
button, .button { text-decoration: none; font: inherit; line-height: 1.25; font-weight: 600; cursor: pointer; border-radius: 8px; padding: .5rem .95rem; min-height: 2.5rem; border: 1px solid transparent; background: var(--accent); color: var(--accent-text); display: inline-flex; align-items: center; gap: .4rem; white-space: nowrap; }
button:hover, .button:hover { filter: brightness(1.07); text-decoration: none; }
button[disabled] { opacity: .6; cursor: progress; }
button.secondary { background: var(--panel); color: var(--text); border-color: var(--line); }
button.secondary:hover { background: var(--soft); filter: none; }
button.danger { background: var(--panel); color: var(--danger); border-color: color-mix(in srgb, var(--danger) 40%, transparent); }
button.danger:hover { background: var(--danger-soft); filter: none; }
button.small { padding: .25rem .6rem; min-height: 30px; font-size: .85rem; }
button.link { background: none; border: 0; color: var(--muted); padding: .25rem .35rem; min-height: 0; font-weight: 500; }
button.link:hover { color: var(--text); }

/* Tables */
/* A table runs to its card's edges; at the card's end it closes it, elsewhere it keeps a gap to what follows and to a form above it. */
.table-wrap { overflow-x: auto; margin: 0 -1.25rem -1.25rem; }
.table-wrap:not(:last-child) { margin-bottom: 1rem; }
form + .table-wrap { margin-top: 1rem; }
table { width: 100%; border-collapse: collapse; font-size: .92rem; }
th, td { text-align: left; padding: .6rem 1.25rem; border-top: 1px solid var(--line); vertical-align: middle; }
th { font-size: .75rem; text-transform: uppercase; letter-spacing: .05em; color: var(--muted); font-weight: 600; background: var(--soft); }
td code { overflow-wrap: normal; white-space: nowrap; }
/* A long URL or id in a table breaks where it must, so the columns after it stay on the screen. */
td code.breaks { white-space: normal; overflow-wrap: anywhere; }
tbody th { text-transform: none; letter-spacing: normal; font-size: .92rem; color: var(--text); background: none; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.actions { text-align: right; white-space: nowrap; }
td.actions button + button { margin-left: .35rem; }
div.actions { display: flex; gap: .35rem; flex-wrap: wrap; justify-content: flex-end; }
/* A key's limit, set in its own row: a narrow figure and its button side by side, the error below. */
.limit-form { justify-content: flex-end; align-items: center; }
.limit-form input { width: 7.5rem; min-height: 30px; padding: .25rem .5rem; }
.limit-inputs { display: inline-flex; align-items: center; gap: .6rem; }
.limit-form .form-error { flex-basis: 100%; white-space: normal; text-align: left; }
.badge { display: inline-block; border-radius: 999px; padding: .05rem .55rem; font-size: .78rem; font-weight: 600; white-space: nowrap; }
.badge.ok { background: var(--ok-soft); color: var(--ok); }
.badge.off { background: var(--danger-soft); color: var(--danger); }
.badge.plain { background: var(--soft); color: var(--muted); }
.badge.warn { background: var(--warn-soft); color: var(--warn); }
.requirement { border-top: 1px solid var(--line); margin-top: 1rem; padding-top: 1rem; }
tr.revoked td:not(.actions) { color: var(--muted); }
tr.current th, tr.current td { background: var(--accent-soft); }
.compare th.current, .compare td.current { background: var(--accent-soft); }
.compare thead th { text-transform: none; letter-spacing: normal; font-size: .85rem; color: var(--text); vertical-align: bottom; }
.compare thead .badge { display: table; margin: .3rem 0 0 auto; }
.compare td, .compare th { padding-left: .9rem; padding-right: .9rem; }
/* On a phone the plans scroll sideways under their terms, which stay in place. */
@media (max-width: 600px) {
  .compare th:first-child { position: sticky; left: 0; z-index: 1; background: var(--panel); min-width: 7.5rem; max-width: 9rem; box-shadow: inset -1px 0 var(--line); }
  .compare thead th:first-child { background: var(--soft); }
  .compare td, .compare th { padding-left: .75rem; padding-right: .75rem; }
}
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); clip-path: inset(50%); white-space: nowrap; }
form.inline { display: flex; gap: .4rem; align-items: center; flex-wrap: wrap; }
form.inline select { min-height: 30px; padding: .2rem .4rem; }
.empty { color: var(--muted); padding: 1.5rem 1.25rem; text-align: center; border-top: 1px solid var(--line); }
.secret { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; }
.secret code { background: var(--soft); border: 1px solid var(--line); border-radius: 6px; padding: .3rem .5rem; word-break: break-all; }

/* Charts, drawn by the server: bars are SVG stretched to their box, labels HTML text at the page's size. */
.chart { margin: 0; font-size: .8rem; color: var(--muted); font-variant-numeric: tabular-nums; }
.chart .bar { fill: var(--accent); }
.chart .bar:hover { opacity: .8; }
.chart .grid-line { stroke: var(--line); stroke-width: 1; }
.daily { display: grid; grid-template-columns: auto minmax(0, 1fr); grid-template-rows: 200px auto; column-gap: .5rem; padding-right: .9rem; }
/* Each value sits on its grid line: the column reaches half a line past the plot at either end. */
.chart-axis { display: flex; flex-direction: column; justify-content: space-between; text-align: right; line-height: 1; margin: -.5em 0; }
.chart-plot { display: block; width: 100%; height: 100%; overflow: visible; }
.chart-dates { grid-column: 2; display: flex; margin-top: .4rem; }
.chart-dates span { flex: 1 1 0; min-width: 0; display: flex; justify-content: center; white-space: nowrap; }
.operations { display: grid; grid-template-columns: minmax(0, max-content) minmax(5rem, 1fr) max-content; gap: .55rem .75rem; align-items: center; }
.operation-row { display: contents; }
.operation-name { color: var(--text); text-align: right; font-size: .85rem; }
.operation-bar { display: block; width: 100%; height: 16px; }
.operation-value { color: var(--text); }
@media (max-width: 600px) {
  .daily { grid-template-rows: 150px auto; }
  .chart-dates .minor { visibility: hidden; }
  .operations { grid-template-columns: minmax(0, 1fr) max-content; row-gap: .2rem; }
  .operation-name { grid-column: 1 / -1; text-align: left; margin-top: .4rem; }
}

/* Dialogs */
dialog { border: 1px solid var(--line); border-radius: 14px; padding: 1.4rem; width: min(560px, calc(100vw - 2rem)); background: var(--panel); color: var(--text); box-shadow: 0 20px 50px rgba(0, 0, 0, .25); }
dialog::backdrop { background: rgba(15, 17, 21, .45); }
dialog h2 { margin-bottom: .5rem; }
dialog .buttons { display: flex; justify-content: flex-end; gap: .5rem; margin-top: 1.1rem; }

/* Sign-in and sign-up */
.auth { min-height: 100vh; display: grid; place-items: center; padding: 2rem 1rem; }
.auth-card { width: min(420px, 100%); }
.auth-card .brand { justify-content: center; margin-bottom: 1.25rem; font-size: 1.25rem; }
.auth-card .card { padding: 1.6rem; }
.auth-card h1 { text-align: center; margin-bottom: .3rem; }
.auth-card .lede { text-align: center; color: var(--muted); margin-bottom: 1.25rem; }
.auth-card button[type="submit"] { width: 100%; justify-content: center; }
.auth-foot { text-align: center; margin-top: 1rem; color: var(--muted); }
.auth-card .centered { text-align: center; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: .4rem 1rem; margin: 0 0 1.25rem; font-size: .9rem; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; overflow-wrap: anywhere; }
.auth-card .buttons { display: flex; gap: .75rem; }
.tool-group { border: 1px solid var(--line); border-radius: var(--radius); padding: .6rem .9rem; margin: 0 0 .75rem; }
.tool-group legend { font-weight: 600; padding: 0 .3rem; }
.check { display: inline-flex; align-items: center; gap: .45rem; font-weight: 400; }
.tool-group label { display: inline-flex; align-items: center; gap: .35rem; margin: .2rem 1rem .2rem 0; font-weight: 400; }

/* The MCP servers page's tools: a source per box, its tools folded away under a one-line summary each. */
.tool-source { border: 1px solid var(--line); border-radius: var(--radius); padding: .75rem .9rem; margin-inline: 0; min-width: 0; }
.tool-source-head { display: flex; align-items: center; justify-content: space-between; gap: .5rem 1rem; flex-wrap: wrap; }
.tool-source-head label { display: inline-flex; align-items: center; gap: .5rem; font-size: 1rem; }
.tool-source > p { margin: .3rem 0 .4rem; }
.tool-source summary { cursor: pointer; color: var(--accent); font-size: .9rem; font-weight: 550; }
.tool-list { list-style: none; margin: .6rem 0 0; padding: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 300px), 1fr)); gap: .35rem 1rem; }
.tool-list label { display: flex; align-items: flex-start; gap: .5rem; font-weight: 400; padding: .3rem 0; }
.tool-list input { margin-top: .2rem; }
.tool-list label > span { min-width: 0; display: flex; flex-direction: column; }
.tool-summary { color: var(--muted); font-size: .85rem; }
.card > .facts:last-child { margin-bottom: 0; }

/* Two-factor sign-in: the QR code beside its key and the code field, stacked on a phone; recovery codes in two columns. */
.two-factor-setup { display: flex; gap: 1rem 1.5rem; align-items: flex-start; flex-wrap: wrap; margin-top: .75rem; }
.two-factor-setup > .stack { flex: 1 1 260px; min-width: 0; }
.qr { flex: none; width: 176px; height: 176px; border: 1px solid var(--line); border-radius: 8px; overflow: hidden; background: #fff; }
.qr svg { display: block; width: 100%; height: 100%; }
.secret-key { word-break: break-all; }
.recovery-codes { columns: 2; column-gap: 2rem; font-size: 1rem; line-height: 1.7; max-width: 22rem; }
details.fold { margin-top: .75rem; }
details.fold > p { margin: .5rem 0 0; }
details.fold summary { cursor: pointer; color: var(--accent); font-size: .9rem; font-weight: 550; }
details.fold form { margin-top: .75rem; }

/* The Jobs page: a progress bar per job, the CSV's columns mapped to the operation's fields. */
.job-progress { min-width: 180px; }
/*
 * A list (DataTable in pages/table.tsx) is a table while its card gives it 56rem, the width its widest list
 * needs with room to spare (a webhook's deliveries, about 880 px); in a narrower card each row is a block,
 * so no column starts off the card. The first cell names the row and needs no label; the others stand under
 * (or, on a phone, beside) their column's name; the row's buttons come last. The header stays for screen
 * readers only. It is the card's width that is asked, not the window's: above 960 px the sidebar takes 248 px
 * of the window, and a window breakpoint would have to know it (at 821 px a card was narrower than at 820).
 */
.table-wrap { container-type: inline-size; }
@container (width < 56rem) {
  table.stacks-when-narrow, table.stacks-when-narrow tbody { display: block; }
  table.stacks-when-narrow thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); clip-path: inset(50%); white-space: nowrap; }
  /* A tablet's row: its cells side by side, in columns that line up from row to row, each under its name. */
  table.stacks-when-narrow tr { display: grid; grid-template-columns: repeat(auto-fill, minmax(13rem, 1fr)); gap: .5rem 1.5rem; align-items: start; border-top: 1px solid var(--line); padding: .75rem 1.25rem; }
  table.stacks-when-narrow tr.current { background: var(--accent-soft); }
  table.stacks-when-narrow td { display: block; border-top: 0; padding: 0; text-align: left; min-width: 0; background: none; }
  table.stacks-when-narrow td, table.stacks-when-narrow td code { white-space: normal; overflow-wrap: anywhere; }
  table.stacks-when-narrow :is(td:first-child, td.actions) { grid-column: 1 / -1; }
  table.stacks-when-narrow td.wide { grid-column: span 2; }
  table.stacks-when-narrow td[data-label]:not(:first-child)::before { content: attr(data-label); display: block; color: var(--muted); font-size: .72rem; font-weight: 600; line-height: 1.38rem; text-transform: uppercase; letter-spacing: .05em; }
  table.stacks-when-narrow td:first-child { font-weight: 600; }
  table.stacks-when-narrow td:first-child :is(.muted, code, .small) { font-weight: 400; }
  table.stacks-when-narrow td.actions:empty { display: none; }
  table.stacks-when-narrow :is(div.actions, .limit-form) { justify-content: flex-start; }
  table.stacks-when-narrow .job-progress { min-width: 0; }
}
/* A phone's row: its cells one under another, each beside its name. */
@container (width < 36rem) {
  table.stacks-when-narrow tr { display: block; padding: .5rem 0; }
  table.stacks-when-narrow td { padding: .2rem 1.25rem; }
  /* The label floats in the cell's left padding; the cell (its own formatting context) grows to a label of two lines. */
  table.stacks-when-narrow td[data-label]:not(:first-child) { display: flow-root; padding-left: 7.5rem; }
  table.stacks-when-narrow td[data-label]:not(:first-child)::before { float: left; width: 5.75rem; margin-left: -6.25rem; }
  table.stacks-when-narrow td.actions { padding-top: .4rem; }
}
.job-progress progress { appearance: none; width: 100%; height: .6rem; border: 0; border-radius: 999px; background: var(--soft); overflow: hidden; display: block; margin: .2rem 0 .25rem; }
.job-progress progress::-webkit-progress-bar { background: var(--soft); border-radius: 999px; }
.job-progress progress::-webkit-progress-value { background: var(--accent); border-radius: 999px; }
.job-progress progress::-moz-progress-bar { background: var(--accent); border-radius: 999px; }
.job-fields { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 240px), 1fr)); gap: .5rem 1rem; }
`;
