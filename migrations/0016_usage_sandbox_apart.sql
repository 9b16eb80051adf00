-- Sandbox keys' calls (usage.sandbox = 1, issue 33) are shown apart from the live totals: the day and hour
-- buckets count them in sandbox_calls, never in calls, succeeded or cost_units, so /v1/usage's totals and
-- the dashboard's charts are the live calls alone while the same buckets still give the sandbox's count.
ALTER TABLE usage_daily ADD COLUMN sandbox_calls INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_hourly ADD COLUMN sandbox_calls INTEGER NOT NULL DEFAULT 0;

DROP TRIGGER usage_totals_on_insert;

-- A row counts once: INSERT OR IGNORE of a row already there (an outbox batch sent again) fires nothing.
CREATE TRIGGER usage_totals_on_insert AFTER INSERT ON usage
BEGIN
  INSERT INTO usage_daily (workspace_id, day, operation, calls, succeeded, cost_units, sandbox_calls)
  VALUES (NEW.workspace_id, substr(NEW.created_at, 1, 10), NEW.operation, NEW.sandbox = 0, NEW.sandbox = 0 AND NEW.status < 400, NEW.cost_units, NEW.sandbox <> 0)
  ON CONFLICT (workspace_id, day, operation) DO UPDATE SET
    calls = calls + excluded.calls, succeeded = succeeded + excluded.succeeded, cost_units = cost_units + excluded.cost_units,
    sandbox_calls = sandbox_calls + excluded.sandbox_calls;
  INSERT INTO usage_hourly (workspace_id, hour, operation, calls, succeeded, cost_units, sandbox_calls)
  VALUES (NEW.workspace_id, substr(NEW.created_at, 1, 13), NEW.operation, NEW.sandbox = 0, NEW.sandbox = 0 AND NEW.status < 400, NEW.cost_units, NEW.sandbox <> 0)
  ON CONFLICT (workspace_id, hour, operation) DO UPDATE SET
    calls = calls + excluded.calls, succeeded = succeeded + excluded.succeeded, cost_units = cost_units + excluded.cost_units,
    sandbox_calls = sandbox_calls + excluded.sandbox_calls;
END;

-- The sandbox rows recorded since 0013 move out of the live counts of their buckets.
UPDATE usage_daily SET calls = usage_daily.calls - s.n, succeeded = usage_daily.succeeded - s.ok, cost_units = usage_daily.cost_units - s.units, sandbox_calls = s.n
  FROM (SELECT workspace_id, substr(created_at, 1, 10) AS day, operation, COUNT(*) AS n, SUM(status < 400) AS ok, SUM(cost_units) AS units
          FROM usage WHERE sandbox <> 0 GROUP BY workspace_id, substr(created_at, 1, 10), operation) AS s
 WHERE usage_daily.workspace_id = s.workspace_id AND usage_daily.day = s.day AND usage_daily.operation = s.operation;

UPDATE usage_hourly SET calls = usage_hourly.calls - s.n, succeeded = usage_hourly.succeeded - s.ok, cost_units = usage_hourly.cost_units - s.units, sandbox_calls = s.n
  FROM (SELECT workspace_id, substr(created_at, 1, 13) AS hour, operation, COUNT(*) AS n, SUM(status < 400) AS ok, SUM(cost_units) AS units
          FROM usage WHERE sandbox <> 0 GROUP BY workspace_id, substr(created_at, 1, 13), operation) AS s
 WHERE usage_hourly.workspace_id = s.workspace_id AND usage_hourly.hour = s.hour AND usage_hourly.operation = s.operation;
