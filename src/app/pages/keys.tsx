import type { FC } from 'hono/jsx';
import { hasExpired } from '../../core/records';
import type { KeyWithSpend } from '../../services/key-spend';
import { PLAN_TABLE } from '../../core/plans';
import { canManage } from '../members';
import { TRIAL } from '../trial';
import { CredentialTable, ExpiresField, ExpiryCard } from './credentials';
import { ApiForm, Field, formatCents, PageHead } from './layout';
import { DataTable } from './table';
import { listKeysWithSpend } from '../../services/key-spend';
import { trialState } from '../trial';
import { type WorkspaceProps, workspacePage } from './page';
import { TrialStart } from './trial-start';
import { listSandboxKeys, type SandboxKey } from '../../services/sandbox-keys';
import { SandboxKeysSection } from './sandbox-keys';

export interface KeysPageProps extends WorkspaceProps {
  keys: KeyWithSpend[];
  sandboxKeys: SandboxKey[];
  apiUrl: string;
  trial: { available: boolean; endsAt: string | null };
  /** The workspace has made a call: the getting-started steps are done with. */
  called: boolean;
}

/**
 * Whether the workspace has made its first call: a metered call in its usage, or any use of one of its
 * keys (a check of /v1/credits is the second getting-started step, and is not metered).
 */
export async function workspaceHasCalled(db: D1Database, workspaceId: string): Promise<boolean> {
  const row = await db
    .prepare(
      `SELECT EXISTS (SELECT 1 FROM usage WHERE workspace_id = ?1)
           OR EXISTS (SELECT 1 FROM api_keys WHERE workspace_id = ?1 AND last_used_at IS NOT NULL) AS called`,
    )
    .bind(workspaceId)
    .first<{ called: number }>();
  return row?.called === 1;
}

export const KeysPage: FC<KeysPageProps> = (props) => {
  const { keys, access, user, apiUrl, trial, called } = props;
  const base = `/api/workspaces/${access.workspace.id}/keys`;
  const active = keys.filter((key) => !key.revokedAt && !hasExpired(key));
  return (
    <>
      <PageHead title="API keys" lede={<>Keys authenticate REST calls for the workspace <strong>{access.workspace.name}</strong>. Spend is billed to {access.organization.name}.</>} />
      <PlanNotice access={access} user={user} trial={trial} />
      {!called ? (
        <section class="card notice info" aria-labelledby="start-title">
          <h2 id="start-title">Get started in a minute</h2>
          <ol class="steps">
            <li>Create a key below and copy it.</li>
            <li>
              Store it as <code>SLUICE_API_KEY</code> and check it: <code>curl -s {apiUrl}/v1/credits -H "Authorization: Bearer $SLUICE_API_KEY"</code>
            </li>
            <li>
              Browse the catalog at <a href={`${apiUrl}/v1/platforms`}>{apiUrl}/v1/platforms</a>, or connect an agent on the <a href={`/w/${access.workspace.id}/mcp`}>MCP</a> page.
            </li>
          </ol>
        </section>
      ) : null}
      <section class="card">
        <h2>Create a key</h2>
        <ApiForm class="row" api={base} then="secret" secretTitle="Your new API key" secretNote="Copy it now and keep it secret. You can reveal it again here later, until it is revoked.">
          <Field name="name" label="Name" placeholder="e.g. production, laptop, research agent" maxlength={100} />
          <Field name="monthlyLimitCents" label="Monthly limit, cents (optional)" type="number" required={false} placeholder="no limit" />
          <ExpiresField />
          <button type="submit">Create key</button>
        </ApiForm>
        {canManage(access.role) ? null : (
          <p class="muted small">
            A key you make calls data and reads this workspace's settings; adding or removing its vendor accounts and webhook endpoints, or deleting its databases, takes a key an owner or admin made.
          </p>
        )}
      </section>
      <section class="card">
        <h2>Keys</h2>
        <CredentialTable
          noun="key"
          credentials={keys}
          base={base}
          access={access}
          user={user}
          revealable
          revokeWarning="Calls with it are refused from the very next request, and this cannot be undone."
        />
      </section>
      {active.length > 0 ? <SpendLimits keys={active} base={base} access={access} user={user} /> : null}
      {active.length > 0 ? (
        <ExpiryCard
          noun="key"
          credentials={active}
          base={base}
          access={access}
          user={user}
          lede="A key that expires is refused with 401 from that instant; whoever made it is emailed a week before (a key made for a week or less, only here). A new expiry counts from today, and can be shorter or longer than the old one. An expired key stays expired: make a new one."
        />
      ) : null}
      <SandboxKeysSection keys={props.sandboxKeys} access={access} user={user} apiUrl={apiUrl} />
    </>
  );
};

/** Said on the pages that matter of an organization without a plan: calls will be refused, and the way out. */
export const PlanNotice: FC<{ access: KeysPageProps['access']; user: KeysPageProps['user']; trial: { available: boolean; endsAt: string | null } }> = ({ access, user, trial }) => {
  if (access.organization.plan) {
    return trial.endsAt ? (
      <div class="notice info" role="status">
        <strong>Free trial</strong> until {trial.endsAt.slice(0, 10)}: the {PLAN_TABLE[TRIAL.plan].name} plan and its credit. Then metered calls need a plan (see <a href={`/w/${access.workspace.id}/plans`}>Plans</a>).
      </div>
    ) : null;
  }
  return (
    <div class="notice warn" role="status">
      <strong>No plan yet.</strong> Keys work, but metered calls are refused until this organization has a plan.{' '}
      {trial.available && canManage(access.role) ? (
        <>
          Start the free trial: the {PLAN_TABLE[TRIAL.plan].name} plan with {formatCents(PLAN_TABLE[TRIAL.plan].allowanceCents)} of credit for {TRIAL.days} days, once per organization.{' '}
          <TrialStart organizationId={access.organization.id} user={user} small />
        </>
      ) : (
        <>
          See <a href={`/w/${access.workspace.id}/plans`}>Plans</a>
          {trial.available ? ' (owners and admins start the free trial).' : ' (the free trial was used).'}
        </>
      )}
    </div>
  );
};

/**
 * Each active key's monthly spend limit and what it spent this month (UTC), with a form to change the
 * limit for those who may: a call that would pass it is refused with 402, whatever the balance.
 */
const SpendLimits: FC<{ keys: KeyWithSpend[]; base: string; access: KeysPageProps['access']; user: KeysPageProps['user'] }> = ({ keys, base, access, user }) => (
  <section class="card" aria-labelledby="limits-title">
    <h2 id="limits-title">Spend this month and limits</h2>
    <p class="muted small">
      A key with a limit has a call refused, with a message naming the key's limit, once the call would take it past the limit this calendar month, UTC; calls in flight count, and so do the items of data jobs it submits. Empty: no limit of its own. Owners and admins set, raise and remove limits; a member may set one on their own key or lower it.
    </p>
    <DataTable
      rows={keys}
      empty="No active key."
      rowAttributes={(key) => ({ 'data-limit-key-id': key.id })}
      columns={[
        { label: 'Name', cell: (key) => key.name },
        {
          label: 'Spent this month',
          cell: (key) => (
            <span data-spent-cents={String(key.spentThisMonthCents)}>
              {formatCents(key.spentThisMonthCents)}
              {key.inFlightCents > 0 ? <span class="muted small"> (+{formatCents(key.inFlightCents)} in flight)</span> : null}
            </span>
          ),
        },
        {
          label: 'Monthly limit',
          cell: (key) => <span data-limit-cents={key.monthlyLimitCents === null ? '' : String(key.monthlyLimitCents)}>{key.monthlyLimitCents === null ? 'No limit' : formatCents(key.monthlyLimitCents)}</span>,
        },
        { label: 'Resets', cell: (key) => <span class="nowrap">{key.monthEndsAt.slice(0, 10)}</span> },
      ]}
      actions={(key) =>
        key.createdBy === user.id || canManage(access.role) ? (
          <ApiForm class="row limit-form" api={`${base}/${key.id}/limit`} method="PUT" then="reload">
            {/* One unbreakable group, so the button stays beside its figure however narrow the column. */}
            <span class="limit-inputs">
              <input
                id={`limit-${key.id}`}
                aria-label={`Monthly limit in cents for ${key.name}`}
                name="monthlyLimitCents"
                type="number"
                min="0"
                step="1"
                value={key.monthlyLimitCents === null ? '' : String(key.monthlyLimitCents)}
                placeholder="no limit"
                required={!canManage(access.role)}
                max={canManage(access.role) || key.monthlyLimitCents === null ? undefined : String(key.monthlyLimitCents)}
              />
              <span class="muted small">cents</span>
              <button type="submit" class="secondary small" aria-label={`Set limit for ${key.name}`}>
                Set limit
              </button>
            </span>
          </ApiForm>
        ) : null
      }
    />
  </section>
);

export const keysPage = workspacePage({
  id: 'keys',
  title: 'API keys',
  icon: 'M15 7a4 4 0 1 1-3.9 4.9L4 19v-3h3v-3h3l1.1-1.1A4 4 0 0 1 15 7zm1 2.5a1.5 1.5 0 1 0 0 .01',
  load: async (c, { access, urls }) => {
    const [keys, sandboxKeys, trial, called] = await Promise.all([
      listKeysWithSpend(c.env, access.workspace.id),
      listSandboxKeys(c.env.DB, access.workspace.id),
      trialState(c.env.DB, access.organization.id),
      workspaceHasCalled(c.env.DB, access.workspace.id),
    ]);
    return { keys, sandboxKeys, apiUrl: urls.base, trial, called };
  },
  view: KeysPage,
});
