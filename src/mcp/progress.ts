import type { ProgressToken, ServerNotification } from '@modelcontextprotocol/sdk/types.js';

/**
 * How often a tool call still running says so to a client that asked for progress. Well under the shortest
 * timeout a client resets on progress: the MCP Inspector's 10 s; the TypeScript SDK's default is 60 s.
 */
export const PROGRESS_EVERY_MS = 5_000;

/** The progress token of a `tools/call` request, when its client sent one (`params._meta.progressToken`). */
export function progressTokenOf(body: unknown): ProgressToken | undefined {
  const message = body as { method?: unknown; params?: { _meta?: { progressToken?: unknown } } } | null;
  if (typeof message !== 'object' || message === null || message.method !== 'tools/call') return undefined;
  const token = message.params?._meta?.progressToken;
  return typeof token === 'string' || typeof token === 'number' ? token : undefined;
}

/**
 * Waits for `work`, telling the client every PROGRESS_EVERY_MS that it is still running (MCP's
 * `notifications/progress`, `progress` the seconds waited so far, so it grows with each) when the client sent a
 * progress token. A client that times a request out unless it hears progress (the TypeScript SDK's
 * `resetTimeoutOnProgress`, the Inspector's default) then waits for a vendor slower than its timeout, rather than
 * giving up on a call that goes on, and is charged, without it. A notification that cannot be sent (the client
 * went away) changes nothing: the call ends as it would have.
 */
export async function withProgress<T>(token: ProgressToken | undefined, notify: (notification: ServerNotification) => Promise<void>, work: Promise<T>): Promise<T> {
  if (token === undefined) return work;
  let ticks = 0;
  const timer = setInterval(() => {
    ticks += 1;
    const seconds = (ticks * PROGRESS_EVERY_MS) / 1000;
    notify({ method: 'notifications/progress', params: { progressToken: token, progress: seconds, message: `Still running after ${seconds} s; the result follows on this stream.` } }).catch(() => {});
  }, PROGRESS_EVERY_MS);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}
