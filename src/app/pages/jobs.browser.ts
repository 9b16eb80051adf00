// The Jobs page in the browser: a CSV read here (papaparse) and its columns mapped to the chosen operation's
// fields, sent as the job's inputs; the progress of running jobs followed until they end.
import Papa from 'papaparse';
import { $ } from '../browser/dashboard';
import { JOB_STATUS_BADGE, jobReason, jobStatusLabel } from './job-status';
import type { JobStatus, WaitingOn } from '../../core/protocols/job';

interface JobOperation {
  name: string;
  fields: { name: string; required: boolean }[];
}

interface JobView {
  id: string;
  status: JobStatus;
  reason: string | null;
  waitingOn: WaitingOn | null;
  counts: { total: number; succeeded: number; failed: number; pending: number };
  spentCents: number;
  finishedAt: string | null;
}

interface Envelope<Data> {
  success: boolean;
  data?: Data;
  error?: { message?: string; details?: { field: string; message: string }[] };
}

/** How often a page with a running job asks for its progress. */
const POLL_MS = 1000;

const form = $<HTMLFormElement>('form[data-job-form]');
if (form) {
  const select = $<HTMLSelectElement>('[data-job-operations]', form)!;
  const operations = JSON.parse(select.dataset.jobOperations || '[]') as JobOperation[];
  const file = $<HTMLInputElement>('input[type="file"]', form)!;
  let csv: { columns: string[]; rows: Record<string, string>[] } | null = null;

  const fieldError = (name: string, message: string) => {
    const slot = $('[data-field-error="' + name + '"]', form);
    if (slot) slot.textContent = message;
  };

  /** One select per field of the operation, preset to the column of the same name (any case). */
  const showMapping = () => {
    const box = $('[data-job-mapping]', form)!;
    const slot = $('[data-job-fields]', form)!;
    const operation = operations.find((entry) => entry.name === select.value);
    if (!csv || !operation) {
      box.hidden = true;
      return;
    }
    $('[data-job-preview]', form)!.textContent = csv.rows.length + (csv.rows.length === 1 ? ' row' : ' rows') + ' · columns: ' + csv.columns.join(', ');
    slot.replaceChildren(
      ...operation.fields.map((field) => {
        const wrap = document.createElement('div');
        wrap.className = 'field';
        const label = document.createElement('label');
        label.htmlFor = 'map-' + field.name;
        label.textContent = field.name + (field.required ? ' (required)' : '');
        const choice = document.createElement('select');
        choice.id = 'map-' + field.name;
        choice.dataset.jobField = field.name;
        choice.append(new Option('— not sent —', ''));
        for (const column of csv!.columns) choice.append(new Option(column, column));
        choice.value = csv!.columns.find((column) => column.trim().toLowerCase() === field.name.toLowerCase()) ?? '';
        wrap.append(label, choice);
        return wrap;
      }),
    );
    box.hidden = false;
  };

  file.addEventListener('change', () => {
    fieldError('inputs', '');
    const chosen = file.files && file.files[0];
    if (!chosen) {
      csv = null;
      return showMapping();
    }
    Papa.parse<Record<string, string>>(chosen, {
      header: true,
      skipEmptyLines: 'greedy',
      complete: (result) => {
        csv = { columns: (result.meta.fields ?? []).filter((column) => column !== ''), rows: result.data };
        // A file of one column has no delimiter to find: Papa Parse notes it and reads the column, which is right.
        const problem = result.errors.find((error) => error.code !== 'UndetectableDelimiter');
        if (problem) fieldError('inputs', 'Row ' + ((problem.row ?? 0) + 2) + ': ' + problem.message);
        showMapping();
      },
      error: (error) => fieldError('inputs', error.message),
    });
  });
  select.addEventListener('change', showMapping);
  // The table is asked for only once results are to go into a database.
  const database = $<HTMLSelectElement>('select[name="databaseId"]', form);
  const tableField = $<HTMLElement>('[data-into-table]', form);
  if (database && tableField) {
    const showTable = () => (tableField.hidden = database.value === '');
    database.addEventListener('change', showTable);
    showTable();
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    for (const slot of form.querySelectorAll('[data-field-error]')) slot.textContent = '';
    const summary = $('.form-error', form)!;
    summary.textContent = '';
    if (!csv || csv.rows.length === 0) return fieldError('inputs', 'Choose a CSV file with a header row and at least one row.');
    const mapping = [...form.querySelectorAll<HTMLSelectElement>('[data-job-field]')].filter((choice) => choice.value !== '');
    if (mapping.length === 0) return fieldError('inputs', 'Map at least one column to a field.');
    // A cell left empty is not sent: the operation's own default (or its refusal of a missing field) applies.
    const inputs = csv.rows.map((row) => Object.fromEntries(mapping.map((choice) => [choice.dataset.jobField!, row[choice.value] ?? '']).filter(([, value]) => value !== '')));
    const name = ($<HTMLInputElement>('input[name="name"]', form)!.value || '').trim();
    const connectionId = $<HTMLSelectElement>('select[name="connectionId"]', form)?.value || '';
    const databaseId = $<HTMLSelectElement>('select[name="databaseId"]', form)?.value || '';
    const table = ($<HTMLInputElement>('input[name="table"]', form)?.value || '').trim();
    if (databaseId && !table) return fieldError('into.table', 'Name the table the results go into.');
    const button = $<HTMLButtonElement>('[type="submit"]', form)!;
    button.disabled = true;
    try {
      const response = await fetch(form.dataset.jobForm!, {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ operation: select.value, inputs, ...(name ? { name } : {}), ...(connectionId ? { connectionId } : {}), ...(databaseId ? { into: { databaseId, table } } : {}) }),
      });
      const answer = (await response.json().catch(() => ({ success: false }))) as Envelope<JobView>;
      if (answer.success) return location.reload();
      // An item's refusal names it (inputs[3].domain): said under the file, as a CSV row (the header is row 1).
      const detail = answer.error?.details?.[0];
      const item = detail && /^inputs\[(\d+)\]\.?(.*)$/.exec(detail.field);
      if (detail && item) fieldError('inputs', 'Row ' + (Number(item[1]) + 2) + (item[2] ? ', ' + item[2] : '') + ': ' + detail.message);
      else if (detail) fieldError(detail.field, detail.message);
      summary.textContent = answer.error?.message || 'The server answered ' + response.status + '.';
    } finally {
      button.disabled = false;
    }
  });
}

/** While a job of the page runs, its bar, counts, spend and status follow it; a job that ends reloads the page (its actions change). */
const table = $<HTMLTableElement>('table[data-jobs]');
if (table && table.querySelector('tr[data-job-active]')) {
  const cents = (value: number) => '$' + (value / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: value % 1 === 0 ? 2 : 4 });
  const poll = async () => {
    const answer = (await (await fetch(table.dataset.jobs!, { credentials: 'same-origin' })).json().catch(() => ({ success: false }))) as Envelope<{ jobs: JobView[] }>;
    let running = false;
    let ended = false;
    for (const job of answer.data?.jobs ?? []) {
      const row = table.querySelector<HTMLTableRowElement>('tr[data-job-id="' + job.id + '"]');
      if (!row || !row.hasAttribute('data-job-active')) continue;
      const done = job.counts.succeeded + job.counts.failed;
      $<HTMLProgressElement>('[data-job-bar]', row)!.value = done;
      $('[data-job-percent]', row)!.textContent = (job.counts.total === 0 ? 100 : Math.floor((done / job.counts.total) * 100)) + ' %';
      $('[data-job-counts]', row)!.textContent =
        ' · ' + job.counts.succeeded + ' succeeded, ' + job.counts.failed + ' failed, ' + job.counts.pending + ' pending of ' + job.counts.total;
      $('[data-job-spent]', row)!.textContent = cents(job.spentCents);
      const status = $('[data-job-status]', row)!;
      status.className = JOB_STATUS_BADGE[job.status];
      status.textContent = jobStatusLabel(job.status, job.waitingOn);
      $('[data-job-reason]', row)!.textContent = jobReason(job.reason, job.waitingOn);
      $('[data-job-money]', row)!.hidden = job.waitingOn !== 'money' && job.waitingOn !== 'plan';
      $('[data-job-limit]', row)!.hidden = job.waitingOn !== 'key_limit';
      if (job.finishedAt === null) running = true;
      else ended = true;
    }
    if (ended) return location.reload();
    if (running) setTimeout(poll, POLL_MS);
  };
  setTimeout(poll, POLL_MS);
}
