import type { Child, FC } from 'hono/jsx';
import type { Env } from '../../core/config';
import { type Plan, PLAN_TABLE } from '../../core/plans';
import { dailySpend, type DailySpend, MAX_SPAN_DAYS, type OrganizationUsage, organizationUsage, rangeOf, type UsageReport, usageReport } from '../../services/usage-report';
import { balanceInCents, currentStatement } from '../../services/wallet';
import type { WorkspaceAccess } from '../members';
import { trialState } from '../trial';
import { DailySpendChart, OperationSpendChart } from './charts';
import { PlanNotice } from './keys';
import { DateTime, Field, formatCents, PageHead } from './layout';
import { clock } from '../../core/clock';
import { DataTable } from './table';
import { type WorkspaceProps, workspacePage } from './page';

export interface Credits {
  plan: Plan | null;
  purchasedBalanceCents: number;
  subscriptionRemainingCents: number;
  subscriptionAllowanceCents: number;
  heldCents: number;
  availableCents: number;
  periodEnd: string | null;
}

export interface UsagePageProps extends WorkspaceProps {
  report: UsageReport;
  days: DailySpend[];
  credits: Credits;
  trial: { available: boolean; endsAt: string | null };
  /** Calls the balance already counts whose usage rows have not reached the call figures yet. */
  callsInTransit: number;
  /** This month's spend of every workspace of the organization, deleted ones included. */
  byWorkspace: OrganizationUsage;
}

/** The wallet's latest ledger entries looked at for charges still on their way to the usage table. */
const RECENT_LEDGER_ENTRIES = 20;

/**
 * The page's figures as of one moment. The balance is the wallet's; a call's usage row reaches D1 from
 * the wallet's outbox about half a second after its charge, so right after a call the balance was lower
 * while "Calls" still said 0. The wallet's latest captures are therefore looked up in D1 before the calls
 * are read (a row that is there then is in the figures too): those not there yet are said to be on their
 * way, and the page shows "updating" instead of two figures that disagree.
 */
export async function loadUsage(env: Env, access: WorkspaceAccess): Promise<Pick<UsagePageProps, 'report' | 'days' | 'credits' | 'trial' | 'callsInTransit' | 'byWorkspace'>> {
  const [{ balance, ledger }, trial] = await Promise.all([currentStatement(env, access.organization.id, RECENT_LEDGER_ENTRIES, access.workspace.id), trialState(env.DB, access.organization.id)]);
  const charged = ledger.flatMap((entry) => (entry.kind === 'capture' && entry.holdId !== null ? [entry.holdId] : []));
  const arrived =
    charged.length === 0
      ? 0
      : ((await env.DB.prepare(`SELECT COUNT(*) AS n FROM usage WHERE id IN (${charged.map(() => '?').join(', ')})`).bind(...charged).first<{ n: number }>())?.n ?? 0);
  const { from, to } = rangeOf({});
  const [report, days, byWorkspace] = await Promise.all([
    usageReport(env.DB, access.workspace.id, { limit: 20 }),
    dailySpend(env.DB, access.workspace.id, from, to),
    organizationUsage(env.DB, access.organization.id, {}),
  ]);
  return { report, days, byWorkspace, trial, credits: { plan: access.organization.plan, ...balanceInCents(balance) }, callsInTransit: charged.length - arrived };
}

/**
 * Every call of a range of days as a CSV file: a plain form, so the browser downloads what the API answers. The
 * last 30 days unless other days are chosen.
 */
const UsageExport: FC<{ workspaceId: string }> = ({ workspaceId }) => {
  const today = new Date(clock.now()).toISOString().slice(0, 10);
  const monthAgo = new Date(clock.now() - 29 * 24 * 60 * 60 * 1000).toISOString().slice(0, 10);
  // The browser checks the days before asking (a refused range would show the API's JSON): none after today, none
  // before the report's longest range, and (usage.browser.ts) `from` on or before `to`, at most MAX_SPAN_DAYS apart.
  const oldest = new Date(clock.now() - (MAX_SPAN_DAYS - 1) * 24 * 60 * 60 * 1000).toISOString().slice(0, 10);
  return (
    <form class="row" method="get" action={`/api/workspaces/${workspaceId}/usage/export`} data-usage-export data-max-days={String(MAX_SPAN_DAYS)}>
      <Field name="from" id="export-from" label="From (UTC)" type="date" value={monthAgo} min={oldest} max={today} />
      <Field name="to" id="export-to" label="To, included" type="date" value={today} min={oldest} max={today} />
      <button type="submit" class="secondary">
        Download calls as CSV
      </button>
    </form>
  );
};

export const UsagePage: FC<UsagePageProps> = (props) => {
  const { report, days, credits, access, callsInTransit } = props;
  const updating = callsInTransit > 0 ? `updating: ${callsInTransit} more ${callsInTransit === 1 ? 'call' : 'calls'} charged a moment ago` : undefined;
  return (
    <>
      <PageHead title="Usage & credits" lede={<>Calls of the workspace <strong>{access.workspace.name}</strong> over the last 30 days. Only successful calls are charged.</>} />
      <PlanNotice access={access} user={props.user} trial={props.trial} />
      <div class="grid" aria-label={`Credits of ${access.organization.name}`}>
        <Stat label="Available" value={formatCents(credits.availableCents)} />
        <Stat label="Purchased balance" value={formatCents(credits.purchasedBalanceCents)} />
        <Stat label="Plan allowance left" value={`${formatCents(credits.subscriptionRemainingCents)}`} note={credits.periodEnd && credits.subscriptionAllowanceCents > 0 ? <>{`of ${formatCents(credits.subscriptionAllowanceCents)}, resets `}<span class="nowrap">{credits.periodEnd.slice(0, 10)}</span></> : undefined} />
        <Stat label="Plan" value={credits.plan ? PLAN_TABLE[credits.plan].name : 'None'} note={credits.heldCents > 0 ? `${formatCents(credits.heldCents)} held by calls in flight` : undefined} />
      </div>
      {/* data-reload-soon: the script loads the page again once, a second later, when the calls catch up. */}
      <div class="grid" aria-label={`Calls of ${access.workspace.name}`} data-reload-soon={updating ? '' : undefined}>
        <Stat label="Calls (30 days)" value={String(report.totals.calls)} note={updating ?? `${report.totals.failed} failed, not charged`} />
        <Stat label="Spend (30 days)" value={formatCents(report.totals.costCents)} note={updating} />
        <Stat
          label="Sandbox calls (30 days)"
          value={String(report.sandbox.calls)}
          note="Sandbox keys' calls: answered with examples, never charged, not counted in the calls or the charts"
        />
      </div>
      <section class="card">
        <h2>Spend per day</h2>
        {report.totals.calls === 0 ? <p class="muted">No calls yet. Spend appears here a moment after a metered call.</p> : <DailySpendChart days={days} />}
      </section>
      <section class="card">
        <h2>Spend per operation</h2>
        {report.byOperation.length === 0 ? <p class="muted">No calls yet.</p> : <OperationSpendChart operations={report.byOperation} />}
      </section>
      {props.byWorkspace.workspaces.length > 1 ? <SpendByWorkspace usage={props.byWorkspace} current={access.workspace.id} organization={access.organization.name} /> : null}
      <section class="card">
        <h2>Recent calls</h2>
        <UsageExport workspaceId={access.workspace.id} />
        <DataTable
          rows={report.rows}
          empty="No calls in the last 30 days."
          columns={[
            { label: 'When', cell: (row) => <DateTime iso={row.createdAt} /> },
            {
              label: 'Operation',
              cell: (row) => (
                <>
                  <code>{row.operation}</code>
                  {row.jobId ? <span class="muted small" title={row.jobId}> job</span> : null}
                </>
              ),
            },
            {
              label: 'Status',
              cell: (row) =>
                row.status < 400 ? (
                  <span class="badge ok">{row.status}</span>
                ) : (
                  <>
                    {/* The code beside its badge, not in it, so a long one wraps instead of widening the table. */}
                    <span class="badge off">{row.status}</span> {row.errorCode ? <code class="small muted breaks">{row.errorCode}</code> : null}
                  </>
                ),
            },
            {
              label: 'Cost',
              class: 'num',
              cell: (row) => (
                <>
                  {formatCents(row.costCents)}
                  {row.cached ? <span class="muted small"> cached</span> : null}
                  {row.sandbox ? <span class="muted small"> sandbox</span> : null}
                  {row.connectionId ? <span class="muted small" title={row.connectionId}> own account</span> : null}
                </>
              ),
            },
            { label: 'Latency', class: 'num', cell: (row) => `${row.latencyMs} ms` },
            { label: 'Request', cell: (row) => <code class="muted breaks">{row.requestId}</code> },
          ]}
        />
      </section>
    </>
  );
};

/**
 * The month's spend of each workspace of the organization, the one shown here marked: where the organization's
 * credits went, deleted workspaces included (no page of theirs is left to show it).
 */
const SpendByWorkspace: FC<{ usage: OrganizationUsage; current: string; organization: string }> = ({ usage, current, organization }) => (
  <section class="card">
    <h2>Spend by workspace, {usage.month}</h2>
    <p class="muted small">
      Every workspace of {organization} this month (UTC): its calls, and what they cost the organization's credits (only successful calls are charged;
      sandbox calls are not counted).
    </p>
    <DataTable
      rows={usage.workspaces}
      empty="No workspace."
      columns={[
        {
          label: 'Workspace',
          cell: (row) =>
            row.deleted ? (
              <>
                {row.name} <span class="badge plain">deleted</span>
              </>
            ) : (
              <>
                <a href={`/w/${row.workspaceId}/usage`}>{row.name}</a> {row.workspaceId === current ? <span class="badge plain">this one</span> : null}
              </>
            ),
        },
        { label: 'Calls', class: 'num', cell: (row) => String(row.calls) },
        { label: 'Spend', class: 'num', cell: (row) => formatCents(row.costCents) },
      ]}
    />
    <p class="small">
      All together: <strong>{usage.totals.calls}</strong> calls, <strong>{formatCents(usage.totals.costCents)}</strong>.
    </p>
  </section>
);

/** One figure with its label and a note, in the pages' grid of figures. */
export const Stat: FC<{ label: string; value: string; note?: Child }> = ({ label, value, note }) => (
  <div class="stat">
    <div class="label">{label}</div>
    <div class="value">{value}</div>
    {note ? <div class="muted small">{note}</div> : null}
  </div>
);

export const usagePage = workspacePage({
  id: 'usage',
  title: 'Usage & credits',
  icon: 'M4 20V10M10 20V4M16 20v-7M22 20H2',
  load: (c, { access }) => loadUsage(c.env, access),
  view: UsagePage,
});
