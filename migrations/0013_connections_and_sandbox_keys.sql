-- Sandbox keys (scope workspace_dryrun) expire: minted for 7 days. NULL for every other key.
ALTER TABLE api_keys ADD COLUMN expires_at TEXT;

-- A usage row says how the call was served: a sandbox key's call (the registry's example, never billed),
-- or a call through one of the workspace's connections (the vendor billed the workspace's own account).
ALTER TABLE usage ADD COLUMN sandbox INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage ADD COLUMN connection_id TEXT;

-- A workspace's own vendor account: the credentials it typed, sealed with AES-GCM under KEY_ENCRYPTION_KEY
-- (the connection id bound as associated data, as webhook secrets are), never answered again.
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
