-- A registration (RFC 7591) whose metadata is the same as an earlier one's gets that client back: a hosted MCP
-- client (Claude's connectors, ChatGPT's) registers from its own few addresses once per person who connects, always
-- with the same name and redirect URIs. `metadata_hash` is the SHA-256 of that metadata, canonical
-- (services/oauth/clients.ts); rows registered before it, and clients from metadata documents, have none.
ALTER TABLE oauth_clients ADD COLUMN metadata_hash TEXT;
CREATE UNIQUE INDEX oauth_clients_by_metadata ON oauth_clients (metadata_hash) WHERE metadata_hash IS NOT NULL;
