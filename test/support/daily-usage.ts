import { env } from 'cloudflare:workers';
import type { Env } from '../../src/core/config';
import type { DailyUsageMessage } from '../../src/core/protocols/daily-usage';

/**
 * The bindings with a usage.daily queue that keeps what is sent to it instead of handing it to the consumer:
 * a test drives the consumer itself, and a test of the cron's other work starts no report run that would
 * reach, a second later, the endpoints of the tests after it in the same workerd.
 */
export function keptDailyUsage(): { sent: DailyUsageMessage[]; bindings: Env } {
  const sent: DailyUsageMessage[] = [];
  const queue = {
    send: async (body: DailyUsageMessage) => void sent.push(body),
    sendBatch: async (messages: Iterable<{ body: DailyUsageMessage }>) => void sent.push(...[...messages].map((message) => message.body)),
  };
  return { sent, bindings: { ...env, DAILY_USAGE: queue as unknown as Queue<DailyUsageMessage> } };
}
