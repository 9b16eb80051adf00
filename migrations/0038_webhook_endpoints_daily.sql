-- The endpoints subscribed to usage.daily, by workspace: each nightly page reads its 500 workspaces through it, not
-- every endpoint between them (services/webhooks/daily-usage.ts). `events` is a JSON array of strings, so the
-- quoted name matches that event alone.
CREATE INDEX webhook_endpoints_daily ON webhook_endpoints (workspace_id) WHERE instr(events, '"usage.daily"') > 0;
