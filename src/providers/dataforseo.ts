import type { Env } from '../core/config';
import type { ApiError } from '../core/errors';
import type { ProviderCall } from '../core/operation';
import { normalizeUpstream } from './normalize';

const PROVIDER = 'DataForSEO';
const DEFAULT_BASE_URL = 'https://api.dataforseo.com';

/** One task of a v3 request; the body is always an array of exactly one. */
export type DataForSeoTask = Record<string, unknown>;

interface StatusBearing {
  status_code?: unknown;
  status_message?: unknown;
}

interface V3Answer extends StatusBearing {
  tasks?: (StatusBearing & { result?: unknown })[] | null;
}

/**
 * A DataForSEO v3 live endpoint: HTTP Basic, a one-task array body, the answer in `tasks[0].result`.
 * The payload handed back is `{ result }`, the spec's `result` array, whatever the endpoint.
 */
export function dataforseoLive<Input>(path: string, taskOf: (input: Input) => DataForSeoTask): ProviderCall<Input> {
  return async (input, { env, signal }) => {
    const { authorization, baseUrl } = settingsOf(env);
    const response = await normalizeUpstream.fetch(PROVIDER, `${baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify([withoutUndefined(taskOf(input))]),
      signal,
    });
    if (!response.ok) throw await normalizeUpstream.fromStatus(PROVIDER, response);

    const answer = (await normalizeUpstream.json(PROVIDER, response, signal)) as V3Answer | null;
    // The whole request can fail (top level) or only its task; both carry the same code families.
    const failure = failureOf(answer, path) ?? failureOf(answer?.tasks?.[0], path);
    if (failure) throw failure;
    const task = answer?.tasks?.[0];
    if (!task) throw normalizeUpstream.failed(PROVIDER, 'answered without a task');
    return { data: { result: Array.isArray(task.result) ? task.result : [] } };
  };
}

function settingsOf(env: Env): { authorization: string; baseUrl: string } {
  const login = env.DATAFORSEO_LOGIN;
  const password = env.DATAFORSEO_PASSWORD;
  if (!login || !password) {
    const missing = [login ? undefined : 'DATAFORSEO_LOGIN', password ? undefined : 'DATAFORSEO_PASSWORD'].filter((name) => name !== undefined);
    throw normalizeUpstream.unavailable(PROVIDER, missing);
  }
  const baseUrl = (env.DATAFORSEO_BASE_URL || DEFAULT_BASE_URL).replace(/\/+$/, '');
  return { authorization: basicAuthorization(login, password), baseUrl };
}

/**
 * DataForSEO's status codes (docs.dataforseo.com/v3/appendix/errors): 20000 is success; 401xx is
 * authentication (40100: our login refused); 402xx is our account's money and limits (40200 payment
 * required, 40203 the daily cost limit, the rest of the family balance, subscription and rate limits);
 * other 4xxxx are the task's own fault; 5xxxx are the vendor's failures.
 */
function failureOf(part: StatusBearing | null | undefined, path: string): ApiError | undefined {
  if (!part || typeof part.status_code !== 'number') return undefined;
  const code = part.status_code;
  if (code === 20000) return undefined;
  const message = typeof part.status_message === 'string' ? part.status_message : `status ${code}`;
  if (code === 40100) {
    console.error(JSON.stringify({ level: 'error', provider: PROVIDER, path, statusCode: code, statusMessage: message, note: 'our upstream credential was refused' }));
    return normalizeUpstream.credentialsRefused(PROVIDER);
  }
  if (code >= 40200 && code < 40300) {
    console.error(JSON.stringify({ level: 'error', provider: PROVIDER, path, statusCode: code, statusMessage: message, note: 'our upstream account is out of funds or limits' }));
    return normalizeUpstream.creditsExhausted(PROVIDER);
  }
  if (code >= 50000) return normalizeUpstream.failed(PROVIDER, `status ${code} (${message})`);
  return normalizeUpstream.rejected(PROVIDER, message);
}

/**
 * Serp, LLM scraper and LLM mentions keywords are URL-decoded upstream (`%##` decoded, `+` read as a
 * space), so a literal `%` or `+` must travel as `%25` and `%2B` for the query to mean what was asked.
 */
export function escapeKeyword(keyword: string): string {
  return keyword.replaceAll('%', '%25').replaceAll('+', '%2B');
}

/**
 * The task without what says nothing, so the vendor's own defaults apply: an optional input left out, and an empty
 * `filters` or `order_by` (none, as their absence is).
 */
function withoutUndefined(task: DataForSeoTask): DataForSeoTask {
  return Object.fromEntries(
    Object.entries(task).filter(([name, value]) => value !== undefined && !((name === 'filters' || name === 'order_by') && Array.isArray(value) && value.length === 0)),
  );
}

/** HTTP Basic credentials as DataForSEO reads them: login and password in UTF-8, base64-encoded, so any text goes. */
export function basicAuthorization(login: string, password: string): string {
  return `Basic ${base64(`${login}:${password}`)}`;
}

function base64(text: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}
