-- API keys made to expire and never revoked, found by the daily run 13 months after their expiry (their usage rows
-- gone) through this index of theirs alone (services/record-retention.ts).
CREATE INDEX api_keys_expired_by_time ON api_keys (expires_at) WHERE scope = 'workspace' AND revoked_at IS NULL AND expires_at IS NOT NULL;
