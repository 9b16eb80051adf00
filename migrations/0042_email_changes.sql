-- A person changes the address they sign in with (app/email-changes.ts): the change waits for the link sent to the
-- new address. One outstanding change per person; only the SHA-256 of its token is kept, with both addresses, and it
-- is deleted when used, replaced or past its day.
CREATE TABLE email_changes (
  token_hash  TEXT PRIMARY KEY,
  user_id     TEXT NOT NULL REFERENCES users (id),
  old_email   TEXT NOT NULL,
  new_email   TEXT NOT NULL,
  expires_at  TEXT NOT NULL
);
CREATE INDEX email_changes_by_user ON email_changes (user_id);
