import type { Env } from '../../core/config';
import type { Renderer } from '../../core/render';
import type { SubrequestBudget } from '../../core/subrequests';
import type { Fetcher } from './resolver';

/**
 * The fields of the /scrape and /map inputs this provider reads, written structurally so the registry's
 * zod schemas (src/operations/web.ts) stay the one source of truth: their parsed types fit these.
 */

export type ScrapeFormat =
  | 'markdown'
  | 'summary'
  | 'html'
  | 'rawHtml'
  | 'links'
  | 'images'
  | { type: 'json'; schema?: unknown; prompt?: string }
  | { type: 'screenshot'; fullPage?: boolean; quality?: number }
  | { type: 'changeTracking'; modes?: readonly ('git-diff' | 'json')[] };

export interface PageLocation {
  country?: string;
  languages?: readonly string[];
}

export interface ScrapeInput {
  url: string;
  formats?: readonly ScrapeFormat[];
  onlyMainContent?: boolean;
  includeTags?: readonly string[];
  excludeTags?: readonly string[];
  waitFor?: number;
  mobile?: boolean;
  timeout?: number;
  parsers?: readonly ('pdf' | { type: 'pdf'; mode?: string; maxPages?: number })[];
  proxy?: string;
  location?: PageLocation;
  /** Firecrawl's page actions, as the registry's schema parsed them; render-policy.ts checks which are performed. */
  actions?: readonly { type: string; [field: string]: unknown }[];
  blockAds?: boolean;
}

export interface MapInput {
  url: string;
  search?: string;
  sitemap?: 'skip' | 'include' | 'only';
  includeSubdomains?: boolean;
  ignoreQueryParameters?: boolean;
  limit?: number;
  timeout?: number;
  location?: PageLocation;
}

/** What a call of the built-in provider gets: the pipeline's context, plus what only this provider needs. */
export interface BuiltinWebContext {
  env: Env;
  /** Aborted when the operation's time limit passes or the client goes away. */
  signal: AbortSignal;
  /** Whose previous scrapes change tracking compares with, and whose render slots a rendered page takes (none without it). */
  organizationId?: string;
  /** Defaults to the platform's fetch; tests hand in their fake web. */
  fetch?: Fetcher;
  /** Defaults to the Browser Rendering binding's renderer when the worker has one; tests hand in theirs. */
  renderer?: Renderer;
  /** The call's subrequest budget, which its fetches, lookups and waits for a browser share; one of its own when none is given. */
  subrequests?: SubrequestBudget;
}
