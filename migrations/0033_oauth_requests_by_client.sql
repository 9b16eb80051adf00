-- Whether a consent is under way for a client, before the daily run deletes the client (services/record-retention.ts):
-- a registration no grant names may still have a person on its consent page.
CREATE INDEX oauth_requests_by_client ON oauth_requests (client_id);
