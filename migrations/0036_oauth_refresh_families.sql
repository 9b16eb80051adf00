-- A grant's refresh tokens carry a secret of the grant's own (its "family"), whose hash is kept here: a refresh
-- token spent is deleted, and one presented again is known by its family and ends the grant (services/oauth/tokens.ts).
-- Grants made before keep their used refresh tokens, as before, until they end.
ALTER TABLE oauth_grants ADD COLUMN refresh_family_hash TEXT;
CREATE UNIQUE INDEX oauth_grants_by_refresh_family ON oauth_grants (refresh_family_hash) WHERE refresh_family_hash IS NOT NULL;
