-- When a data job began waiting for credits (NULL while it runs): it looks again less often the longer it has
-- waited, so a wait of days stays within its Workflow's steps.
ALTER TABLE data_jobs ADD COLUMN waiting_since TEXT;
