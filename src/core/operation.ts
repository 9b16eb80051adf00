import { z } from '@hono/zod-openapi';
import type { Env } from './config';
import type { SubrequestBudget } from './subrequests';
import type { Vendor, VendorEndpoint } from './vendor';

/** What a provider hands back on success; failures are thrown as ApiError by the normalizer. */
export interface ProviderResult {
  data: unknown;
  /** Upstream's human message, kept beside `data` where the spec shows one. */
  message?: string;
  /** Which provider answered, where an operation has more than one and prices them differently. */
  servedBy?: 'builtin';
}

export interface ProviderContext {
  env: Env;
  /** Aborted when the operation's time limit passes or the client goes away. */
  signal: AbortSignal;
  /** The organization the call is billed to (change tracking compares within it; a page it renders takes one of its render slots). */
  organizationId: string;
  /** What the call may still make of subrequests beyond the pipeline's own (core/subrequests.ts); a provider handed none makes its own. */
  subrequests?: SubrequestBudget;
}

export type ProviderCall<Input> = (input: Input, context: ProviderContext) => Promise<ProviderResult>;

/** How a price is shown in the catalog (and documented in its OpenAPI schema). */
export const PriceDisplay = z.object({
  cents: z.number().openapi({ description: 'Price in cents per unit below.' }),
  per: z.enum(['request', 'row', 'results page', 'keyword']),
  note: z.string().optional(),
});
export type PriceDisplay = z.infer<typeof PriceDisplay>;

export interface Price<Input> {
  display: PriceDisplay;
  /**
   * The most the call can cost: held before the upstream call. In units (1/10,000 cent). `env`, the settings the
   * call runs under, narrows it where they decide what can be charged (the built-in scraper has no enhanced proxy).
   */
  quote(input: Input, env?: Env): number;
  /** What the call actually costs, from the upstream result; never more than the quote. */
  settle(input: Input, result: ProviderResult): number;
}

/** One operation of the registry: everything REST, OpenAPI, MCP and the catalog need, declared once. */
export interface Operation<Input extends z.ZodObject = z.ZodObject, Output extends z.ZodType = z.ZodType> {
  /** Platform slug: `linkedin`, `web`, `seo`, ... Also the MCP group. */
  platform: string;
  /** Kebab-case name, the last path segment: `get-company-by-domain`. */
  name: string;
  /** MCP tool name when it is not `data_<platform>_<name>` (serp is `data_seo_google_search`). */
  mcpName?: string;
  method: 'GET' | 'POST';
  /** Paths served; the first is canonical. */
  paths: [string, ...string[]];
  summary: string;
  description: string;
  /** Query schema for GET, body schema for POST; strict, so unknown fields are refused. Its cross-field
   *  rules are refinements whose issues name the offending field. */
  input: Input;
  /** The schema of `data` on success, for the OpenAPI document. */
  output: Output;
  price: Price<z.infer<Input>>;
  /** The response keeps the upstream's `message` beside `data` (where the spec shows one). */
  keepsMessage?: boolean;
  call: ProviderCall<z.infer<Input>>;
  /**
   * Checks of a valid input that need the provider's own code (the built-in scraper's CSS parser), run by the pipeline
   * before anything is metered or asked, on every path: a sandbox key's dry run and a data job's submission too, which
   * never reach `call`. Throws ApiError VALIDATION_ERROR naming the fields.
   */
  check?: (input: z.infer<Input>, env: Env) => void;
  /** Time limit of the upstream call; after it the call fails with 502 and is not charged. */
  timeoutMs: number | ((input: z.infer<Input>) => number);
  /**
   * How long an identical call (same canonical input, same organization) may be answered from cache,
   * in milliseconds; 0 or absent: never cached.
   */
  freshnessMs?: number | ((input: z.infer<Input>) => number);
  /** What makes two calls identical for the cache, when not the whole input (scrape leaves out maxAge). */
  cacheKeyOf?: (input: z.infer<Input>) => unknown;
  /** A valid input, shown in the reference and walked by the registry-generated tests. */
  example?: z.input<Input>;
  /** The `data` answered to `example`, shown beside it in the reference (vendor rows; others use src/api/examples.ts). */
  answerExample?: unknown;
  /** The vendor endpoint serving it, for operations declared as a vendor table row. */
  upstream?: { vendor: Vendor; endpoint: VendorEndpoint };
}

/**
 * A typed registry entry joins the registry. The cast is sound: the pipeline hands each entry's
 * functions only the input its own schema parsed; TypeScript cannot see that through the array.
 */
export function defineOperation<Input extends z.ZodObject>(operation: Operation<Input>): Operation {
  return operation as unknown as Operation;
}

export function timeLimitOf<Input extends z.ZodObject>(operation: Operation<Input>, input: z.infer<Input>): number {
  return typeof operation.timeoutMs === 'function' ? operation.timeoutMs(input) : operation.timeoutMs;
}

export function freshnessOf<Input extends z.ZodObject>(operation: Operation<Input>, input: z.infer<Input>): number {
  const freshness = operation.freshnessMs ?? 0;
  return typeof freshness === 'function' ? freshness(input) : freshness;
}

export function mcpToolName(operation: Pick<Operation, 'platform' | 'name' | 'mcpName'>): string {
  return operation.mcpName ?? `data_${operation.platform}_${operation.name.replaceAll('-', '_')}`;
}

export function operationId(operation: Pick<Operation, 'platform' | 'name'>): string {
  return `${operation.platform}.${operation.name}`;
}

/** The operation as one call made it: through a connection it is another call (another account, another price). */
export function operationIdThrough(operation: Pick<Operation, 'platform' | 'name'>, connectionId: string | undefined): string {
  return connectionId ? `${operationId(operation)}@${connectionId}` : operationId(operation);
}
