-- When an organization's owner made two-factor sign-in required of its members (app/members.ts): a member without it
-- is let in to Settings only, and an OAuth grant they gave stops working, until they turn it on. NULL: not required.
ALTER TABLE organizations ADD COLUMN two_factor_required_at TEXT;
