-- Sandbox keys (scope workspace_dryrun) expire 7 days after they are minted; the daily run deletes them 30 days
-- after that (services/record-retention.ts), through this index of theirs alone.
CREATE INDEX api_keys_sandbox_by_expiry ON api_keys (expires_at) WHERE scope = 'workspace_dryrun';
