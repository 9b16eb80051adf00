// The databases page in the browser: a query's answer shown under the query box.
import { $, onAnswer } from '../browser/dashboard';

/** POST /api/workspaces/{id}/databases/{id}/query's answer. */
interface QueryAnswer {
  columns: string[];
  rows: (string | number | null | { base64: string })[][];
  rowsRead: number;
  rowsWritten: number;
  durationMs: number;
}

/** A query's answer as a table in the form's [data-query-result], built node by node: every value is text, never markup. */
onAnswer<QueryAnswer>('rows', (data, source) => {
  const slot = $('[data-query-result]', source)!;
  const summary = document.createElement('p');
  summary.className = 'muted small';
  summary.textContent = data.rows.length + (data.rows.length === 1 ? ' row' : ' rows') + ' · ' + data.rowsRead + ' read · ' + data.rowsWritten + ' written · ' + data.durationMs + ' ms';
  if (data.columns.length === 0) return slot.replaceChildren(summary);
  const table = document.createElement('table');
  const head = table.createTHead().insertRow();
  for (const column of data.columns) {
    const cell = document.createElement('th');
    cell.scope = 'col';
    cell.textContent = column;
    head.append(cell);
  }
  const body = table.createTBody();
  for (const row of data.rows) {
    const line = body.insertRow();
    for (const value of row) {
      const cell = line.insertCell();
      if (value === null) cell.className = 'null';
      cell.textContent = value === null ? 'NULL' : typeof value === 'object' ? 'blob (base64) ' + value.base64 : String(value);
    }
  }
  const wrap = document.createElement('div');
  wrap.className = 'table-wrap';
  wrap.append(table);
  slot.replaceChildren(summary, wrap);
});
