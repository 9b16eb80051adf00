-- Webhook endpoints of a workspace: where its events are sent, which events, and the signing secret,
-- encrypted (AES-GCM under KEY_ENCRYPTION_KEY, the endpoint id bound as associated data). Deliveries and
-- their attempts live in each endpoint's WebhookSender Durable Object, not here.
CREATE TABLE webhook_endpoints (
  id                          TEXT PRIMARY KEY,
  workspace_id                TEXT NOT NULL REFERENCES workspaces (id),
  url                         TEXT NOT NULL,
  -- JSON array of the event types sent to it.
  events                      TEXT NOT NULL,
  -- credits.low is sent when the organization's available balance falls below this many cents.
  credits_low_threshold_cents INTEGER NOT NULL CHECK (credits_low_threshold_cents >= 0),
  secret_ciphertext           TEXT NOT NULL,
  created_at                  TEXT NOT NULL,
  updated_at                  TEXT NOT NULL
);
CREATE INDEX webhook_endpoints_by_workspace ON webhook_endpoints (workspace_id, created_at);

-- Webhook events counted against the plan's monthly cap (webhookEvents): one per event sent to one
-- endpoint, per organization and UTC calendar month ('2026-11').
CREATE TABLE webhook_event_counts (
  organization_id  TEXT NOT NULL REFERENCES organizations (id),
  month            TEXT NOT NULL,
  events           INTEGER NOT NULL,
  PRIMARY KEY (organization_id, month)
);
