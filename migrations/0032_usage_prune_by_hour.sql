-- The workspaces whose usage rows have outlived their retention, found by their hourly totals' hour (the totals of
-- an hour go with its rows; services/usage-retention.ts). The daily prune visited every workspace instead, at two
-- statements each out of a run's 2,000: past about a thousand workspaces the same first thousand were visited
-- every day and the rest were never pruned. An hourly row is written once per workspace, hour and operation (each
-- call after the first updates its counts, which this index does not hold), so the index costs no write a call.
CREATE INDEX usage_hourly_by_hour ON usage_hourly (hour, workspace_id);
