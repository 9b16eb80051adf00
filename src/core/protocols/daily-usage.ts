/**
 * The messages of the usage.daily queue (wrangler.toml [[queues]], services/webhooks/daily-usage.ts): a page of
 * the workspaces subscribed to it, those whose id comes after `after`, or one workspace's report. `day` is the
 * UTC day reported, YYYY-MM-DD.
 */
export type DailyUsageMessage = { day: string; after: string } | { day: string; workspaceId: string };
