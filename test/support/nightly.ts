import { createExecutionContext, createMessageBatch, getQueueResult } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import worker from '../../src/api';
import type { Env } from '../../src/core/config';
import type { NightlyMessage } from '../../src/core/protocols/nightly';

/**
 * The bindings with a nightly queue that keeps what is sent to it instead of handing it to the consumer: a test
 * drives the consumer itself, and a test of the cron's other work starts no usage.daily run that would reach, a
 * second later, the endpoints of the tests after it in the same workerd.
 */
export function keptNightly(): { sent: NightlyMessage[]; bindings: Env } {
  const sent: NightlyMessage[] = [];
  const queue = {
    send: async (body: NightlyMessage) => void sent.push(body),
    sendBatch: async (messages: Iterable<{ body: NightlyMessage }>) => void sent.push(...[...messages].map((message) => message.body)),
  };
  return { sent, bindings: { ...env, NIGHTLY: queue as unknown as Queue<NightlyMessage> } };
}

/** The api worker's queue consumer given `bodies` as one batch (attempt `attempts`): which it acknowledged, which it retried. */
export async function handToConsumer(bindings: Env, bodies: NightlyMessage[], attempts = 1) {
  const batch = createMessageBatch<NightlyMessage>(
    'sluice-nightly',
    bodies.map((body, index) => ({ id: `msg_${index}`, timestamp: new Date(), attempts, body })),
  );
  const context = createExecutionContext();
  await worker.queue(batch as MessageBatch<unknown>, bindings);
  return getQueueResult(batch, context);
}
