import type { z } from '@hono/zod-openapi';
import type { Vendor, VendorEndpoint } from '../core/vendor';
import { vendorCall } from '../providers/vendor';
import { perRequest } from './pricing';
import { defineOperation, type Operation, type Price } from '../core/operation';

/** One operation served by a vendor endpoint: a table row, not a function. */
export interface VendorOperationRow<Input extends z.ZodObject> {
  name: string;
  summary: string;
  description: string;
  /** GET (query parameters) for lookups; POST (JSON body) where the input is structured. Default GET. */
  method?: 'GET' | 'POST';
  input: Input;
  example: z.input<Input>;
  /** The `data` the example answers, for the OpenAPI document: the vendor's payload as `read` gives it, shortened. */
  answerExample?: unknown;
  /** The schema of `data`: the vendor's payload, with the fields its documentation names. */
  output: z.ZodType;
  endpoint: VendorEndpoint;
  /** Cents per successful request, or a price that varies with the answer. */
  price: number | Price<z.infer<Input>>;
  keepsMessage?: boolean;
  freshnessMs?: number;
  timeoutMs?: number;
}

interface GroupDefaults {
  platform: string;
  vendor: Vendor;
  /** Time limit of every call of the group unless a row says otherwise. */
  timeoutMs: number;
  /** How long an identical call may be answered from cache unless a row says otherwise. */
  freshnessMs: number;
}

/** The registry entries of one vendor's table: paths, MCP names and docs follow from each row. */
export function vendorOperations(group: GroupDefaults, rows: VendorOperationRow<z.ZodObject>[]): Operation[] {
  return rows.map((row) =>
    defineOperation({
      platform: group.platform,
      name: row.name,
      method: row.method ?? 'GET',
      paths: [`/v1/data/${group.platform}/${row.name}`],
      summary: row.summary,
      description: row.description,
      input: row.input,
      output: row.output,
      price: typeof row.price === 'number' ? perRequest(row.price) : row.price,
      ...(row.keepsMessage ? { keepsMessage: true } : {}),
      call: vendorCall(group.vendor, row.endpoint),
      timeoutMs: row.timeoutMs ?? group.timeoutMs,
      freshnessMs: row.freshnessMs ?? group.freshnessMs,
      example: row.example,
      answerExample: row.answerExample,
      upstream: { vendor: group.vendor, endpoint: row.endpoint },
    }),
  );
}

/** A typed row: the example and the price are checked against the row's own input schema. */
export function row<Input extends z.ZodObject>(definition: VendorOperationRow<Input>): VendorOperationRow<z.ZodObject> {
  return definition as unknown as VendorOperationRow<z.ZodObject>;
}
