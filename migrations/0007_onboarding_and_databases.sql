-- Onboarding intents: who is setting Sluice up and what for, recorded by POST /v1/register (deprecated)
-- and by its successor, the MCP tool sluice_onboarding. The workspace and organization are known when the
-- caller sent a key or an MCP credential, null otherwise.
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

-- Workspace databases: each row names one WorkspaceDatabase Durable Object (its SQLite storage holds the
-- data); the organization is kept beside the workspace so the plan's cap is counted in one statement.
CREATE TABLE workspace_databases (
  id               TEXT PRIMARY KEY,
  organization_id  TEXT NOT NULL REFERENCES organizations (id),
  workspace_id     TEXT NOT NULL REFERENCES workspaces (id),
  name             TEXT NOT NULL,
  created_at       TEXT NOT NULL
);
CREATE UNIQUE INDEX workspace_databases_by_name ON workspace_databases (workspace_id, name);
CREATE INDEX workspace_databases_by_organization ON workspace_databases (organization_id);
