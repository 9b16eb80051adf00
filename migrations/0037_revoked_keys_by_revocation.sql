-- API keys, MCP tokens and agents' keys revoked 13 months ago (their usage rows gone) are deleted by the daily run
-- (services/record-retention.ts), through this index of theirs alone.
CREATE INDEX api_keys_revoked_by_time ON api_keys (revoked_at) WHERE revoked_at IS NOT NULL AND scope IN ('workspace', 'workspace_mcp', 'agent');
