-- The nightly run forgets a webhook endpoint's replaced signing secret once it stops signing (endpoints.ts
-- forgetReplacedSecrets), finding those endpoints through this partial index rather than reading them all.
CREATE INDEX webhook_endpoints_replaced_secret ON webhook_endpoints (previous_secret_expires_at) WHERE previous_secret_expires_at IS NOT NULL;
