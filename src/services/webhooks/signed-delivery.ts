import { Webhook } from 'standardwebhooks';
import { clock } from '../../core/clock';
import type { Env } from '../../core/config';
import { ApiError } from '../../core/errors';
import { SafeFetcher } from '../../providers/builtin-web/safe-fetch';
import { RETRY_ADVICE } from '../../providers/normalize';
import { builtinWebSettings } from '../../providers/builtin-web/settings';
import { deliveryTarget } from './endpoints';
import { ATTEMPT_TIME_LIMIT_MS } from './retry-schedule';

export const USER_AGENT = 'Sluice-Webhooks/1.0';

/** What one attempt came to: the receiver's status, or why there was none. `gone`: the endpoint was deleted. */
export type AttemptResult = { gone: true } | { gone: false; status: number | null; error: string | null };

/**
 * The three Standard Webhooks headers of one attempt, signed at the attempt's own time, with each secret that signs
 * (after a rotation, the new and the replaced one): the signatures space-separated, of which a receiver accepts any.
 */
export function signatureHeaders(secrets: readonly string[], eventId: string, body: string, at: number): Record<string, string> {
  const timestamp = new Date(at);
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(at / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(eventId, timestamp, body)).join(' '),
  };
}

/**
 * One attempt: the endpoint's current URL and secret, the body signed per Standard Webhooks, POSTed
 * through the scraper's safe fetch (public addresses only, checked again now: a name may have moved to
 * a private address since creation). Any 2xx is success; anything else, or no answer in time, is a failure.
 */
export async function attemptDelivery(env: Env, endpointId: string, eventId: string, body: string): Promise<AttemptResult> {
  const target = await deliveryTarget(env, endpointId);
  if (!target) return { gone: true };
  const headers = { 'content-type': 'application/json', 'user-agent': USER_AGENT, ...signatureHeaders(target.secrets, eventId, body, clock.now()) };
  const fetcher = new SafeFetcher({ settings: builtinWebSettings(env, 'WEBHOOK_ALLOW_PRIVATE_HOSTS'), signal: AbortSignal.timeout(ATTEMPT_TIME_LIMIT_MS) });
  try {
    const { status } = await fetcher.post(new URL(target.url), body, headers);
    return { gone: false, status, error: status >= 200 && status < 300 ? null : `The receiver answered HTTP ${status}.` };
  } catch (error) {
    // The safe fetch speaks to API callers ("this call was not charged"); an attempt's log needs only what happened.
    const message = error instanceof ApiError ? error.message.replace(` ${RETRY_ADVICE}`, '') : `The request failed (${String(error)}).`;
    return { gone: false, status: null, error: message };
  }
}
