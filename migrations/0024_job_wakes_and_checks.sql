-- The jobs that wait for money or for their submitting key's limit: a top-up or a plan change wakes an
-- organization's, a raised limit a key's (src/services/jobs/wake.ts), found by these rather than a scan,
-- the latest to start waiting first.
CREATE INDEX data_jobs_waiting_by_organization ON data_jobs (organization_id, waiting_since) WHERE status = 'waiting_for_credits';
CREATE INDEX data_jobs_waiting_by_key ON data_jobs (budget_key_id, waiting_since) WHERE status = 'waiting_for_credits';

-- The jobs not ended, which the nightly check looks over for runs the platform will not move on
-- (src/services/jobs/resume.ts, reviveStrandedJobs): the ended ones, nearly all of them, are not scanned.
CREATE INDEX data_jobs_unfinished ON data_jobs (created_at) WHERE status NOT IN ('succeeded', 'failed', 'cancelled');
