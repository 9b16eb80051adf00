-- When an account's deletion began to close an organization it was alone in (app/account-deletion.ts): before its
-- subscription is cancelled, so no invitation accepted meanwhile can leave a member in an organization whose
-- subscription was cancelled. An invitation is refused while it is recent (ten minutes: a deletion that failed and was
-- not asked again lets it go).
ALTER TABLE organizations ADD COLUMN closing_at TEXT;
