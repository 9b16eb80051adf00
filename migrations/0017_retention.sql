-- A data job's items (inputs and answers) are kept 30 days after the job ends (JOB_RESULTS_KEPT_DAYS); then
-- they go, and results_pruned_at says when, so its results answer why they are gone. Its row stays.
ALTER TABLE data_jobs ADD COLUMN results_pruned_at TEXT;
CREATE INDEX data_jobs_results_to_prune ON data_jobs (finished_at) WHERE finished_at IS NOT NULL AND results_pruned_at IS NULL;

-- A scrape's change-tracking snapshot is kept 90 days after the URL was last scraped (SNAPSHOTS_KEPT_DAYS).
CREATE INDEX scrape_snapshots_by_age ON scrape_snapshots (scraped_at);
