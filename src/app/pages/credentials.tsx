import type { FC } from 'hono/jsx';
import { clock } from '../../core/clock';
import { type ApiKeyRecord, hasExpired } from '../../core/records';
import { NOTICE_DAYS } from '../key-expiry-notice';
import type { SessionUser } from '../context';
import { canManage, type WorkspaceAccess } from '../members';
import { ApiForm, ConfirmButton, DateTime } from './layout';
import { DataTable } from './table';

export interface CredentialTableProps {
  /** "key" or "token": how the rows and buttons name what they list. */
  noun: 'key' | 'token';
  credentials: ApiKeyRecord[];
  /** The JSON API collection the row actions post to, e.g. /api/workspaces/ws_.../keys. */
  base: string;
  access: WorkspaceAccess;
  user: SessionUser;
  /** API keys can be shown again; MCP tokens are shown once. */
  revealable: boolean;
  revokeWarning: string;
}

/** The lengths a key or MCP token can be given, from today, in the dashboard's forms; the API takes any number of days from 1 to 365. */
export const LENGTHS = [7, 30, 90, 365];
export const lengthLabel = (days: number) => (days === 365 ? 'a year' : `${days} days`);

/** A creation form's choice of when what it makes expires: never, or one of LENGTHS from today. */
export const ExpiresField: FC = () => (
  <div class="field">
    <label for="field-expiresInDays">Expires</label>
    <select id="field-expiresInDays" name="expiresInDays" data-number aria-describedby="error-expiresInDays">
      <option value="">Never</option>
      {LENGTHS.map((days) => (
        <option value={String(days)}>In {lengthLabel(days)}</option>
      ))}
    </select>
    <span class="field-error" id="error-expiresInDays" data-field-error="expiresInDays"></span>
  </div>
);

/** Whole days (rounded up) until a key made to expire does, when that is within the week its notice is sent in; else null. */
export function daysLeftIfSoon(credential: Pick<ApiKeyRecord, 'expiresAt'>): number | null {
  if (credential.expiresAt === null) return null;
  const left = Math.ceil((Date.parse(credential.expiresAt) - clock.now()) / 86_400_000);
  return left > 0 && left <= NOTICE_DAYS ? left : null;
}

/** Revoked, expired, or active (until when, for a key made to expire; marked in its last week). */
const Status: FC<{ credential: ApiKeyRecord }> = ({ credential }) => {
  if (credential.revokedAt) return <span class="badge off">Revoked</span>;
  if (hasExpired(credential)) return <span class="badge off">Expired</span>;
  const soon = daysLeftIfSoon(credential);
  return (
    <>
      {soon === null ? <span class="badge ok">Active</span> : <span class="badge warn">Expires in {soon === 1 ? 'a day' : `${soon} days`}</span>}
      {credential.expiresAt ? <span class="muted small nowrap"> until {credential.expiresAt.slice(0, 10)}</span> : null}
    </>
  );
};

/** API keys and MCP tokens are listed the same way: name, hint, dates, status, and what this person may do. */
export const CredentialTable: FC<CredentialTableProps> = ({ noun, credentials, base, access, user, revealable, revokeWarning }) => (
  <DataTable
    rows={credentials}
    empty={`No ${noun}s yet.`}
    rowAttributes={(credential) => ({ class: credential.revokedAt ? 'revoked' : undefined, 'data-credential-id': credential.id })}
    columns={[
      { label: 'Name', cell: (credential) => credential.name },
      { label: noun === 'key' ? 'Key' : 'Token', cell: (credential) => <code data-key-hint>{credential.hint}</code> },
      { label: 'Created', cell: (credential) => <DateTime iso={credential.createdAt} /> },
      { label: 'Last used', cell: (credential) => <DateTime iso={credential.lastUsedAt} /> },
      { label: 'Status', cell: (credential) => <Status credential={credential} /> },
    ]}
    actions={(credential) => {
      const mayManage = !credential.revokedAt && (credential.createdBy === user.id || canManage(access.role));
      return (
        <>
          {mayManage && revealable && !hasExpired(credential) ? (
            <button type="button" class="secondary small" data-api={`${base}/${credential.id}/reveal`} data-then="reveal-inline" aria-label={`Reveal ${noun} ${credential.name}`}>
              Reveal
            </button>
          ) : null}
          {mayManage ? (
            <ConfirmButton api={`${base}/${credential.id}/revoke`} confirm={`Revoke "${credential.name}"? ${revokeWarning}`} confirmLabel={`Revoke ${noun}`} ariaLabel={`Revoke ${noun} ${credential.name}`}>
              Revoke
            </ConfirmButton>
          ) : null}
        </>
      );
    }}
  />
);

/**
 * When each active key or MCP token expires, with a form to give it a new expiry for those who may (its maker, owners and
 * admins): a number of days from today, or never.
 */
export const ExpiryCard: FC<{ noun: 'key' | 'token'; credentials: ApiKeyRecord[]; base: string; access: WorkspaceAccess; user: SessionUser; lede: string }> = ({
  noun,
  credentials,
  base,
  access,
  user,
  lede,
}) => (
  <section class="card" aria-labelledby="expiry-title">
    <h2 id="expiry-title">Expiry</h2>
    <p class="muted small">{lede}</p>
    <DataTable
      rows={credentials}
      empty={`No active ${noun}.`}
      rowAttributes={(credential) => ({ 'data-expiry-key-id': credential.id })}
      columns={[
        { label: 'Name', cell: (credential) => credential.name },
        {
          label: 'Expires',
          cell: (credential) => {
            const soon = daysLeftIfSoon(credential);
            return (
              <span class="nowrap" data-expires-at={credential.expiresAt ?? ''}>
                {credential.expiresAt === null ? 'Never' : `${credential.expiresAt.slice(0, 16).replace('T', ' ')} UTC`}
                {soon === null ? null : <> <span class="badge warn">in {soon === 1 ? 'a day' : `${soon} days`}</span></>}
              </span>
            );
          },
        },
      ]}
      actions={(credential) =>
        credential.createdBy === user.id || canManage(access.role) ? (
          <ApiForm class="row limit-form" api={`${base}/${credential.id}/expiry`} method="PUT" then="reload">
            <span class="limit-inputs">
              <select id={`expiry-${credential.id}`} name="expiresInDays" data-json aria-label={`New expiry for ${credential.name}`}>
                {LENGTHS.map((days) => (
                  <option value={String(days)} selected={days === 90}>
                    In {lengthLabel(days)}
                  </option>
                ))}
                <option value="null">Never</option>
              </select>
              <button type="submit" class="secondary small" aria-label={`Set expiry for ${credential.name}`}>
                Set expiry
              </button>
            </span>
          </ApiForm>
        ) : null
      }
    />
  </section>
);
