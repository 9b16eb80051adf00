import { raw } from 'hono/html';
import type { Child, FC } from 'hono/jsx';
import type { SessionUser } from '../context';
import { ASSETS } from '../assets';
import type { MembershipSummary, WorkspaceAccess } from '../members';

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

const ICONS: Record<string, string> = {
  keys: 'M15 7a4 4 0 1 1-3.9 4.9L4 19v-3h3v-3h3l1.1-1.1A4 4 0 0 1 15 7zm1 2.5a1.5 1.5 0 1 0 0 .01',
  mcp: 'M4 6h16v4H4zM4 14h16v4H4zM8 8h.01M8 16h.01',
  servers: 'M3 5h18v6H3zM3 13h18v6H3zM7 8h.01M7 16h.01M11 8h6M11 16h6',
  agents: 'M12 3v3M7 6h10a3 3 0 0 1 3 3v7a3 3 0 0 1-3 3H7a3 3 0 0 1-3-3V9a3 3 0 0 1 3-3zM9 12h.01M15 12h.01M9 16h6',
  webhooks: 'M4 17a3 3 0 1 0 6 0h7M17 17a3 3 0 1 0 3-3M12 5a3 3 0 1 0-3 5l-3 6M15 8l3 6',
  apps: 'M10 14a5 5 0 0 0 7 0l3-3a5 5 0 0 0-7-7l-1 1M14 10a5 5 0 0 0-7 0l-3 3a5 5 0 0 0 7 7l1-1',
  usage: 'M4 20V10M10 20V4M16 20v-7M22 20H2',
  members: 'M16 19v-1a4 4 0 0 0-4-4H7a4 4 0 0 0-4 4v1M9.5 10a3 3 0 1 0 0-6 3 3 0 0 0 0 6zM21 19v-1a4 4 0 0 0-3-3.9M16 4.1a3 3 0 0 1 0 5.8',
  plans: 'M3 7h18v12H3zM3 11h18M7 15h3',
  databases: 'M4 6c0-1.7 3.6-3 8-3s8 1.3 8 3-3.6 3-8 3-8-1.3-8-3zM4 6v12c0 1.7 3.6 3 8 3s8-1.3 8-3V6M4 12c0 1.7 3.6 3 8 3s8-1.3 8-3',
  settings: 'M12 15a3 3 0 1 0 0-6 3 3 0 0 0 0 6zM19 12l2-1-1-3-2 .5-1.5-1.5.5-2-3-1-1 2h-2l-1-2-3 1 .5 2L6 7.5 4 7 3 10l2 1v2l-2 1 1 3 2-.5 1.5 1.5-.5 2 3 1 1-2h2l1 2 3-1-.5-2 1.5-1.5 2 .5 1-3-2-1z',
};

const Icon: FC<{ name: keyof typeof ICONS }> = ({ name }) => (
  <svg width="18" height="18" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true">
    <path d={ICONS[name]} />
  </svg>
);

export const TABS = [
  { id: 'keys', label: 'API keys' },
  { id: 'mcp', label: 'MCP' },
  { id: 'servers', label: 'MCP servers' },
  { id: 'apps', label: 'Connected apps' },
  { id: 'agents', label: 'Agents' },
  { id: 'webhooks', label: 'Webhooks' },
  { id: 'usage', label: 'Usage & credits' },
  { id: 'databases', label: 'Databases' },
  { id: 'members', label: 'Members' },
  { id: 'plans', label: 'Plans' },
  { id: 'settings', label: 'Settings' },
] as const;
export type Tab = (typeof TABS)[number]['id'];

export interface ShellProps {
  title: string;
  tab: Tab;
  user: SessionUser;
  memberships: MembershipSummary[];
  access: WorkspaceAccess;
  docsUrl: string;
  children: Child;
}

/** Every signed-in page: the sidebar (brand, workspace switcher, navigation, who is signed in) and the page. */
export const Shell: FC<ShellProps> = ({ title, tab, user, memberships, access, docsUrl, children }) => (
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
              <optgroup label={organization.name}>
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
          {TABS.map((item) => (
            <a href={`/w/${access.workspace.id}/${item.id}`} aria-current={item.id === tab ? 'page' : undefined}>
              <Icon name={item.id} /> {item.label}
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
  method?: 'PUT' | 'PATCH';
  then?: 'reload' | 'secret' | 'redirect' | 'rows' | `go:${string}`;
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
    data-then={props.then}
    data-secret-field={props.secretField}
    data-secret-title={props.secretTitle}
    data-secret-note={props.secretNote}
  >
    <p class="form-error" role="alert"></p>
    {props.children}
  </form>
);

/** A field with its label, hint and the slot the script fills with the API's message about it. */
export const Field: FC<{ name: string; label: string; type?: string; hint?: string; autocomplete?: string; required?: boolean; value?: string; minlength?: number; maxlength?: number; placeholder?: string }> = (
  props,
) => (
  <div class="field grow">
    <label for={`field-${props.name}`}>{props.label}</label>
    <input
      id={`field-${props.name}`}
      name={props.name}
      type={props.type ?? 'text'}
      autocomplete={props.autocomplete}
      required={props.required ?? true}
      value={props.value}
      minlength={props.minlength}
      maxlength={props.maxlength}
      placeholder={props.placeholder}
      aria-describedby={`error-${props.name}`}
    />
    {props.hint ? <span class="hint">{props.hint}</span> : null}
    <span class="field-error" id={`error-${props.name}`} data-field-error={props.name}></span>
  </div>
);

export function formatDate(iso: string | null): string {
  if (!iso) return '—';
  return new Date(iso).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
}

export function formatCents(cents: number): string {
  return `$${(cents / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: cents % 1 === 0 ? 2 : 4 })}`;
}

/** A table's header row; `actions` adds the right-aligned column the row buttons sit in. */
export const TableHead: FC<{ columns: string[]; actions?: boolean }> = ({ columns, actions }) => (
  <thead>
    <tr>
      {columns.map((column) => (
        <th scope="col">{column}</th>
      ))}
      {actions ? (
        <th scope="col" class="num">
          <span class="muted">Actions</span>
        </th>
      ) : null}
    </tr>
  </thead>
);

/** A destructive action: the page's script asks in its dialog first, then sends it to the JSON API. */
export const ConfirmButton: FC<{ api: string; method?: 'DELETE'; confirm: string; confirmLabel: string; ariaLabel?: string; children: Child }> = (props) => (
  <button
    type="button"
    class="danger small"
    data-api={props.api}
    data-method={props.method}
    data-confirm={props.confirm}
    data-confirm-label={props.confirmLabel}
    aria-label={props.ariaLabel}
  >
    {props.children}
  </button>
);
