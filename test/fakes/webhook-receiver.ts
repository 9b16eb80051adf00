/**
 * A webhook receiver on a public-looking host (hooks.example.com, which the fake resolver answers with a
 * public address), reached through the workers pool's outbound service, so the safe fetch's checks run
 * in full and nothing in production is loosened for tests. What it answers is in the path:
 *   /ok/...        204
 *   /fail-N/...    503 for the first N requests to that path, then 204
 *   /slow-MS/...   204 after MS milliseconds
 * Every request it received (headers and the exact body) can be read back at GET /_received?path=<path>.
 */
export const FAKE_RECEIVER_HOST = 'hooks.example.com';
export const FAKE_RECEIVER = `https://${FAKE_RECEIVER_HOST}`;

export interface ReceivedRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
  answered: number;
}

const received: ReceivedRequest[] = [];

export async function webhookReceiver(request: Request): Promise<Response> {
  const url = new URL(request.url);
  if (request.method === 'GET' && url.pathname === '/_received') {
    return Response.json(received.filter((entry) => entry.path === url.searchParams.get('path')));
  }
  if (request.method !== 'POST') return new Response('POST only', { status: 405 });
  const earlier = received.filter((entry) => entry.path === url.pathname).length;
  const failures = Number(/^\/fail-(\d+)\//.exec(url.pathname)?.[1] ?? 0);
  const answered = earlier < failures ? 503 : 204;
  const slow = Number(/^\/slow-(\d+)\//.exec(url.pathname)?.[1] ?? 0);
  if (slow) await new Promise((resolve) => setTimeout(resolve, slow));
  received.push({ path: url.pathname, headers: Object.fromEntries(request.headers), body: await request.text(), answered });
  return new Response(answered === 204 ? null : 'try again later', { status: answered });
}
