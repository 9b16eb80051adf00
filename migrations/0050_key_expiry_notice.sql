-- When the keys page's maker (or the organization's owners and admins) was told that an API key expires within
-- seven days: once per expiry, by the dashboard's daily run (services/key-expiry.ts). A new expiry clears it.
-- The run finds the keys through 0049's index of keys that expire (its range: the next seven days).
ALTER TABLE api_keys ADD COLUMN expiry_noticed_at TEXT;
