-- The D1 schema, in full, as the migrations in migrations/ build it. Written by
-- `npm run -s schema:generate`: do not edit; add a migration and run it again (test/schema.test.ts checks).

CREATE TABLE organizations (
  id            TEXT PRIMARY KEY,
  name          TEXT NOT NULL,
  -- NULL means no plan: metered routes answer 402 SUBSCRIPTION_REQUIRED.
  plan          TEXT CHECK (plan IN ('payg', 'toolkit', 'toolkit_all_access', 'solo', 'team', 'business')),
  -- A contract's custom requests-per-minute ceiling; NULL means the plan's figure.
  rpm_override  INTEGER CHECK (rpm_override > 0),
  created_at    TEXT NOT NULL
, cap_overrides TEXT, trial_started_at TEXT, trial_ends_at TEXT, stripe_subscription_id TEXT, trial_inbox TEXT, closed_at TEXT, plan_cancels_at TEXT, two_factor_required_at TEXT, closing_at TEXT);

CREATE TABLE workspaces (
  id               TEXT PRIMARY KEY,
  organization_id  TEXT NOT NULL REFERENCES organizations (id),
  name             TEXT NOT NULL,
  created_at       TEXT NOT NULL
, deleted_at TEXT);

CREATE INDEX workspaces_by_organization ON workspaces (organization_id);

CREATE TABLE api_keys (
  id              TEXT PRIMARY KEY,
  workspace_id    TEXT NOT NULL REFERENCES workspaces (id),
  -- Hex SHA-256 of the whole key: the only thing authentication compares.
  key_hash        TEXT NOT NULL,
  -- AES-GCM ciphertext (KEY_ENCRYPTION_KEY) so the dashboard can re-reveal the key.
  key_ciphertext  TEXT NOT NULL,
  key_hint        TEXT NOT NULL,
  scope           TEXT NOT NULL CHECK (scope IN ('workspace', 'agent', 'data_job', 'workspace_dryrun', 'workspace_mcp', 'meta_agent')),
  name            TEXT NOT NULL,
  created_at      TEXT NOT NULL,
  last_used_at    TEXT,
  revoked_at      TEXT
, created_by TEXT REFERENCES users (id), monthly_limit_units INTEGER, limit_version INTEGER NOT NULL DEFAULT 0, expires_at TEXT, expiry_noticed_at TEXT, expiry_set_at TEXT);

CREATE UNIQUE INDEX api_keys_by_hash ON api_keys (key_hash);

CREATE TABLE usage (
  id               TEXT PRIMARY KEY,
  request_id       TEXT NOT NULL,
  organization_id  TEXT NOT NULL,
  workspace_id     TEXT NOT NULL,
  key_id           TEXT NOT NULL,
  operation        TEXT NOT NULL,
  status           INTEGER NOT NULL,
  error_code       TEXT,
  -- Money in units of 1/10,000 cent.
  cost_units       INTEGER NOT NULL DEFAULT 0,
  cached           INTEGER NOT NULL DEFAULT 0,
  latency_ms       INTEGER NOT NULL,
  created_at       TEXT NOT NULL
, sandbox INTEGER NOT NULL DEFAULT 0, connection_id TEXT);

CREATE INDEX usage_by_workspace_time ON usage (workspace_id, created_at);

CREATE TABLE scrape_snapshots (
  organization_id  TEXT NOT NULL,
  url              TEXT NOT NULL,
  -- Hex SHA-256 of the Markdown: "same" or "changed" is decided on it.
  content_hash     TEXT NOT NULL,
  -- NULL when the page was too large to keep; a change is then reported without a diff.
  markdown         TEXT,
  scraped_at       TEXT NOT NULL,
  PRIMARY KEY (organization_id, url)
);

CREATE TABLE users (
  id             TEXT PRIMARY KEY,
  email          TEXT NOT NULL,
  name           TEXT NOT NULL,
  password_hash  TEXT NOT NULL,
  created_at     TEXT NOT NULL
, email_verified_at TEXT, password_changed_at TEXT, deleted_at TEXT);

CREATE UNIQUE INDEX users_by_email ON users (email);

CREATE TABLE sessions (
  id_hash       TEXT PRIMARY KEY,
  user_id       TEXT NOT NULL REFERENCES users (id),
  created_at    TEXT NOT NULL,
  expires_at    TEXT NOT NULL
, user_agent TEXT, last_seen_at TEXT);

CREATE INDEX sessions_by_user ON sessions (user_id);

CREATE TABLE memberships (
  organization_id  TEXT NOT NULL REFERENCES organizations (id),
  user_id          TEXT NOT NULL REFERENCES users (id),
  role             TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  created_at       TEXT NOT NULL,
  PRIMARY KEY (organization_id, user_id)
);

CREATE INDEX memberships_by_user ON memberships (user_id);

CREATE TABLE auth_throttle (
  bucket        TEXT PRIMARY KEY,
  window_start  INTEGER NOT NULL,
  attempts      INTEGER NOT NULL
);

CREATE TABLE disabled_platforms (
  slug         TEXT PRIMARY KEY,
  disabled_at  TEXT NOT NULL
);

CREATE TABLE oauth_clients (
  id            TEXT PRIMARY KEY,
  name          TEXT NOT NULL,
  redirect_uris TEXT NOT NULL,
  client_uri    TEXT,
  from_document INTEGER NOT NULL DEFAULT 0,
  created_at    TEXT NOT NULL,
  expires_at    INTEGER
, metadata_hash TEXT);

CREATE TABLE oauth_requests (
  id_hash        TEXT PRIMARY KEY,
  client_id      TEXT NOT NULL,
  redirect_uri   TEXT NOT NULL,
  state          TEXT,
  code_challenge TEXT NOT NULL,
  resource       TEXT NOT NULL,
  scope          TEXT NOT NULL,
  expires_at     INTEGER NOT NULL
);

CREATE TABLE oauth_grants (
  id              TEXT PRIMARY KEY,
  client_id       TEXT NOT NULL,
  workspace_id    TEXT NOT NULL REFERENCES workspaces (id),
  user_id         TEXT NOT NULL REFERENCES users (id),
  resource        TEXT NOT NULL,
  scope           TEXT NOT NULL,
  redirect_uri    TEXT NOT NULL,
  code_hash       TEXT NOT NULL,
  code_challenge  TEXT NOT NULL,
  code_expires_at INTEGER NOT NULL,
  code_used_at    INTEGER,
  created_at      TEXT NOT NULL,
  expires_at      INTEGER NOT NULL,
  last_used_at    TEXT,
  revoked_at      TEXT,
  revoked_reason  TEXT
, refresh_family_hash TEXT);

CREATE UNIQUE INDEX oauth_grants_by_code ON oauth_grants (code_hash);

CREATE INDEX oauth_grants_by_workspace ON oauth_grants (workspace_id);

CREATE TABLE oauth_tokens (
  hash       TEXT PRIMARY KEY,
  grant_id   TEXT NOT NULL REFERENCES oauth_grants (id),
  kind       TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
  expires_at INTEGER NOT NULL,
  used_at    INTEGER
);

CREATE TABLE mcp_servers (
  id           TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces (id),
  name         TEXT NOT NULL,
  tools        TEXT NOT NULL,
  is_default   INTEGER NOT NULL DEFAULT 0,
  created_at   TEXT NOT NULL
);

CREATE INDEX mcp_servers_by_workspace ON mcp_servers (workspace_id);

CREATE UNIQUE INDEX mcp_servers_one_default ON mcp_servers (workspace_id) WHERE is_default = 1;

CREATE TABLE invitations (
  id               TEXT PRIMARY KEY,
  organization_id  TEXT NOT NULL REFERENCES organizations (id),
  email            TEXT NOT NULL,
  role             TEXT NOT NULL CHECK (role IN ('admin', 'member')),
  token_hash       TEXT NOT NULL,
  invited_by       TEXT NOT NULL REFERENCES users (id),
  created_at       TEXT NOT NULL,
  expires_at       TEXT NOT NULL,
  accepted_at      TEXT,
  accepted_by      TEXT REFERENCES users (id),
  revoked_at       TEXT
);

CREATE UNIQUE INDEX invitations_by_token ON invitations (token_hash);

CREATE INDEX invitations_by_organization ON invitations (organization_id, email);

CREATE TABLE email_outbox (
  id          TEXT PRIMARY KEY,
  recipient   TEXT NOT NULL,
  subject     TEXT NOT NULL,
  body        TEXT NOT NULL,
  created_at  TEXT NOT NULL
);

CREATE TABLE stripe_events (
  id               TEXT PRIMARY KEY,
  type             TEXT NOT NULL,
  organization_id  TEXT,
  received_at      TEXT NOT NULL
);

CREATE TABLE onboarding_intents (
  id                 TEXT PRIMARY KEY,
  surface            TEXT NOT NULL CHECK (surface IN ('register', 'mcp')),
  agent_name         TEXT NOT NULL,
  email              TEXT,
  organization_name  TEXT,
  use_case           TEXT NOT NULL,
  sources            TEXT NOT NULL,
  workspace_id       TEXT REFERENCES workspaces (id),
  organization_id    TEXT REFERENCES organizations (id),
  created_at         TEXT NOT NULL
);

CREATE INDEX onboarding_intents_by_organization ON onboarding_intents (organization_id, created_at);

CREATE TABLE workspace_databases (
  id               TEXT PRIMARY KEY,
  organization_id  TEXT NOT NULL REFERENCES organizations (id),
  workspace_id     TEXT NOT NULL REFERENCES workspaces (id),
  name             TEXT NOT NULL,
  created_at       TEXT NOT NULL
);

CREATE UNIQUE INDEX workspace_databases_by_name ON workspace_databases (workspace_id, name);

CREATE INDEX workspace_databases_by_organization ON workspace_databases (organization_id);

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
, previous_secret_ciphertext TEXT, previous_secret_expires_at INTEGER);

CREATE INDEX webhook_endpoints_by_workspace ON webhook_endpoints (workspace_id, created_at);

CREATE TABLE webhook_event_counts (
  organization_id  TEXT NOT NULL REFERENCES organizations (id),
  month            TEXT NOT NULL,
  events           INTEGER NOT NULL,
  PRIMARY KEY (organization_id, month)
);

CREATE TABLE agents (
  id               TEXT PRIMARY KEY,
  organization_id  TEXT NOT NULL REFERENCES organizations (id),
  workspace_id     TEXT NOT NULL REFERENCES workspaces (id),
  name             TEXT NOT NULL,
  description      TEXT,
  status           TEXT NOT NULL CHECK (status IN ('deployed', 'stopped')),
  -- The key of the current (or last) deployment; NULL only between the row and its key being written.
  key_id           TEXT REFERENCES api_keys (id),
  created_by       TEXT REFERENCES users (id),
  created_at       TEXT NOT NULL,
  deployed_at      TEXT NOT NULL,
  stopped_at       TEXT
);

CREATE UNIQUE INDEX agents_deployed_by_name ON agents (workspace_id, name) WHERE status = 'deployed';

CREATE INDEX agents_by_organization ON agents (organization_id, status);

CREATE INDEX agents_by_workspace ON agents (workspace_id, created_at);

CREATE UNIQUE INDEX agents_by_key ON agents (key_id);

CREATE TABLE agent_hours (
  agent_id         TEXT NOT NULL REFERENCES agents (id),
  hour             TEXT NOT NULL,
  organization_id  TEXT NOT NULL REFERENCES organizations (id),
  PRIMARY KEY (agent_id, hour)
);

CREATE INDEX agent_hours_by_organization ON agent_hours (organization_id, hour);

CREATE TABLE usage_daily (
  workspace_id  TEXT NOT NULL,
  -- The UTC day, as the first 10 characters of created_at: YYYY-MM-DD.
  day           TEXT NOT NULL,
  operation     TEXT NOT NULL,
  calls         INTEGER NOT NULL,
  succeeded     INTEGER NOT NULL,
  -- Money in units of 1/10,000 cent.
  cost_units    INTEGER NOT NULL, sandbox_calls INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (workspace_id, day, operation)
) WITHOUT ROWID;

CREATE TABLE usage_hourly (
  workspace_id  TEXT NOT NULL,
  -- The UTC hour, as the first 13 characters of created_at: YYYY-MM-DDTHH.
  hour          TEXT NOT NULL,
  operation     TEXT NOT NULL,
  calls         INTEGER NOT NULL,
  succeeded     INTEGER NOT NULL,
  cost_units    INTEGER NOT NULL, sandbox_calls INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (workspace_id, hour, operation)
) WITHOUT ROWID;

CREATE TABLE data_jobs (
  id               TEXT PRIMARY KEY,
  organization_id  TEXT NOT NULL REFERENCES organizations (id),
  workspace_id     TEXT NOT NULL REFERENCES workspaces (id),
  -- '<slug>/<operation>', as submitted.
  operation        TEXT NOT NULL,
  name             TEXT,
  status           TEXT NOT NULL CHECK (status IN ('queued', 'running', 'waiting_for_credits', 'succeeded', 'failed', 'cancelled')),
  -- Why the job waits or failed, in words; NULL while it simply runs.
  reason           TEXT,
  items            INTEGER NOT NULL,
  succeeded        INTEGER NOT NULL DEFAULT 0,
  failed           INTEGER NOT NULL DEFAULT 0,
  -- Money in units of 1/10,000 cent.
  spent_units      INTEGER NOT NULL DEFAULT 0,
  quoted_units     INTEGER NOT NULL,
  max_cost_units   INTEGER,
  key_id           TEXT REFERENCES api_keys (id),
  -- The window the job last saw (epoch ms and counts), so the next slice paces itself without asking.
  window_reset_at  INTEGER NOT NULL DEFAULT 0,
  window_limit     INTEGER NOT NULL DEFAULT 0,
  window_remaining INTEGER NOT NULL DEFAULT 0,
  -- While the job waits (the window, a retry's backoff, money): when it looks again (epoch ms); else 0.
  resume_at        INTEGER NOT NULL DEFAULT 0,
  created_by_key   TEXT,
  created_at       TEXT NOT NULL,
  started_at       TEXT,
  finished_at      TEXT
, connection_id TEXT, into_database_id TEXT, into_table TEXT, results_pruned_at TEXT, budget_key_id TEXT, waiting_since TEXT, waiting_on TEXT CHECK (waiting_on IN ('money', 'plan', 'key_limit')), checked_at TEXT, idempotency_key TEXT, submission_digest TEXT, grant_id TEXT);

CREATE INDEX data_jobs_by_workspace ON data_jobs (workspace_id, created_at, id);

CREATE UNIQUE INDEX data_jobs_by_key ON data_jobs (key_id);

CREATE TABLE data_job_items (
  job_id           TEXT NOT NULL REFERENCES data_jobs (id),
  idx              INTEGER NOT NULL,
  input            TEXT NOT NULL,
  status           TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts         INTEGER NOT NULL DEFAULT 0,
  -- A transient failure's retry waits until then (epoch ms).
  retry_at         INTEGER NOT NULL DEFAULT 0,
  data             TEXT,
  error_code       TEXT,
  error_message    TEXT,
  cost_units       INTEGER NOT NULL DEFAULT 0, data_key TEXT, data_bytes INTEGER,
  PRIMARY KEY (job_id, idx)
);

CREATE INDEX data_job_items_by_status ON data_job_items (job_id, status, idx);

CREATE TABLE connections (
  id                      TEXT PRIMARY KEY,
  workspace_id            TEXT NOT NULL REFERENCES workspaces (id),
  vendor                  TEXT NOT NULL,
  name                    TEXT NOT NULL,
  credentials_ciphertext  TEXT NOT NULL,
  -- The last four characters of the main secret, shown as "…4f2a".
  hint                    TEXT NOT NULL,
  status                  TEXT NOT NULL CHECK (status IN ('ok', 'rejected', 'unreachable')),
  created_at              TEXT NOT NULL,
  last_checked_at         TEXT NOT NULL
);

CREATE INDEX connections_by_workspace ON connections (workspace_id, created_at);

CREATE TABLE job_hours (
  job_id           TEXT NOT NULL REFERENCES data_jobs (id),
  hour             TEXT NOT NULL,
  organization_id  TEXT NOT NULL REFERENCES organizations (id),
  PRIMARY KEY (job_id, hour)
);

CREATE INDEX job_hours_by_organization ON job_hours (organization_id, hour);

CREATE TRIGGER usage_totals_on_insert AFTER INSERT ON usage
BEGIN
  INSERT INTO usage_daily (workspace_id, day, operation, calls, succeeded, cost_units, sandbox_calls)
  VALUES (NEW.workspace_id, substr(NEW.created_at, 1, 10), NEW.operation, NEW.sandbox = 0, NEW.sandbox = 0 AND NEW.status < 400, NEW.cost_units, NEW.sandbox <> 0)
  ON CONFLICT (workspace_id, day, operation) DO UPDATE SET
    calls = calls + excluded.calls, succeeded = succeeded + excluded.succeeded, cost_units = cost_units + excluded.cost_units,
    sandbox_calls = sandbox_calls + excluded.sandbox_calls;
  INSERT INTO usage_hourly (workspace_id, hour, operation, calls, succeeded, cost_units, sandbox_calls)
  VALUES (NEW.workspace_id, substr(NEW.created_at, 1, 13), NEW.operation, NEW.sandbox = 0, NEW.sandbox = 0 AND NEW.status < 400, NEW.cost_units, NEW.sandbox <> 0)
  ON CONFLICT (workspace_id, hour, operation) DO UPDATE SET
    calls = calls + excluded.calls, succeeded = succeeded + excluded.succeeded, cost_units = cost_units + excluded.cost_units,
    sandbox_calls = sandbox_calls + excluded.sandbox_calls;
END;

CREATE INDEX data_jobs_results_to_prune ON data_jobs (finished_at) WHERE finished_at IS NOT NULL AND results_pruned_at IS NULL;

CREATE INDEX scrape_snapshots_by_age ON scrape_snapshots (scraped_at);

CREATE TABLE email_verifications (
  token_hash  TEXT PRIMARY KEY,
  user_id     TEXT NOT NULL REFERENCES users (id),
  email       TEXT NOT NULL,
  expires_at  TEXT NOT NULL
);

CREATE INDEX email_verifications_by_user ON email_verifications (user_id);

CREATE UNIQUE INDEX organizations_by_trial_inbox ON organizations (trial_inbox) WHERE trial_inbox IS NOT NULL;

CREATE INDEX data_jobs_waiting_by_organization ON data_jobs (organization_id, waiting_since) WHERE status = 'waiting_for_credits';

CREATE INDEX data_jobs_waiting_by_key ON data_jobs (budget_key_id, waiting_since) WHERE status = 'waiting_for_credits';

CREATE INDEX data_jobs_unfinished ON data_jobs (created_at) WHERE status NOT IN ('succeeded', 'failed', 'cancelled');

CREATE INDEX data_jobs_unfinished_by_check ON data_jobs (checked_at, created_at) WHERE status NOT IN ('succeeded', 'failed', 'cancelled');

CREATE UNIQUE INDEX data_jobs_by_idempotency_key ON data_jobs (workspace_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

CREATE TRIGGER data_job_items_decided AFTER UPDATE OF status ON data_job_items
WHEN OLD.status = 'pending' AND NEW.status <> 'pending'
BEGIN
  UPDATE data_jobs SET
    succeeded = succeeded + (NEW.status = 'succeeded'),
    failed = failed + (NEW.status = 'failed'),
    spent_units = spent_units + (CASE WHEN NEW.status = 'succeeded' THEN NEW.cost_units ELSE 0 END)
   WHERE id = NEW.job_id;
END;

CREATE INDEX api_keys_by_workspace_scope ON api_keys (workspace_id, scope, created_at, id);

CREATE INDEX data_jobs_unfinished_by_workspace ON data_jobs (workspace_id) WHERE status NOT IN ('succeeded', 'failed', 'cancelled');

CREATE INDEX oauth_tokens_by_grant_kind ON oauth_tokens (grant_id, kind, expires_at);

CREATE INDEX sessions_by_expiry ON sessions (expires_at);

CREATE INDEX email_verifications_by_expiry ON email_verifications (expires_at);

CREATE INDEX oauth_requests_by_expiry ON oauth_requests (expires_at);

CREATE INDEX auth_throttle_by_window ON auth_throttle (window_start);

CREATE INDEX oauth_tokens_by_expiry ON oauth_tokens (expires_at);

CREATE INDEX oauth_grants_by_expiry ON oauth_grants (expires_at);

CREATE INDEX oauth_grants_unexchanged ON oauth_grants (code_expires_at) WHERE code_used_at IS NULL;

CREATE INDEX oauth_grants_by_client ON oauth_grants (client_id);

CREATE INDEX oauth_clients_registered ON oauth_clients (created_at) WHERE from_document = 0;

CREATE INDEX oauth_clients_from_documents ON oauth_clients (expires_at) WHERE from_document = 1;

CREATE INDEX invitations_by_expiry ON invitations (expires_at);

CREATE INDEX email_outbox_by_time ON email_outbox (created_at);

CREATE INDEX agent_hours_by_hour ON agent_hours (hour);

CREATE INDEX job_hours_by_hour ON job_hours (hour);

CREATE INDEX stripe_events_by_time ON stripe_events (received_at);

CREATE INDEX usage_hourly_by_hour ON usage_hourly (hour, workspace_id);

CREATE INDEX oauth_requests_by_client ON oauth_requests (client_id);

CREATE INDEX onboarding_intents_by_workspace ON onboarding_intents (workspace_id, created_at);

CREATE INDEX onboarding_intents_by_time ON onboarding_intents (created_at);

CREATE INDEX api_keys_sandbox_by_expiry ON api_keys (expires_at) WHERE scope = 'workspace_dryrun';

CREATE UNIQUE INDEX oauth_grants_by_refresh_family ON oauth_grants (refresh_family_hash) WHERE refresh_family_hash IS NOT NULL;

CREATE INDEX api_keys_revoked_by_time ON api_keys (revoked_at) WHERE revoked_at IS NOT NULL AND scope IN ('workspace', 'workspace_mcp', 'agent');

CREATE INDEX webhook_endpoints_daily ON webhook_endpoints (workspace_id) WHERE instr(events, '"usage.daily"') > 0;

CREATE UNIQUE INDEX oauth_clients_by_metadata ON oauth_clients (metadata_hash) WHERE metadata_hash IS NOT NULL;

CREATE TABLE password_resets (
  token_hash  TEXT PRIMARY KEY,
  user_id     TEXT NOT NULL REFERENCES users (id),
  email       TEXT NOT NULL,
  expires_at  TEXT NOT NULL
);

CREATE INDEX password_resets_by_user ON password_resets (user_id);

CREATE TABLE email_changes (
  token_hash  TEXT PRIMARY KEY,
  user_id     TEXT NOT NULL REFERENCES users (id),
  old_email   TEXT NOT NULL,
  new_email   TEXT NOT NULL,
  expires_at  TEXT NOT NULL
);

CREATE INDEX email_changes_by_user ON email_changes (user_id);

CREATE TRIGGER usage_totals_on_success_over_failure AFTER UPDATE OF status ON usage
WHEN OLD.status >= 400 AND NEW.status < 400
BEGIN
  UPDATE usage_daily SET succeeded = succeeded + (NEW.sandbox = 0), cost_units = cost_units - OLD.cost_units + NEW.cost_units
   WHERE workspace_id = NEW.workspace_id AND day = substr(NEW.created_at, 1, 10) AND operation = NEW.operation;
  UPDATE usage_hourly SET succeeded = succeeded + (NEW.sandbox = 0), cost_units = cost_units - OLD.cost_units + NEW.cost_units
   WHERE workspace_id = NEW.workspace_id AND hour = substr(NEW.created_at, 1, 13) AND operation = NEW.operation;
END;

CREATE TABLE two_factor (
  user_id        TEXT PRIMARY KEY REFERENCES users(id),
  secret_sealed  TEXT NOT NULL,
  setup_id       TEXT NOT NULL,
  created_at     TEXT NOT NULL,
  enabled_at     TEXT,
  last_step      INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE two_factor_recovery_codes (
  user_id    TEXT NOT NULL REFERENCES users(id),
  code_hash  TEXT NOT NULL,
  used_at    TEXT,
  PRIMARY KEY (user_id, code_hash)
);

CREATE TABLE sign_in_challenges (
  id_hash          TEXT PRIMARY KEY,
  user_id          TEXT NOT NULL REFERENCES users(id),
  password_digest  TEXT NOT NULL,
  device           TEXT,
  expires_at       TEXT NOT NULL,
  failures         INTEGER NOT NULL DEFAULT 0
);

CREATE INDEX sign_in_challenges_by_user ON sign_in_challenges (user_id);

CREATE TABLE activity (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  organization_id  TEXT NOT NULL,
  workspace_id     TEXT,
  actor_user_id    TEXT,
  action           TEXT NOT NULL,
  target           TEXT,
  detail           TEXT,
  created_at       TEXT NOT NULL
);

CREATE INDEX activity_by_organization ON activity (organization_id, id);

CREATE INDEX activity_by_time ON activity (created_at);

CREATE INDEX api_keys_expired_by_time ON api_keys (expires_at) WHERE scope = 'workspace' AND revoked_at IS NULL AND expires_at IS NOT NULL;

CREATE INDEX api_keys_expired_tokens_by_time ON api_keys (expires_at) WHERE scope = 'workspace_mcp' AND revoked_at IS NULL AND expires_at IS NOT NULL;

CREATE TABLE stripe_payments (
  payment_intent TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL,
  cents INTEGER NOT NULL,
  created_at TEXT NOT NULL
);

CREATE INDEX stripe_payments_by_time ON stripe_payments (created_at);

CREATE INDEX agents_stopped ON agents (stopped_at) WHERE status = 'stopped';

CREATE INDEX webhook_endpoints_replaced_secret ON webhook_endpoints (previous_secret_expires_at) WHERE previous_secret_expires_at IS NOT NULL;
