-- A person who forgot their password sets a new one by a link sent to their address (app/password-reset.ts), and
-- a signed-in person changes theirs in Settings. One outstanding link per person: only the SHA-256 of its token is
-- kept, with the address it went to, and it is deleted when used, replaced or past its hour.
CREATE TABLE password_resets (
  token_hash  TEXT PRIMARY KEY,
  user_id     TEXT NOT NULL REFERENCES users (id),
  email       TEXT NOT NULL,
  expires_at  TEXT NOT NULL
);
CREATE INDEX password_resets_by_user ON password_resets (user_id);

-- When the password was last set, by a change or a reset (NULL: at sign-up). A browser's known-device cookie is
-- signed over it (app/auth/devices.ts), so a new password makes every cookie signed before it worthless.
ALTER TABLE users ADD COLUMN password_changed_at TEXT;
