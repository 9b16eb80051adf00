-- When the nightly check (src/services/jobs/resume.ts, reviveStrandedJobs) last looked at a job not ended, NULL
-- for never. A night looks at the least recently looked at first, so with N jobs not ended each is looked at
-- within N / 1,000 nights, rather than at random with no bound.
ALTER TABLE data_jobs ADD COLUMN checked_at TEXT;
CREATE INDEX data_jobs_unfinished_by_check ON data_jobs (checked_at, created_at) WHERE status NOT IN ('succeeded', 'failed', 'cancelled');
