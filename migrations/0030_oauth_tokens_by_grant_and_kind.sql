-- A refresh deletes its grant's expired access tokens (services/oauth/tokens.ts, issueTokens). By grant alone
-- that read every token of the grant, and a grant keeps its used refresh tokens to recognise a replay: one a
-- refresh, every 15 minutes, about 2,900 over a grant's 30 days. The index by grant, kind and expiry walks the
-- expired access tokens only; the old index is its prefix, so it goes.
CREATE INDEX oauth_tokens_by_grant_kind ON oauth_tokens (grant_id, kind, expires_at);
DROP INDEX oauth_tokens_by_grant;
