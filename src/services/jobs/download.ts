import Papa from 'papaparse';
import { DOWNLOAD_PAGE_ITEMS } from '../../core/protocols/job';
import { itemRows, readItem, type ItemRow, type ItemStores, type StoredItem } from './store';

export const CSV_COLUMNS = ['index', 'status', 'costCents', 'errorCode', 'errorMessage', 'input', 'data'] as const;

function csvRowOf(item: ItemRow): unknown[] {
  return [item.index, item.status, item.costCents, item.error?.code ?? '', item.error?.message ?? '', JSON.stringify(item.input), item.data === undefined ? '' : JSON.stringify(item.data)];
}

/**
 * Every item of the job as NDJSON or CSV, pulled as the client reads: one item (and its answer, read from R2
 * when kept there) per pull, the rows read from D1 a page at a time, so memory holds a page of rows and one
 * answer whatever the job's size.
 */
export function streamItems({ DB: db, RESULTS: results }: ItemStores, jobId: string, status: ItemRow['status'] | null, format: 'ndjson' | 'csv'): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let page: StoredItem[] = [];
  let after = -1;
  let more = true;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        if (format === 'csv') controller.enqueue(encoder.encode(Papa.unparse([[...CSV_COLUMNS]], { newline: '\r\n' }) + '\r\n'));
      },
      async pull(controller) {
        if (page.length === 0 && more) {
          page = await itemRows(db, jobId, after, DOWNLOAD_PAGE_ITEMS, status);
          more = page.length === DOWNLOAD_PAGE_ITEMS;
          after = page.at(-1)?.idx ?? after;
        }
        const row = page.shift();
        if (!row) return controller.close();
        const item = await readItem(results, jobId, row);
        controller.enqueue(encoder.encode(format === 'csv' ? Papa.unparse([csvRowOf(item)], { newline: '\r\n' }) + '\r\n' : `${JSON.stringify(item)}\n`));
      },
    },
    { highWaterMark: 0 },
  );
}
