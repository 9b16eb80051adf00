-- MCP tokens made to expire (2026-12-01) and never revoked, found by the daily run 13 months after their expiry (their
-- usage rows gone) through this index of theirs alone (services/record-retention.ts), as 0049 finds API keys.
CREATE INDEX api_keys_expired_tokens_by_time ON api_keys (expires_at) WHERE scope = 'workspace_mcp' AND revoked_at IS NULL AND expires_at IS NOT NULL;
