-- Data jobs (the `agnt` source): one operation run over up to 10,000 inputs in the background by a
-- Cloudflare Workflow (src/services/jobs/workflow.ts). The job's row holds its state and counts; each
-- input is a row of data_job_items holding its outcome. The key of scope `data_job` its items are called
-- with is minted per run and revoked when the job ends or is cancelled; it is never shown.
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
);
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
  cost_units       INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (job_id, idx)
);
CREATE INDEX data_job_items_by_status ON data_job_items (job_id, status, idx);
