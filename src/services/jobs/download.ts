import Papa from 'papaparse';
import { itemPage, type ItemRow } from './store';

/** Rows read from D1 per page of a streamed download. */
const STREAM_PAGE = 100;

export const CSV_COLUMNS = ['index', 'status', 'costCents', 'errorCode', 'errorMessage', 'input', 'data'] as const;

function csvRowOf(item: ItemRow): unknown[] {
  return [item.index, item.status, item.costCents, item.error?.code ?? '', item.error?.message ?? '', JSON.stringify(item.input), item.data === undefined ? '' : JSON.stringify(item.data)];
}

/**
 * Every item of the job as NDJSON or CSV, read from D1 a page at a time as the client reads: pull-based,
 * so at most one page is in memory whatever the job's size.
 */
export function streamItems(db: D1Database, jobId: string, status: ItemRow['status'] | null, format: 'ndjson' | 'csv'): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let after = -1;
  let first = true;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const items = await itemPage(db, jobId, after, STREAM_PAGE, status);
        let text = '';
        if (format === 'csv') {
          if (first) text += Papa.unparse([[...CSV_COLUMNS]], { newline: '\r\n' }) + '\r\n';
          if (items.length > 0) text += Papa.unparse(items.map(csvRowOf), { newline: '\r\n' }) + '\r\n';
        } else {
          for (const item of items) text += `${JSON.stringify(item)}\n`;
        }
        first = false;
        if (text) controller.enqueue(encoder.encode(text));
        if (items.length < STREAM_PAGE) controller.close();
        else after = items.at(-1)!.index;
      },
    },
    { highWaterMark: 0 },
  );
}
