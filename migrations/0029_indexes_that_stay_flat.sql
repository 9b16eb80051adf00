-- Reads whose cost grew with rows that pile up, each given the index that walks only what it answers.
--
-- A workspace's keys of one scope, newest first (the keys page and API, the sandbox keys, the MCP page): every
-- data job and every agent's deploy mints a key, kept when revoked, so a workspace gathers thousands, and by
-- `api_keys_by_workspace` each list read and sorted all of them. The new index covers the list's WHERE and its
-- order; the old one is its prefix, so it goes.
CREATE INDEX api_keys_by_workspace_scope ON api_keys (workspace_id, scope, created_at, id);
DROP INDEX api_keys_by_workspace;

-- The items still to run of a workspace's jobs not yet ended, summed at every job submission
-- (services/jobs/store.ts, unfinishedItems): by `data_jobs_by_workspace` it read every job the workspace ever
-- ran. The statement names the same ended statuses as this index, as literals, so SQLite can use it.
CREATE INDEX data_jobs_unfinished_by_workspace ON data_jobs (workspace_id) WHERE status NOT IN ('succeeded', 'failed', 'cancelled');
