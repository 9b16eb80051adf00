-- Deployed agents: a deployment in a workspace with a key of scope `agent` minted for it (shown once).
-- Stopping revokes the key; redeploying mints a new one. The organization is kept beside the workspace
-- so the plan's `agents` cap (deployed agents across the organization) is counted in one statement.
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
-- Names are unique among a workspace's deployed agents; a stopped one's name may be used again.
CREATE UNIQUE INDEX agents_deployed_by_name ON agents (workspace_id, name) WHERE status = 'deployed';
CREATE INDEX agents_by_organization ON agents (organization_id, status);
CREATE INDEX agents_by_workspace ON agents (workspace_id, created_at);
CREATE UNIQUE INDEX agents_by_key ON agents (key_id);

-- Agent-hours, counted against the plan's monthly `runtimeHours` cap: one row per agent and UTC clock
-- hour ('2026-11-23T05:00:00.000Z') in which it made at least one /runtime/data call.
CREATE TABLE agent_hours (
  agent_id         TEXT NOT NULL REFERENCES agents (id),
  hour             TEXT NOT NULL,
  organization_id  TEXT NOT NULL REFERENCES organizations (id),
  PRIMARY KEY (agent_id, hour)
);
CREATE INDEX agent_hours_by_organization ON agent_hours (organization_id, hour);
