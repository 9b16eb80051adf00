import backlinksDomainIntersection from '../fixtures/dataforseo/backlinks-domain-intersection.json' with { type: 'json' };
import backlinksReferringDomains from '../fixtures/dataforseo/backlinks-referring-domains.json' with { type: 'json' };
import backlinksSummary from '../fixtures/dataforseo/backlinks-summary.json' with { type: 'json' };
import domainsByTechnology from '../fixtures/dataforseo/domain-analytics-domains-by-technology.json' with { type: 'json' };
import labsCompetitorsDomain from '../fixtures/dataforseo/labs-competitors-domain.json' with { type: 'json' };
import labsDomainIntersection from '../fixtures/dataforseo/labs-domain-intersection.json' with { type: 'json' };
import labsDomainRankOverview from '../fixtures/dataforseo/labs-domain-rank-overview.json' with { type: 'json' };
import labsKeywordIdeas from '../fixtures/dataforseo/labs-keyword-ideas.json' with { type: 'json' };
import labsKeywordOverview from '../fixtures/dataforseo/labs-keyword-overview.json' with { type: 'json' };
import labsRankedKeywords from '../fixtures/dataforseo/labs-ranked-keywords.json' with { type: 'json' };
import llmMentionsTopDomains from '../fixtures/dataforseo/llm-mentions-top-mentioned-domains.json' with { type: 'json' };
import llmResponsesChatGpt from '../fixtures/dataforseo/llm-responses-chat-gpt.json' with { type: 'json' };
import llmResponsesClaude from '../fixtures/dataforseo/llm-responses-claude.json' with { type: 'json' };
import llmResponsesPerplexity from '../fixtures/dataforseo/llm-responses-perplexity.json' with { type: 'json' };
import llmScraperChatGpt from '../fixtures/dataforseo/llm-scraper-chat-gpt.json' with { type: 'json' };
import onPageInstantPages from '../fixtures/dataforseo/on-page-instant-pages.json' with { type: 'json' };
import serpGoogleOrganic from '../fixtures/dataforseo/serp-google-organic.json' with { type: 'json' };

export const FAKE_DATAFORSEO = { login: 'fake-login', password: 'fake-password', baseUrl: 'https://dataforseo.fake' } as const;

/**
 * A fake of DataForSEO v3 live endpoints, speaking the wire format: HTTP Basic, a one-task array body,
 * `{version, status_code, ..., tasks: [{id, status_code, ..., data, result}]}` answers built from
 * recorded-shape fixtures. Row arrays honour the task's `offset` and `limit`.
 *
 * A marker anywhere in the task chooses the outcome, so a test provokes one class of answer:
 * `fail-NNNNN` (task status code), `topfail-NNNNN` (request status code), `http-NNN`, `not-json`,
 * `slow` (2 s late), `empty` (no rows, no citations), `flaky` (the first call of a task
 * fails with HTTP 500, later ones succeed).
 *
 * The fake runs in Node while tests run in workerd, so what it received is read back over its own
 * HTTP surface: `GET /__received?path=/v3/...&marker=...` answers `{count, last: {task, authorization}}`
 * for the tasks sent to that path whose JSON contains the marker.
 */
type Json = any;
type Task = Record<string, Json>;

const FIXTURES: Record<string, Json[]> = {
  '/v3/serp/google/organic/live/advanced': serpGoogleOrganic,
  '/v3/dataforseo_labs/google/keyword_ideas/live': labsKeywordIdeas,
  '/v3/dataforseo_labs/google/keyword_overview/live': labsKeywordOverview,
  '/v3/dataforseo_labs/google/domain_intersection/live': labsDomainIntersection,
  '/v3/dataforseo_labs/google/ranked_keywords/live': labsRankedKeywords,
  '/v3/dataforseo_labs/google/competitors_domain/live': labsCompetitorsDomain,
  '/v3/dataforseo_labs/google/domain_rank_overview/live': labsDomainRankOverview,
  '/v3/backlinks/summary/live': backlinksSummary,
  '/v3/backlinks/referring_domains/live': backlinksReferringDomains,
  '/v3/backlinks/domain_intersection/live': backlinksDomainIntersection,
  '/v3/domain_analytics/technologies/domains_by_technology/live': domainsByTechnology,
  '/v3/ai_optimization/llm_mentions/top_mentioned_domains/live': llmMentionsTopDomains,
  '/v3/ai_optimization/chat_gpt/llm_responses/live': llmResponsesChatGpt,
  '/v3/ai_optimization/perplexity/llm_responses/live': llmResponsesPerplexity,
  '/v3/ai_optimization/claude/llm_responses/live': llmResponsesClaude,
  '/v3/ai_optimization/chat_gpt/llm_scraper/live/advanced': llmScraperChatGpt,
  '/v3/on_page/instant_pages': onPageInstantPages,
};

const MESSAGES: Record<number, string> = {
  40000: 'You can set only one task at a time.',
  40100: 'You are not authorized to access this resource. See your login details here: https://app.dataforseo.com/api-access',
  40200: 'Payment Required.',
  40203: 'The cost limit has been exceeded. You can modify your cost limit in the user panel https://app.dataforseo.com/api-dashboard .',
  40400: 'Not Found.',
  40501: 'Invalid Field: \'target\'.',
  50000: 'Internal Error.',
};

interface Received {
  path: string;
  task: Task;
  authorization: string | null;
}

const received: Received[] = [];
const RECEIVED_KEPT = 5_000;
const flakyCalls = new Map<string, number>();

/** From a test: what the fake received at `path` in tasks whose JSON contains `marker`. */
export async function receivedBy(path: string, marker: string): Promise<{ count: number; last: { task: Record<string, unknown>; authorization: string } | null }> {
  const response = await fetch(`${FAKE_DATAFORSEO.baseUrl}/__received?${new URLSearchParams({ path, marker })}`);
  return (await response.json()) as { count: number; last: { task: Record<string, unknown>; authorization: string } | null };
}

export async function dataforseoUpstream(request: Request): Promise<Response> {
  const url = new URL(request.url);
  if (request.method === 'GET' && url.pathname === '/__received') return receivedAnswer(url);

  const authorization = request.headers.get('authorization');
  if (authorization !== `Basic ${btoa(`${FAKE_DATAFORSEO.login}:${FAKE_DATAFORSEO.password}`)}`) {
    return Response.json(envelope(40100, null), { status: 401 });
  }
  const fixture = FIXTURES[url.pathname];
  if (request.method !== 'POST' || !fixture) return Response.json(envelope(40400, null), { status: 404 });

  const body = (await request.json().catch(() => null)) as Json;
  if (!Array.isArray(body) || body.length !== 1 || typeof body[0] !== 'object' || body[0] === null) return Response.json(envelope(40000, null));
  const task = body[0] as Task;
  received.push({ path: url.pathname, task, authorization });
  if (received.length > RECEIVED_KEPT) received.shift();

  const text = JSON.stringify(task);
  const marker = (name: string) => new RegExp(`${name}-([0-9]+)`).exec(text)?.[1];
  if (text.includes('not-json')) return new Response('<html><body>502 Bad Gateway</body></html>', { headers: { 'content-type': 'text/html' } });
  if (text.includes('slow')) await new Promise((resolve) => setTimeout(resolve, 2_000));
  if (text.includes('flaky')) {
    const calls = (flakyCalls.get(text) ?? 0) + 1;
    flakyCalls.set(text, calls);
    if (calls === 1) return new Response('Internal Server Error', { status: 500 });
  }
  const httpStatus = marker('http');
  if (httpStatus) return httpFailure(Number(httpStatus));
  const topCode = marker('topfail');
  if (topCode) return Response.json(envelope(Number(topCode), null));
  const taskCode = marker('fail');
  if (taskCode) return Response.json(envelope(20000, taskOf(url.pathname, task, Number(taskCode), null)));

  return Response.json(envelope(20000, taskOf(url.pathname, task, 20000, resultFor(url.pathname, fixture, task, text.includes('empty')))));
}

function receivedAnswer(url: URL): Response {
  const path = url.searchParams.get('path');
  const marker = url.searchParams.get('marker') ?? '';
  const matching = received.filter((entry) => entry.path === path && JSON.stringify(entry.task).includes(marker));
  const last = matching.at(-1);
  return Response.json({ count: matching.length, last: last ? { task: last.task, authorization: last.authorization } : null });
}

function httpFailure(status: number): Response {
  if (status >= 500) return new Response('Internal Server Error', { status });
  const code = status === 402 ? 40200 : status === 401 ? 40100 : status * 100;
  return Response.json(envelope(code, null), { status });
}

function envelope(statusCode: number, task: Task | null) {
  const ok = statusCode === 20000;
  return {
    version: '0.1.20260812',
    status_code: statusCode,
    status_message: MESSAGES[statusCode] ?? (ok ? 'Ok.' : `Error ${statusCode}.`),
    time: '0.4812 sec.',
    cost: ok && task?.status_code === 20000 ? 0.0106 : 0,
    tasks_count: task ? 1 : 0,
    tasks_error: task && task.status_code !== 20000 ? 1 : 0,
    tasks: task ? [task] : null,
  };
}

function taskOf(path: string, task: Task, statusCode: number, result: Json[] | null): Task {
  const segments = path.split('/').filter(Boolean);
  return {
    id: `${Date.now().toString().slice(-8)}-1535-0139-0000-${crypto.randomUUID().slice(-12)}`,
    status_code: statusCode,
    status_message: statusCode === 20000 ? 'Ok.' : (MESSAGES[statusCode] ?? `Error ${statusCode}.`),
    time: '0.3950 sec.',
    cost: statusCode === 20000 ? 0.0106 : 0,
    result_count: result ? result.length : 0,
    path: segments,
    data: { api: segments[1], function: segments.at(-1) === 'live' ? segments.at(-2) : segments.at(-1), ...task },
    result,
  };
}

/** The fixture's result, shaped by what the task asked: rows within offset and limit, one row per keyword, ... */
function resultFor(path: string, fixture: Json[], task: Task, empty: boolean): Json[] {
  const first = structuredClone(fixture[0]);
  if (path.endsWith('/llm_responses/live')) {
    if (empty) for (const item of first.items) for (const section of item.sections) section.annotations = null;
    first.model_name = String(task.model_name);
    return [first];
  }
  if (path.endsWith('/llm_scraper/live/advanced')) {
    Object.assign(first, { keyword: task.keyword, location_code: task.location_code, language_code: task.language_code });
    if (empty) first.sources = [];
    return [first];
  }
  if (path === '/v3/backlinks/summary/live') return [{ ...first, target: task.target }];
  if (path === '/v3/on_page/instant_pages') return [{ ...first, items: [{ ...first.items[0], url: task.url }] }];
  if (!Array.isArray(first.items)) return [first];

  let items: Json[] = first.items;
  if (path.endsWith('/keyword_overview/live')) {
    items = (task.keywords as string[]).map((keyword) => ({ ...structuredClone(first.items[0]), keyword }));
  }
  if (path.endsWith('/competitors_domain/live')) items[0] = { ...items[0], domain: task.target };
  if (path === '/v3/backlinks/domain_intersection/live') {
    const keys = Object.keys(task.targets as Record<string, string>);
    items = items.map((item) => ({ ...item, domain_intersection: Object.fromEntries(keys.map((key) => [key, item.domain_intersection['1']])) }));
  }
  const offset = typeof task.offset === 'number' ? task.offset : 0;
  const limit = typeof task.limit === 'number' ? task.limit : items.length;
  items = empty ? [] : items.slice(offset, offset + limit);
  return [{ ...first, items_count: items.length, items }];
}
