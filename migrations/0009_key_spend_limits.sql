-- A key's optional monthly spend limit, in units of 1/10,000 cent (NULL: no limit), and a version that
-- grows with every change, so a workspace gate keeps the newest limit whichever way it hears of it.
ALTER TABLE api_keys ADD COLUMN monthly_limit_units INTEGER;
ALTER TABLE api_keys ADD COLUMN limit_version INTEGER NOT NULL DEFAULT 0;
