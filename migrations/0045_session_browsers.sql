-- What a person sees of each browser signed in to their account (Settings, app/signed-in-browsers.ts): the browser's
-- User-Agent as it signed in (at most 256 characters) and when the session was last used (written at most once an hour).
ALTER TABLE sessions ADD COLUMN user_agent TEXT;
ALTER TABLE sessions ADD COLUMN last_seen_at TEXT;
