-- The key that submitted a data job: its items count in that key's monthly limit and spend, though they run
-- as the job's own key. NULL for a job submitted from the dashboard (a person, no key).
ALTER TABLE data_jobs ADD COLUMN budget_key_id TEXT;
