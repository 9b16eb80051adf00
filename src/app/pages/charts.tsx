import type { FC } from 'hono/jsx';
import type { DailySpend, UsageReport } from '../../services/usage-report';
import { formatCents } from './layout';

/*
 * The charts are drawn on the server: no script, no library, readable without colour. Only the bars are
 * SVG, stretched to their box (preserveAspectRatio="none"); every label is HTML text, so a phone shows it
 * at the page's own size instead of scaling it down with the drawing (at 390 px an SVG label was 6 px).
 * Sizes are SVG attributes, not inline styles, which the dashboard's Content-Security-Policy forbids.
 */

/** A round ceiling for an axis: 1, 2 or 5 times a power of ten, at least the largest value. */
function niceMax(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return ([1, 2, 5, 10].map((step) => step * power).find((candidate) => candidate >= value) ?? 10 * power);
}

/** Plot units of the daily chart's drawing: one unit of width per day, 100 of height. */
const PLOT_HEIGHT = 100;

/** Spend per day as columns, a date under every fifth day counted back from today (every tenth on a phone). */
export const DailySpendChart: FC<{ days: DailySpend[] }> = ({ days }) => {
  const max = niceMax(Math.max(...days.map((day) => day.costCents)));
  const total = days.reduce((sum, day) => sum + day.costCents, 0);
  const last = days.length - 1;
  return (
    <figure class="chart daily" role="img" aria-label={`Spend per day over the last ${days.length} days: ${formatCents(total)} in all.`} data-chart="daily-spend">
      <div class="chart-axis" aria-hidden="true">
        {[max, max / 2, 0].map((tick) => (
          <span>{formatCents(tick)}</span>
        ))}
      </div>
      <svg class="chart-plot" viewBox={`0 0 ${days.length} ${PLOT_HEIGHT}`} preserveAspectRatio="none" aria-hidden="true">
        {[0, PLOT_HEIGHT / 2, PLOT_HEIGHT].map((y) => (
          <line class="grid-line" x1="0" x2={days.length} y1={y} y2={y} vector-effect="non-scaling-stroke" />
        ))}
        {days.map((day, index) => {
          if (day.costCents === 0) return null;
          const height = Math.max((day.costCents / max) * PLOT_HEIGHT, 1);
          return (
            <rect class="bar" x={index + 0.15} y={PLOT_HEIGHT - height} width="0.7" height={height}>
              <title>{`${day.day}: ${formatCents(day.costCents)} over ${day.calls} ${day.calls === 1 ? 'call' : 'calls'}`}</title>
            </rect>
          );
        })}
      </svg>
      <div class="chart-dates" aria-hidden="true">
        {days.map((day, index) => {
          const fromToday = last - index;
          return <span class={fromToday % 10 === 0 ? 'date' : fromToday % 5 === 0 ? 'date minor' : undefined}>{fromToday % 5 === 0 ? day.day.slice(5) : ''}</span>;
        })}
      </div>
    </figure>
  );
};

/** Spend per operation as horizontal bars, largest first, with the figures beside them. */
export const OperationSpendChart: FC<{ operations: UsageReport['byOperation'] }> = ({ operations }) => {
  const rows = [...operations].sort((a, b) => b.costCents - a.costCents || b.calls - a.calls).slice(0, 12);
  const max = Math.max(...rows.map((row) => row.costCents), 0) || 1;
  return (
    <figure class="chart operations" aria-label="Spend per operation" data-chart="operation-spend">
      {rows.map((row) => {
        const width = (100 * row.costCents) / max;
        return (
          <div class="operation-row" title={`${row.operation}: ${formatCents(row.costCents)}, ${row.calls} calls (${row.failed} failed, not charged)`}>
            <code class="operation-name">{row.operation}</code>
            <svg class="operation-bar" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">
              <rect class="bar" x="0" y="0" width={row.costCents > 0 ? Math.max(width, 0.5) : 0} height="10" />
            </svg>
            <span class="operation-value">{`${formatCents(row.costCents)} · ${row.calls} ${row.calls === 1 ? 'call' : 'calls'}`}</span>
          </div>
        );
      })}
    </figure>
  );
};
