-- Two-factor sign-in (app/two-factor.ts): a person's authenticator secret, sealed with KEY_ENCRYPTION_KEY (AES-GCM,
-- bound to the user id), set up first and in force once a code from the app confirms it (enabled_at). last_step is
-- the newest 30-second step a code was taken for: a code, once used, is refused, and so is any older one. setup_id
-- names the setup, then the confirmation or replacement that last wrote the recovery codes (writes are guarded on it).
CREATE TABLE two_factor (
  user_id        TEXT PRIMARY KEY REFERENCES users(id),
  secret_sealed  TEXT NOT NULL,
  setup_id       TEXT NOT NULL,
  created_at     TEXT NOT NULL,
  enabled_at     TEXT,
  last_step      INTEGER NOT NULL DEFAULT 0
);

-- One-time codes that stand in for the app (a lost phone): only their HMAC is kept (two-factor.ts), each spent once.
CREATE TABLE two_factor_recovery_codes (
  user_id    TEXT NOT NULL REFERENCES users(id),
  code_hash  TEXT NOT NULL,
  used_at    TEXT,
  PRIMARY KEY (user_id, code_hash)
);

-- A sign-in whose password was right and whose second factor is awaited: the browser holds the id (a cookie), D1 its
-- SHA-256. It is for the password as it was (a digest of its hash: a new password voids it), lasts ten minutes and
-- takes five wrong codes.
CREATE TABLE sign_in_challenges (
  id_hash          TEXT PRIMARY KEY,
  user_id          TEXT NOT NULL REFERENCES users(id),
  password_digest  TEXT NOT NULL,
  device           TEXT,
  expires_at       TEXT NOT NULL,
  failures         INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX sign_in_challenges_by_user ON sign_in_challenges (user_id);
