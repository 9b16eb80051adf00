/** The nightly prunes, each of which a message of the nightly queue carries on where a run's budget stopped it. */
export type PruneName = 'usage' | 'job results' | 'snapshots' | 'ended records';

/**
 * The messages of the nightly queue (wrangler.toml [[queues]], src/api/nightly.ts), all sent by the api worker
 * to itself: a page of the workspaces subscribed to usage.daily (those whose id comes after `after`), one
 * workspace's usage.daily report, or a prune to carry on. `day` is the UTC day reported, YYYY-MM-DD.
 */
export type NightlyMessage =
  | { kind: 'usage.daily page'; day: string; after: string }
  | { kind: 'usage.daily'; day: string; workspaceId: string }
  | { kind: 'prune'; what: PruneName };
