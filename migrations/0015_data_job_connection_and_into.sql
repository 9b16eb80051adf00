-- Data jobs (issue 28): a job may run every item through one of the workspace's connections (issue 33:
-- the workspace's own vendor credentials, the plan's fee instead of the price), and may write each
-- success as a row of a table of a workspace database (`into`). NULL: neither.
ALTER TABLE data_jobs ADD COLUMN connection_id TEXT;
ALTER TABLE data_jobs ADD COLUMN into_database_id TEXT;
ALTER TABLE data_jobs ADD COLUMN into_table TEXT;
