import type { Env } from '../../core/config';
import { normalizeUpstream } from '../normalize';
import type { Fetcher } from './resolver';
import { SafeFetcher } from './safe-fetch';
import { builtinWebSettings } from './settings';
import type { SubrequestBudget } from '../../core/subrequests';

/**
 * The size and type of a media file without downloading it: a HEAD through the safe fetch (public
 * addresses only, every redirect checked), and where the server will not say (HEAD refused, or no
 * Content-Length) a GET of its first byte, whose Content-Range names the whole size; that response's body
 * is cancelled unread.
 */
export interface MeasuredMedia {
  /** The address asked about. */
  url: string;
  /** Where its redirects led: the file itself. */
  directUrl: string;
  /** The file's media type, lower case (video/mp4, image/jpeg); null when the server names none. */
  mediaType: string | null;
  sizeBytes: number | null;
  /** sizeBytes in megabytes of 1,048,576 bytes, two decimals. */
  sizeMb: number | null;
}

const PROVIDER = 'The media host';
const BYTES_PER_MB = 1024 * 1024;

export interface MediaContext {
  env: Env;
  signal: AbortSignal;
  /** Defaults to the platform's fetch; tests hand in their fake web. */
  fetch?: Fetcher;
  /** The call's subrequest budget, which its files' requests share. */
  subrequests?: SubrequestBudget;
}

/** One fetcher for the files of one call, so their host names are resolved once and their requests counted together. */
export function mediaFetcher(context: MediaContext): SafeFetcher {
  return new SafeFetcher({
    settings: builtinWebSettings(context.env),
    signal: context.signal,
    ...(context.fetch ? { fetch: context.fetch } : {}),
    ...(context.subrequests ? { budget: context.subrequests } : {}),
  });
}

export async function measureMedia(url: string, fetcher: SafeFetcher, field = 'url'): Promise<MeasuredMedia> {
  const head = await fetcher.head(url, { field });
  let status = head.status;
  let directUrl = head.url;
  let mediaType = head.contentType || null;
  let sizeBytes = status < 300 ? lengthOf(head.headers.get('content-length')) : null;
  if (sizeBytes === null && status !== 404 && status !== 410) {
    // A first-byte GET; the cap is lifted because the body is never read, only its headers.
    const ranged = await fetcher.open(directUrl, { field, headers: { range: 'bytes=0-0' }, maxBytes: Number.MAX_SAFE_INTEGER });
    await ranged.body.cancel();
    status = ranged.status;
    directUrl = ranged.url;
    mediaType = ranged.contentType || mediaType;
    sizeBytes = status === 206 ? totalOf(ranged.headers.get('content-range')) : status === 200 ? lengthOf(ranged.headers.get('content-length')) : null;
  }
  if (status >= 400) throw normalizeUpstream.rejected(PROVIDER, `${directUrl} answered HTTP ${status} (a media link that expired, or one that is not public)`);
  return { url, directUrl, mediaType, sizeBytes, sizeMb: sizeBytes === null ? null : Math.round((sizeBytes / BYTES_PER_MB) * 100) / 100 };
}

function lengthOf(header: string | null): number | null {
  if (header === null || !/^\d+$/.test(header.trim())) return null;
  return Number(header);
}

/** `bytes 0-0/5242880` → 5242880; `bytes 0-0/*` (unknown) → null. */
function totalOf(header: string | null): number | null {
  const total = /\/(\d+)\s*$/.exec(header ?? '')?.[1];
  return total === undefined ? null : Number(total);
}
