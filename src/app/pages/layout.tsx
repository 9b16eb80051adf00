import { raw } from 'hono/html';
import type { Child, FC } from 'hono/jsx';
import { ASSETS } from '../assets';
import type { WorkspacePage, WorkspaceProps } from './page';

export const Document: FC<{ title: string; children: Child }> = ({ title, children }) => (
  <>
    {raw('<!doctype html>')}
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} · Sluice`}</title>
        <link rel="icon" href={ASSETS.favicon.path} type="image/svg+xml" />
        <link rel="stylesheet" href={ASSETS.css.path} />
        <script src={ASSETS.js.path} defer></script>
      </head>
      <body>{children}</body>
    </html>
  </>
);

export const Logo: FC = () => (
  <svg width="26" height="26" viewBox="0 0 32 32" aria-hidden="true">
    <rect width="32" height="32" rx="8" fill="#4f46e5" />
    <path d="M7 11c3-3 6 3 9 0s6 3 9 0M7 16c3-3 6 3 9 0s6 3 9 0M7 21c3-3 6 3 9 0s6 3 9 0" fill="none" stroke="#fff" stroke-width="2.2" stroke-linecap="round" />
  </svg>
);

/** A page outside the shell (sign-in, consent, an invitation, an email's link): the brand above its card. */
export const CardPage: FC<{ title: string; children: Child }> = ({ title, children }) => (
  <Document title={title}>
    <main class="auth">
      <div class="auth-card">
        <a class="brand" href="/">
          <Logo /> Sluice
        </a>
        {children}
      </div>
    </main>
  </Document>
);

/** What a link from an email did, or why it did nothing: a card page with a heading, a sentence and where to go next (the dashboard unless said). */
export const OutcomePage: FC<{ title: string; heading: string; lede: Child; next?: { href: string; label: string } }> = ({ title, heading, lede, next = { href: '/', label: 'Go to the dashboard' } }) => (
  <CardPage title={title}>
    <div class="card stack">
      <h1>{heading}</h1>
      <p class="lede">{lede}</p>
      <p class="centered">
        <a class="button" href={next.href}>
          {next.label}
        </a>
      </p>
    </div>
  </CardPage>
);

/**
 * The card of a page an emailed link opens: what its one button will do, and the button, which posts the link's token
 * to `api` and then goes to `then`. Opening the page changes nothing (mail scanners open every link of a message).
 */
export const EmailLinkCard: FC<{ title: string; lede: Child; api: string; then: string; token: string; button: Child }> = ({ title, lede, api, then, token, button }) => (
  <CardPage title={title}>
    <div class="card">
      <h1>{title}</h1>
      <p class="lede">{lede}</p>
      <form class="stack" data-api={api} data-then={`go:${then}`} novalidate>
        <p class="form-error" role="alert"></p>
        <input type="hidden" name="token" value={token} />
        <button type="submit">{button}</button>
      </form>
    </div>
  </CardPage>
);

const Icon: FC<{ path: string }> = ({ path }) => (
  <svg width="18" height="18" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true">
    <path d={path} />
  </svg>
);

/** A tab of the sidebar: a workspace page (src/app/pages/page.tsx), in the order of PAGES. */
export type TabLink = Pick<WorkspacePage, 'id' | 'title' | 'icon'>;

export interface ShellProps extends WorkspaceProps {
  title: string;
  /** The id of the page shown: its tab is marked current, and the workspace switcher stays on it. */
  tab: string;
  tabs: readonly TabLink[];
  children: Child;
}

/** Every signed-in page: the sidebar (brand, workspace switcher, navigation, who is signed in) and the page. */
export const Shell: FC<ShellProps> = ({ title, tab, tabs, user, memberships, access, docsUrl, children }) => (
  <Document title={title}>
    <a class="skip" href="#main">Skip to content</a>
    <div class="shell">
      <aside class="sidebar">
        <a class="brand" href="/">
          <Logo /> Sluice
        </a>
        <div class="switcher">
          <label for="workspace-switcher">Workspace</label>
          <select id="workspace-switcher" data-navigate>
            {memberships.map((organization) => (
              <optgroup label={organization.twoFactorRequired ? `${organization.name} (two-factor sign-in required)` : organization.name}>
                {organization.workspaces.map((workspace) => (
                  <option value={`/w/${workspace.id}/${tab}`} selected={workspace.id === access.workspace.id}>
                    {workspace.name}
                  </option>
                ))}
              </optgroup>
            ))}
          </select>
        </div>
        <nav class="nav" aria-label="Main">
          {tabs.map((item) => (
            <a href={`/w/${access.workspace.id}/${item.id}`} aria-current={item.id === tab ? 'page' : undefined}>
              <Icon path={item.icon} /> {item.title}
            </a>
          ))}
        </nav>
        <div class="sidebar-foot">
          <div class="who small">
            <strong>{user.name}</strong>
            <span class="muted">{user.email}</span>
          </div>
          <div>
            <a class="small" href={docsUrl}>
              API reference
            </a>
            <button type="button" class="link small" data-api="/api/auth/sign-out" data-then="go:/signin">
              Sign out
            </button>
          </div>
        </div>
      </aside>
      <main class="main" id="main">
        <p id="page-status" class="form-error" role="alert"></p>
        {children}
      </main>
    </div>
    <Dialogs />
  </Document>
);

/** The two dialogs the script opens: a secret shown once, and a confirmation. */
const Dialogs: FC = () => (
  <>
    <dialog id="secret-dialog" aria-labelledby="secret-title">
      <h2 id="secret-title" data-secret-title>
        Your new secret
      </h2>
      <p class="muted small" data-secret-note></p>
      <div class="secret">
        <code id="secret-value"></code>
        <button type="button" class="secondary small" data-copy="#secret-value">
          Copy
        </button>
      </div>
      <form method="dialog" class="buttons">
        <button type="submit">Done</button>
      </form>
    </dialog>
    <dialog id="confirm-dialog" aria-labelledby="confirm-title">
      <h2 id="confirm-title">Are you sure?</h2>
      <p data-confirm-text></p>
      <form method="dialog" class="buttons">
        <button type="submit" value="no" class="secondary">
          Cancel
        </button>
        <button type="submit" value="yes" class="danger" data-confirm-yes>
          Confirm
        </button>
      </form>
    </dialog>
  </>
);

export const PageHead: FC<{ title: string; lede?: Child; children?: Child }> = ({ title, lede, children }) => (
  <header class="page-head">
    <div>
      <h1>{title}</h1>
      {lede ? <p class="muted">{lede}</p> : null}
    </div>
    {children}
  </header>
);

/**
 * A form the page's script sends to the JSON API. `novalidate`, so what the API refuses is said beside
 * each field rather than in the browser's bubble (which would also stop the request before the API saw
 * it); the summary ("Check the fields marked below.") comes first, above the fields it points to.
 */
export const ApiForm: FC<{
  api: string;
  method?: 'PUT' | 'PATCH' | 'DELETE';
  /** Asked in the page's dialog before the form is sent, as a ConfirmButton asks. */
  confirm?: string;
  confirmLabel?: string;
  then?: 'reload' | 'secret' | 'redirect' | 'rows' | 'two-factor-setup' | 'two-factor-codes' | 'verification-sent' | `go:${string}`;
  class?: string;
  secretField?: string;
  secretTitle?: string;
  secretNote?: string;
  children: Child;
}> = (props) => (
  <form
    class={props.class}
    novalidate
    data-api={props.api}
    data-method={props.method}
    data-confirm={props.confirm}
    data-confirm-label={props.confirmLabel}
    data-then={props.then}
    data-secret-field={props.secretField}
    data-secret-title={props.secretTitle}
    data-secret-note={props.secretNote}
  >
    <p class="form-error" role="alert"></p>
    {props.children}
  </form>
);

/**
 * A field with its label, hint and the slot the script fills with the API's message about it. `id` tells it apart
 * when two forms of one page send a field of the same name (its input's id is `field-<id>`, `field-<name>` without).
 */
export const Field: FC<{
  name: string;
  id?: string;
  label: string;
  type?: string;
  hint?: string;
  autocomplete?: string;
  required?: boolean;
  value?: string;
  minlength?: number;
  maxlength?: number;
  placeholder?: string;
  /** The bounds of a date or number field. */
  min?: string;
  max?: string;
  /** The keyboard a phone shows: `numeric` for a code of digits. */
  inputmode?: 'numeric' | 'text';
}> = (
  props,
) => (
  <div class="field grow">
    <label for={`field-${props.id ?? props.name}`}>{props.label}</label>
    <input
      id={`field-${props.id ?? props.name}`}
      name={props.name}
      type={props.type ?? 'text'}
      autocomplete={props.autocomplete}
      required={props.required ?? true}
      value={props.value}
      minlength={props.minlength}
      maxlength={props.maxlength}
      min={props.min}
      max={props.max}
      inputmode={props.inputmode}
      placeholder={props.placeholder}
      aria-describedby={`error-${props.id ?? props.name}`}
    />
    {props.hint ? <span class="hint">{props.hint}</span> : null}
    <span class="field-error" id={`error-${props.id ?? props.name}`} data-field-error={props.name}></span>
  </div>
);

/**
 * A command or a config, to be copied as it is: its long lines scroll sideways (pre in styles.ts), so the
 * block takes the keyboard's focus; a box that scrolls with nothing focusable in it cannot be scrolled
 * without a mouse.
 */
export const CodeBlock: FC<{ id?: string; children: Child }> = ({ id, children }) => (
  <pre id={id} tabindex={0}>
    {children}
  </pre>
);

export function formatDate(iso: string | null): string {
  if (!iso) return '—';
  return new Date(iso).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
}

/** A moment as formatDate writes it, its date never broken at the hyphens (it may wrap before its time, in a narrow column). */
export const DateTime: FC<{ iso: string | null }> = ({ iso }) => {
  if (!iso) return <>{formatDate(iso)}</>;
  const [date, ...time] = formatDate(iso).split(' ');
  return (
    <time datetime={iso}>
      <span class="nowrap">{date}</span> {time.join(' ')}
    </time>
  );
};

export function formatCents(cents: number): string {
  return `$${(cents / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: cents % 1 === 0 ? 2 : 4 })}`;
}

/** A destructive action: the page's script asks in its dialog first, then sends it to the JSON API, and then reloads the page or goes to `then`. */
export const ConfirmButton: FC<{ api: string; method?: 'DELETE'; confirm: string; confirmLabel: string; ariaLabel?: string; then?: `go:${string}`; children: Child }> = (props) => (
  <button
    type="button"
    class="danger small"
    data-api={props.api}
    data-method={props.method}
    data-then={props.then}
    data-confirm={props.confirm}
    data-confirm-label={props.confirmLabel}
    aria-label={props.ariaLabel}
  >
    {props.children}
  </button>
);
