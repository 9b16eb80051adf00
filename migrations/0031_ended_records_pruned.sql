-- Records whose life has ended, deleted by the daily run (services/record-retention.ts), each found through an index
-- on the instant it ended, so that run reads what it deletes and not every row kept. Until now nothing deleted
-- them: a session whose cookie was thrown away, a consent never finished, an OAuth client registered and never
-- used, an invitation accepted a year ago each stayed for good.
CREATE INDEX sessions_by_expiry ON sessions (expires_at);
CREATE INDEX email_verifications_by_expiry ON email_verifications (expires_at);
CREATE INDEX oauth_requests_by_expiry ON oauth_requests (expires_at);
CREATE INDEX auth_throttle_by_window ON auth_throttle (window_start);
CREATE INDEX oauth_tokens_by_expiry ON oauth_tokens (expires_at);
CREATE INDEX oauth_grants_by_expiry ON oauth_grants (expires_at);
-- A consent whose code was never exchanged: the grant never gave a token.
CREATE INDEX oauth_grants_unexchanged ON oauth_grants (code_expires_at) WHERE code_used_at IS NULL;
-- Whether a client still has a grant, before it is deleted.
CREATE INDEX oauth_grants_by_client ON oauth_grants (client_id);
CREATE INDEX oauth_clients_registered ON oauth_clients (created_at) WHERE from_document = 0;
CREATE INDEX oauth_clients_from_documents ON oauth_clients (expires_at) WHERE from_document = 1;
CREATE INDEX invitations_by_expiry ON invitations (expires_at);
CREATE INDEX email_outbox_by_time ON email_outbox (created_at);
CREATE INDEX agent_hours_by_hour ON agent_hours (hour);
CREATE INDEX job_hours_by_hour ON job_hours (hour);
CREATE INDEX stripe_events_by_time ON stripe_events (received_at);
