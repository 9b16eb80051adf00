-- An API key's expiry, told a week before (src/app/key-expiry-notice.ts, the dashboard's daily run): when the maker
-- (or the organization's owners and admins) was told, once per expiry, and when the expiry was last set after the key
-- was made (NULL: at its making), since a key given a week or less from then is not told. A new expiry clears the
-- first. The run finds the keys through 0049's index of keys that expire (its range: the next seven days).
ALTER TABLE api_keys ADD COLUMN expiry_noticed_at TEXT;
ALTER TABLE api_keys ADD COLUMN expiry_set_at TEXT;
