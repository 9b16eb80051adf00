import { z } from '@hono/zod-openapi';
import { clock } from './clock';
import { sha256Hex } from './digest';
import { newId } from './ids';

/**
 * The events a webhook endpoint can subscribe to, as data: the list the API validates against, the
 * OpenAPI enum, the dashboard's checkboxes and the README table all come from here. `ping` is not
 * subscribable: it is what the test call sends.
 */
export const EVENT_TYPES = {
  'credits.low': "The organization's available balance fell below the endpoint's creditsLowThresholdCents.",
  'credits.exhausted': "The organization's available balance reached zero, or a metered call was refused 402 INSUFFICIENT_CREDITS for want of balance (a key's own monthly limit does not count).",
  'key.created': 'An API key or MCP token of the workspace was created (dashboard or operator).',
  'key.revoked': 'An API key or MCP token of the workspace was revoked.',
  'key.expiring': 'An API key or MCP token of the workspace expires within 7 days (once per expiry; one given 7 days or less gets none).',
  'usage.daily': "The workspace's calls and spend of the previous UTC day, sent shortly after midnight UTC.",
  'job.completed': 'A data job of the workspace ran every item (data.job: its counts, spend and times).',
  'job.failed': 'A data job of the workspace ended without running every item, or every item failed (data.job says why).',
} as const;

export type EventType = keyof typeof EVENT_TYPES;
export const EVENT_NAMES = Object.keys(EVENT_TYPES) as [EventType, ...EventType[]];

/** Events that belong to the organization (its wallet) rather than to one workspace. */
export const ORGANIZATION_EVENTS: readonly EventType[] = ['credits.low', 'credits.exhausted'];

export const EventName = z.enum(EVENT_NAMES);

/**
 * What is POSTed, as Standard Webhooks recommends: `type`, `timestamp`, `data`. The event id is the
 * `webhook-id` header, the same for every endpoint it goes to and on every retry, so a receiver can
 * drop a repeat.
 */
export interface WebhookEvent {
  id: string;
  type: EventType | 'ping';
  timestamp: string;
  data: Record<string, unknown>;
}

export function newEvent(type: WebhookEvent['type'], data: Record<string, unknown>, id = newId('evt')): WebhookEvent {
  return { id, type, timestamp: new Date(clock.now()).toISOString(), data };
}

/**
 * The id of an event that may be announced more than once (a report retried, an alarm run again): derived from
 * what it says, so the endpoint's sender knows a repeat and neither counts nor sends it twice.
 */
export async function eventId(what: string): Promise<string> {
  return `evt_${(await sha256Hex(what)).slice(0, 24)}`;
}

/** The body a receiver gets: exactly these bytes are signed. */
export function eventBody(event: WebhookEvent): string {
  return JSON.stringify({ type: event.type, timestamp: event.timestamp, data: event.data });
}
