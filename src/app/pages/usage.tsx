import type { FC } from 'hono/jsx';
import type { DailySpend, UsageReport } from '../../core/usage-report';
import { DailySpendChart, OperationSpendChart } from './charts';
import { PlanNotice } from './keys';
import { formatCents, formatDate, PageHead, Shell, type ShellProps } from './layout';

export interface Credits {
  plan: string | null;
  purchasedBalanceCents: number;
  subscriptionRemainingCents: number;
  subscriptionAllowanceCents: number;
  heldCents: number;
  availableCents: number;
  periodEnd: string | null;
}

export interface UsagePageProps extends Omit<ShellProps, 'title' | 'tab' | 'children'> {
  report: UsageReport;
  days: DailySpend[];
  credits: Credits;
  trial: { available: boolean; endsAt: string | null };
}

const PLAN_NAMES: Record<string, string> = {
  payg: 'Pay as you go',
  solo: 'Solo',
  toolkit: 'Toolkit',
  team: 'Team',
  toolkit_all_access: 'Toolkit All-Access',
  business: 'Business',
};

export const UsagePage: FC<UsagePageProps> = (props) => {
  const { report, days, credits, access } = props;
  return (
    <Shell {...props} title="Usage & credits" tab="usage">
      <PageHead title="Usage & credits" lede={<>Calls of the workspace <strong>{access.workspace.name}</strong> over the last 30 days. Only successful calls are charged.</>} />
      <PlanNotice access={access} trial={props.trial} />
      <div class="grid" aria-label={`Credits of ${access.organization.name}`}>
        <Stat label="Available" value={formatCents(credits.availableCents)} />
        <Stat label="Purchased balance" value={formatCents(credits.purchasedBalanceCents)} />
        <Stat label="Plan allowance left" value={`${formatCents(credits.subscriptionRemainingCents)}`} note={credits.periodEnd && credits.subscriptionAllowanceCents > 0 ? `of ${formatCents(credits.subscriptionAllowanceCents)}, resets ${credits.periodEnd.slice(0, 10)}` : undefined} />
        <Stat label="Plan" value={credits.plan ? (PLAN_NAMES[credits.plan] ?? credits.plan) : 'None'} note={credits.heldCents > 0 ? `${formatCents(credits.heldCents)} held by calls in flight` : undefined} />
      </div>
      <div class="grid">
        <Stat label="Calls (30 days)" value={String(report.totals.calls)} note={`${report.totals.failed} failed, not charged`} />
        <Stat label="Spend (30 days)" value={formatCents(report.totals.costCents)} />
      </div>
      <section class="card">
        <h2>Spend per day</h2>
        {report.totals.calls === 0 ? <p class="muted">No calls yet. Spend appears here a moment after a metered call.</p> : <DailySpendChart days={days} />}
      </section>
      <section class="card">
        <h2>Spend per operation</h2>
        {report.byOperation.length === 0 ? <p class="muted">No calls yet.</p> : <OperationSpendChart operations={report.byOperation} />}
      </section>
      <section class="card">
        <h2>Recent calls</h2>
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Operation</th>
                <th scope="col">Status</th>
                <th scope="col" class="num">Cost</th>
                <th scope="col" class="num">Latency</th>
                <th scope="col">Request</th>
              </tr>
            </thead>
            <tbody>
              {report.rows.map((row) => (
                <tr>
                  <td>{formatDate(row.createdAt)}</td>
                  <td>
                    <code>{row.operation}</code>
                  </td>
                  <td>{row.status < 400 ? <span class="badge ok">{row.status}</span> : <span class="badge off">{`${row.status} ${row.errorCode ?? ''}`}</span>}</td>
                  <td class="num">{formatCents(row.costCents)}{row.cached ? <span class="muted small"> cached</span> : null}</td>
                  <td class="num">{`${row.latencyMs} ms`}</td>
                  <td>
                    <code class="muted">{row.requestId}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {report.rows.length === 0 ? <p class="empty">No calls in the last 30 days.</p> : null}
        </div>
      </section>
    </Shell>
  );
};

/** One figure with its label and a note, in the pages' grid of figures. */
export const Stat: FC<{ label: string; value: string; note?: string | undefined }> = ({ label, value, note }) => (
  <div class="stat">
    <div class="label">{label}</div>
    <div class="value">{value}</div>
    {note ? <div class="muted small">{note}</div> : null}
  </div>
);
