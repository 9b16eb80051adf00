-- A person confirms their email address by a link sent to it before their organization's free trial starts
-- (the trial's money is real vendor calls, and an unconfirmed account costs only an address to make).
ALTER TABLE users ADD COLUMN email_verified_at TEXT;

-- One outstanding link per person: only the SHA-256 of its token is kept, and it is deleted when used.
CREATE TABLE email_verifications (
  token_hash  TEXT PRIMARY KEY,
  user_id     TEXT NOT NULL REFERENCES users (id),
  email       TEXT NOT NULL,
  expires_at  TEXT NOT NULL
);
CREATE INDEX email_verifications_by_user ON email_verifications (user_id);
